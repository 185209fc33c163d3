#pragma once
// `snapshot --redact`: replaces what identifies a site or a person in the text a snapshot keeps,
// consistently, so that `check --root` on the redacted snapshot still finds the same things on the
// same GPUs (docs/snapshot-format.md lists what is and is not replaced). One linear scan per text,
// with a bounded look-ahead at each position: no regular expressions, any line length.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gpf {

// Maps hex strings to hex pseudonyms of the same length that keep every prefix relation: two inputs
// share their first k digits exactly when their pseudonyms do. CUDA_VISIBLE_DEVICES accepts a UUID
// prefix, so a prefix and the full UUID it names must still meet after redaction. Case-insensitive.
class HexTrie {
public:
  // digits: hex digits only (the caller strips dashes). Returns lowercase hex, same length.
  std::string map(std::string_view digits);

private:
  std::unordered_map<std::uint64_t, std::uint32_t> m_child; // (node << 4 | digit) -> child node
  std::vector<std::uint8_t> m_children{0};                  // per node: children so far
  std::vector<std::uint8_t> m_rank{0};                      // per node: its rank at its parent
};

// Replaces, in text:
//   host names: learned ones, a syslog/journal line's host field, a network filesystem's server
//     -> host-N; user names: learned ones, /home/<user>, a passwd line's first field -> user-N.
//     A name is replaced as a whole token only (a run of letters, digits, '.', '-', '_'), and a
//     name that is an ordinary word (no digit, '.', '-' or '_': "nouveau", "vm") only where it
//     stands as a name (those positions, "@name", "//name", "name:/", a line holding only it),
//     since the same word elsewhere is vocabulary the checks read;
//   IPv4 and IPv6 addresses -> ip-N; MAC and other colon-hex hardware addresses -> mac-N;
//   the value after "serial" / "serial number" (containing a digit), the rest of a
//     "SerialNumber:" line (the USB core's) -> serial-N;
//   GPU-<hex> and MIG-<hex> UUIDs (and their prefixes) -> the same prefix with a HexTrie pseudonym,
//     which the UUID parsers still accept and which still names the same GPU.
// The same value always gets the same token in one Redactor. Everything else is kept byte for byte.
class Redactor {
public:
  Redactor() = default;
  // Learns each of hostnames as a host name (and the first label of a dotted one).
  explicit Redactor(const std::vector<std::string>& hostnames);

  void learn_host(std::string_view name);
  void learn_user(std::string_view name);
  // Learns the names text shows in name positions (see above), so that later apply() calls
  // replace them wherever they stand as whole tokens. Call it on every input before the first
  // apply() for one snapshot so that no file keeps a name another file reveals later.
  void learn(std::string_view text);
  std::string apply(std::string_view text);

private:
  enum class Kind { host, user };
  struct Name {
    Kind kind;
    bool distinctive; // replaced wherever it is a whole token, not only in name positions
  };
  void learn_line(std::string_view line);
  void apply_line(std::string_view line, std::string& out);
  const Name* known(std::string_view name) const;
  const std::string& token(std::string_view kind, std::string_view value);

  std::unordered_map<std::string, Name> m_names;
  std::unordered_map<std::string, std::string> m_tokens; // kind '\x1f' value -> token
  std::unordered_map<std::string, unsigned> m_counts;    // kind -> tokens handed out
  HexTrie m_gpu_uuids;
  HexTrie m_mig_uuids;
};

} // namespace gpf
