#pragma once
// Credentials in kernel command lines and logs, removed wherever the checker keeps or shows such
// text (the snapshot's proc/cmdline and dmesg.txt, the IOMMU probe's cmdline fact), with or
// without --redact: a report or snapshot is shared, a password never should be.
#include <string>
#include <string_view>

namespace gpf {

// Replaces with REDACTED, in every whitespace-separated token: the value of each key=value whose
// key contains password, passwd, passphrase, secret, token, credential, auth, apikey, api_key or
// api-key (any case; the key runs from the token's start or the previous '=' or ','; a value quoted
// with " or ' to its closing quote); and the password of a userinfo "user:password@" (to the last
// '@' before the path: a password may hold '@'): after "://", or after "scheme:" at the token's
// start or after its '=' (dracut's netroot=iscsi:user:pass@server). Linear; everything else byte
// for byte.
std::string without_credentials(std::string_view text);

// The same inside every string literal of a JSON text (each decoded, scrubbed and encoded again),
// so that a JSON document stays valid JSON; text outside string literals is kept byte for byte. A
// literal that is not valid JSON is scrubbed as plain text. Linear.
std::string without_credentials_json(std::string_view text);

// Whether an environment variable's name says that its value is a secret (KEY, TOKEN, SECRET,
// PASSWORD, PASSWD, CREDENTIAL, in any case).
bool names_a_secret_variable(std::string_view name);

} // namespace gpf
