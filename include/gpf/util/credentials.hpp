#pragma once
// Credentials in kernel command lines and logs, removed wherever the checker keeps or shows such
// text (the snapshot's proc/cmdline and dmesg.txt, the IOMMU probe's cmdline fact), with or
// without --redact: a report or snapshot is shared, a password never should be.
#include <string>
#include <string_view>

namespace gpf {

// Replaces with REDACTED, in every whitespace-separated token: the value of each key=value whose
// key contains password, passwd, passphrase, secret, token or credential (any case; the key runs
// from the token's start or the previous '=' or ','; a quoted value to its closing quote); and the
// password of a userinfo "user:password@": after "://", or after "scheme:" at the token's start or
// after its '=' (dracut's netroot=iscsi:user:pass@server). Linear; everything else byte for byte.
std::string without_credentials(std::string_view text);

} // namespace gpf
