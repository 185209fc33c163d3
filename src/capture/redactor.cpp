// The redactor of `snapshot --redact`: a hand-written scanner. Every matcher looks at most a few
// dozen bytes ahead of its start, and the scan never goes back, so a text of n bytes costs O(n)
// whatever its lines look like (a regular-expression engine recursed per character and crashed on
// a long token).
#include "gpf/capture/redactor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

namespace gpf {
namespace {

using Span = std::pair<std::size_t, std::size_t>; // [first, second)

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alnum(char c) {
  return is_alpha(c) || is_digit(c);
}
bool is_word(char c) {
  return is_alnum(c) || c == '_';
}
// Characters of a host or user name token ("node17.example.com", "first.last", "gpu-01").
bool is_name_char(char c) {
  return is_word(c) || c == '.' || c == '-';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int hex_value(char c) {
  if (is_digit(c)) {
    return c - '0';
  }
  return (c | 0x20) - 'a' + 10;
}
char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c;
}
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}
char at(std::string_view s, std::size_t i) {
  return i < s.size() ? s[i] : '\0';
}
bool starts_with_chars(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
std::string to_lower_ascii(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    c = lower(c);
  }
  return out;
}

constexpr std::size_t k_max_name = 253; // the longest DNS name; longer runs are no names

// Length of a dotted-quad IPv4 address at s[i] (no leading zeros, octets up to 255), else 0.
// Leading zeros are refused so that versions such as a VBIOS "96.00.89.00.01" stay.
std::size_t ipv4_at(std::string_view s, std::size_t i) {
  std::size_t p = i;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (at(s, p) != '.') {
        return 0;
      }
      ++p;
    }
    std::size_t digits = 0;
    unsigned value = 0;
    while (digits < 4 && is_digit(at(s, p))) {
      value = value * 10 + static_cast<unsigned>(s[p] - '0');
      ++p;
      ++digits;
    }
    if (digits == 0 || digits > 3 || value > 255 || (digits > 1 && s[p - digits] == '0')) {
      return 0;
    }
  }
  // "1.2.3.4.5" or "1.2.3.4a" is something else, and so is a version with a suffix
  // ("5.15.153.1-microsoft-standard-WSL2", "1.2.3.4+deb12")
  const char next = at(s, p);
  if (is_word(next) || (next == '.' && is_digit(at(s, p + 1))) ||
      ((next == '-' || next == '+' || next == '~') && is_alpha(at(s, p + 1)))) {
    return 0;
  }
  return p - i;
}

// Length of an IPv6 address at s[i] (eight groups, or fewer with one "::", an IPv4 tail allowed),
// else 0. Three groups without "::" (a time "02:00:00", a PCI address "0000:3b:00.0") are not one.
std::size_t ipv6_at(std::string_view s, std::size_t i) {
  std::size_t p = i;
  int groups = 0;
  bool compressed = false;
  if (at(s, p) == ':') {
    if (at(s, p + 1) != ':') {
      return 0;
    }
    compressed = true;
    p += 2;
  }
  while (groups < 8) {
    std::size_t h = 0;
    while (h < 5 && is_hex(at(s, p + h))) {
      ++h;
    }
    if (h == 0) {
      break;
    }
    if (h > 4) {
      return 0;
    }
    if (at(s, p + h) == '.') { // an IPv4 tail takes two groups and ends the address
      const std::size_t v4 = ipv4_at(s, p);
      if (v4 == 0 || groups > 6) {
        return 0;
      }
      groups += 2;
      p += v4;
      break;
    }
    ++groups;
    p += h;
    if (at(s, p) != ':') {
      break;
    }
    if (at(s, p + 1) == ':') {
      if (compressed) {
        return 0;
      }
      compressed = true;
      p += 2;
    } else if (is_hex(at(s, p + 1))) {
      ++p;
    } else {
      break; // a ':' after the address ("fe80::1: link up")
    }
  }
  if (groups == 0 || (compressed ? groups > 7 : groups != 8)) {
    return 0;
  }
  // "a::b", "dead::beef": words joined by "::" in program text, not addresses anyone uses
  if (std::none_of(s.begin() + static_cast<std::ptrdiff_t>(i),
                   s.begin() + static_cast<std::ptrdiff_t>(p), is_digit)) {
    return 0;
  }
  if (is_word(at(s, p)) || (at(s, p) == '.' && is_digit(at(s, p + 1)))) {
    return 0;
  }
  return p - i;
}

// Length of a hardware address at s[i]: six or more two-digit hex groups joined by one ':' or '-'
// throughout (Ethernet has 6, InfiniBand 20), else 0.
std::size_t mac_at(std::string_view s, std::size_t i) {
  std::size_t p = i;
  int groups = 0;
  char sep = 0;
  while (groups < 32 && is_hex(at(s, p)) && is_hex(at(s, p + 1))) {
    ++groups;
    p += 2;
    const char c = at(s, p);
    if ((c == ':' || c == '-') && (sep == 0 || c == sep) && is_hex(at(s, p + 1)) &&
        is_hex(at(s, p + 2))) {
      sep = c;
      ++p;
    } else {
      break;
    }
  }
  if (groups < 6 || is_word(at(s, p))) {
    return 0;
  }
  return p - i;
}

// The host field of a syslog line ("Nov 30 02:00:00 HOST kernel: ...") or of journalctl's ISO
// form ("2026-11-30T02:00:00+0000 HOST kernel: ..."), else nullopt.
std::optional<Span> syslog_host(std::string_view line) {
  std::size_t p = 0;
  const auto d = [&](std::size_t k) { return is_digit(at(line, k)); };
  if (line.size() >= 16 && line[0] >= 'A' && line[0] <= 'Z' && line[1] >= 'a' && line[1] <= 'z' &&
      line[2] >= 'a' && line[2] <= 'z' && line[3] == ' ' && (line[4] == ' ' || d(4)) && d(5) &&
      line[6] == ' ' && d(7) && d(8) && line[9] == ':' && d(10) && d(11) && line[12] == ':' &&
      d(13) && d(14)) {
    p = 15;
    if (at(line, p) == '.') {
      ++p;
      for (int k = 0; k < 9 && d(p); ++k) {
        ++p;
      }
    }
  } else if (line.size() >= 12 && d(0) && d(1) && d(2) && d(3) && line[4] == '-' && d(5) && d(6) &&
             line[7] == '-' && d(8) && d(9) && line[10] == 'T') {
    p = 11;
    while (p < line.size() && p < 64 && line[p] != ' ') {
      ++p;
    }
  } else {
    return std::nullopt;
  }
  if (at(line, p) != ' ') {
    return std::nullopt;
  }
  const std::size_t host = ++p;
  while (p < line.size() && p - host <= k_max_name && line[p] != ' ' && line[p] != '\t') {
    ++p;
  }
  if (p == host || p - host > k_max_name || at(line, p) != ' ') {
    return std::nullopt;
  }
  const Span span{host, p};
  // the identifier: "kernel:", "systemd[1]:"
  const std::size_t ident = ++p;
  while (p < line.size() && p - ident < 64 && line[p] != ' ') {
    ++p;
  }
  if (p - ident < 2 || line[p - 1] != ':') {
    return std::nullopt;
  }
  return span;
}

// The user name of a passwd line ("alice:x:1000:1000:..."), else nullopt.
std::optional<Span> passwd_user(std::string_view line) {
  std::size_t p = 0;
  while (p < line.size() && p <= 64 && is_name_char(line[p])) {
    ++p;
  }
  if (p == 0 || p > 64 || at(line, p) != ':') {
    return std::nullopt;
  }
  const Span span{0, p};
  ++p;
  for (std::size_t k = 0; k <= 128 && at(line, p) != ':'; ++k, ++p) {
    if (p >= line.size() || line[p] == ' ') {
      return std::nullopt;
    }
  }
  for (int field = 0; field < 2; ++field) {
    if (at(line, p) != ':') {
      return std::nullopt;
    }
    ++p;
    std::size_t digits = 0;
    while (digits <= 10 && is_digit(at(line, p))) {
      ++p;
      ++digits;
    }
    if (digits == 0 || digits > 10) {
      return std::nullopt;
    }
  }
  return at(line, p) == ':' ? std::optional(span) : std::nullopt;
}

// The server of a network filesystem's line in proc/mounts ("nas01:/export /home nfs4 rw 0 0",
// "//nas01/share /mnt cifs rw 0 0"), else nullopt. The type must be a network one, so that
// "https://..." or "C:/..." elsewhere is not taken for a server.
std::optional<Span> mount_server(std::string_view line) {
  std::size_t p = starts_with_chars(line, "//") ? 2 : 0;
  const std::size_t first = p;
  while (p < line.size() && p - first <= k_max_name && is_name_char(line[p])) {
    ++p;
  }
  if (p == first || p - first > k_max_name) {
    return std::nullopt;
  }
  const bool server =
      first == 2 ? at(line, p) == '/' : at(line, p) == ':' && at(line, p + 1) == '/';
  if (!server) {
    return std::nullopt;
  }
  // the third field: the filesystem type
  const std::size_t source_end = line.find(' ', p);
  const std::size_t point_end =
      source_end == std::string_view::npos ? source_end : line.find(' ', source_end + 1);
  if (point_end == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view type =
      line.substr(point_end + 1, line.find(' ', point_end + 1) - (point_end + 1));
  static constexpr std::array<std::string_view, 9> k_network = {
      "nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "lustre", "fuse.sshfs"};
  if (std::find(k_network.begin(), k_network.end(), type) == k_network.end()) {
    return std::nullopt;
  }
  return Span{first, p};
}

// A run of name characters without the '.' or '-' that ends a sentence or a list.
std::size_t name_end(std::string_view s, std::size_t i) {
  std::size_t j = i;
  while (j < s.size() && is_name_char(s[j])) {
    ++j;
  }
  while (j > i && (s[j - 1] == '.' || s[j - 1] == '-')) {
    --j;
  }
  return j;
}

// After the word "serial" (any case): separators, "number"/"no"/"is", then the value (letters,
// digits, '-', '_', with a digit). Returns the value's span, else nullopt.
std::optional<Span> serial_value(std::string_view s, std::size_t word_end) {
  std::size_t p = word_end;
  const std::size_t limit = word_end + 48;
  bool separated = false;
  while (p < s.size() && p < limit) {
    const char c = s[p];
    if (c == ' ' || c == '\t' || c == '"' || c == '\'' || c == ':' || c == '=' || c == '#' ||
        c == '.') {
      ++p;
      separated = true;
      continue;
    }
    std::size_t w = p;
    while (w < s.size() && w - p < 8 && is_alpha(s[w])) {
      ++w;
    }
    const std::string_view word = s.substr(p, w - p);
    if (separated && !is_word(at(s, w)) &&
        (iequals(word, "number") || iequals(word, "no") || iequals(word, "num") ||
         iequals(word, "nr") || iequals(word, "is"))) {
      p = w;
      continue;
    }
    break;
  }
  if (!separated) {
    return std::nullopt;
  }
  std::size_t q = p;
  bool digit = false;
  while (q < s.size() && q - p <= 128 && (is_word(s[q]) || s[q] == '-')) {
    digit = digit || is_digit(s[q]);
    ++q;
  }
  if (q == p || q - p > 128 || !digit) {
    return std::nullopt;
  }
  return Span{p, q};
}

// Accounts every Linux system has: not personal, and words the inputs use otherwise.
bool is_system_account(std::string_view name) {
  static constexpr std::array<std::string_view, 18> k_system = {
      "root", "nobody", "daemon", "bin",      "sys",  "sync",       "adm",  "games",  "man",
      "lp",   "mail",   "news",   "www-data", "sshd", "messagebus", "_apt", "syslog", "home"};
  return std::find(k_system.begin(), k_system.end(), name) != k_system.end();
}

// Whether name can be a host or user name worth replacing: 2 to 253 name characters with a
// letter, and not an address (addresses have their own tokens).
bool is_name(std::string_view name) {
  if (name.size() < 2 || name.size() > k_max_name) {
    return false;
  }
  bool letter = false;
  for (const char c : name) {
    if (!is_name_char(c)) {
      return false;
    }
    letter = letter || is_alpha(c);
  }
  return letter && ipv4_at(name, 0) != name.size() && ipv6_at(name, 0) != name.size();
}

bool is_distinctive(std::string_view name) {
  return std::any_of(name.begin(), name.end(),
                     [](char c) { return is_digit(c) || c == '.' || c == '-' || c == '_'; });
}

std::string_view trim_blanks(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && blank(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

} // namespace

std::string HexTrie::map(std::string_view digits) {
  std::string out;
  out.reserve(digits.size());
  std::uint32_t node = 0;
  for (const char c : digits) {
    const auto key = (static_cast<std::uint64_t>(node) << 4) | static_cast<unsigned>(hex_value(c));
    auto it = m_child.find(key);
    if (it == m_child.end()) {
      // at most 16 distinct digits follow one prefix, so a rank always fits in one hex digit
      const auto child = static_cast<std::uint32_t>(m_children.size());
      m_rank.push_back(m_children[node]++);
      m_children.push_back(0);
      it = m_child.emplace(key, child).first;
    }
    node = it->second;
    out += "0123456789abcdef"[m_rank[node]];
  }
  return out;
}

Redactor::Redactor(const std::vector<std::string>& hostnames) {
  for (const auto& name : hostnames) {
    learn_host(name);
  }
}

void Redactor::learn_host(std::string_view name) {
  if (!is_name(name)) {
    return;
  }
  m_names.try_emplace(std::string(name), Name{Kind::host, is_distinctive(name)});
  if (const auto dot = name.find('.'); dot != std::string_view::npos) {
    learn_host(name.substr(0, dot)); // "node17" of "node17.example.com"
  }
}

void Redactor::learn_user(std::string_view name) {
  if (!is_name(name) || is_system_account(name)) {
    return;
  }
  m_names.try_emplace(std::string(name), Name{Kind::user, is_distinctive(name)});
}

const Redactor::Name* Redactor::known(std::string_view name) const {
  if (name.size() < 2 || name.size() > k_max_name) {
    return nullptr;
  }
  const auto it = m_names.find(std::string(name));
  return it == m_names.end() ? nullptr : &it->second;
}

const std::string& Redactor::token(std::string_view kind, std::string_view value) {
  std::string key;
  key.reserve(kind.size() + 1 + value.size());
  key.append(kind).append(1, '\x1f').append(value);
  auto it = m_tokens.find(key);
  if (it == m_tokens.end()) {
    it = m_tokens.emplace(std::move(key), fmt::format("{}-{}", kind, ++m_counts[std::string(kind)]))
             .first;
  }
  return it->second;
}

void Redactor::learn(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    const auto end = nl == std::string_view::npos ? text.size() : nl;
    learn_line(text.substr(start, end - start));
    start = end + 1;
  }
}

void Redactor::learn_line(std::string_view line) {
  if (const auto host = syslog_host(line)) {
    learn_host(line.substr(host->first, host->second - host->first));
  }
  if (const auto user = passwd_user(line)) {
    learn_user(line.substr(user->first, user->second - user->first));
  }
  if (const auto server = mount_server(line)) {
    learn_host(line.substr(server->first, server->second - server->first));
  }
  constexpr std::string_view k_home = "/home/";
  for (auto p = line.find(k_home); p != std::string_view::npos; p = line.find(k_home, p + 1)) {
    const std::size_t first = p + k_home.size();
    learn_user(line.substr(first, name_end(line, first) - first));
  }
}

std::string Redactor::apply(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    const auto end = nl == std::string_view::npos ? text.size() : nl;
    apply_line(text.substr(start, end - start), out);
    if (nl != std::string_view::npos) {
      out += '\n';
    }
    start = end + 1;
  }
  return out;
}

void Redactor::apply_line(std::string_view line, std::string& out) {
  // A line holding only a name (the hostname file) is that name.
  if (const auto whole = trim_blanks(line); known(whole) != nullptr) {
    const auto lead = static_cast<std::size_t>(whole.data() - line.data());
    const Name& name = *known(whole);
    out.append(line.substr(0, lead));
    out += token(name.kind == Kind::host ? "host" : "user", whole);
    out.append(line.substr(lead + whole.size()));
    return;
  }
  // Names standing where a name stands: replaced even when they are ordinary words.
  std::optional<Span> forced;
  std::string_view forced_kind;
  if ((forced = syslog_host(line))) {
    forced_kind = "host";
  } else if ((forced = passwd_user(line))) {
    forced_kind = "user";
  }
  if (forced) {
    const auto value = line.substr(forced->first, forced->second - forced->first);
    if (ipv4_at(value, 0) == value.size() || ipv6_at(value, 0) == value.size()) {
      forced_kind = "ip";
    } else if (!is_name(value) || (forced_kind == "user" && is_system_account(value))) {
      forced.reset(); // "-", "1", "root": not a name worth a token
    } else if (forced_kind == "host") {
      learn_host(value);
    } else {
      learn_user(value);
    }
  }

  const std::size_t n = line.size();
  std::size_t i = 0;
  while (i < n) {
    if (forced && i == forced->first) {
      out += token(forced_kind, line.substr(forced->first, forced->second - forced->first));
      i = forced->second;
      continue;
    }
    // the scan never runs into the forced span: matchers see the line up to it
    const std::string_view seg = forced && i < forced->first ? line.substr(0, forced->first) : line;
    const char c = seg[i];
    const char prev = i > 0 ? seg[i - 1] : ' ';
    const bool boundary = !is_word(prev);

    if (boundary && (c == 'G' || c == 'M') && i + 4 < seg.size() && seg[i + 3] == '-') {
      // GPU-<hex> / MIG-<hex> / MIG-GPU-<hex>: a prefix-keeping pseudonym of the same shape
      std::size_t p = i + 4;
      HexTrie* trie = nullptr;
      const auto prefix = seg.substr(i, 4);
      if (prefix == "GPU-") {
        trie = &m_gpu_uuids;
      } else if (prefix == "MIG-") {
        trie = &m_mig_uuids;
        if (seg.substr(p, 4) == "GPU-") { // MIG-<GPU-UUID>/<gi>/<ci> names its GPU
          trie = &m_gpu_uuids;
          p += 4;
        }
      }
      if (trie != nullptr) {
        const std::size_t first = p;
        std::string digits;
        while (p < seg.size() && digits.size() <= 32 &&
               (is_hex(seg[p]) || (seg[p] == '-' && p > first && seg[p - 1] != '-'))) {
          if (seg[p] != '-') {
            digits += seg[p];
          }
          ++p;
        }
        while (p > first && seg[p - 1] == '-') {
          --p;
        }
        if (!digits.empty() && digits.size() <= 32 && !is_word(at(seg, p))) {
          const std::string mapped = trie->map(digits);
          out.append(seg.substr(i, first - i));
          std::size_t k = 0;
          for (std::size_t q = first; q < p; ++q) {
            out += seg[q] == '-' ? '-' : mapped[k++];
          }
          i = p;
          continue;
        }
      }
    }
    // Colon-hex addresses start after a separator, not inside a longer colon-hex run
    // ("x:00:1b:...", the tail of a PCI address): after ':' only when what precedes that ':' is no
    // hex digit.
    const bool colon_start = prev != ':' || i < 2 || (!is_hex(seg[i - 2]) && seg[i - 2] != ':');
    if (boundary && prev != '.' && prev != '-' && colon_start && (is_hex(c) || c == ':')) {
      if (const std::size_t len = mac_at(seg, i)) {
        out += token("mac", to_lower_ascii(seg.substr(i, len)));
        i += len;
        continue;
      }
      if (const std::size_t len = ipv6_at(seg, i)) {
        out += token("ip", to_lower_ascii(seg.substr(i, len)));
        i += len;
        continue;
      }
    }
    if (boundary && prev != '.' && is_digit(c)) {
      if (const std::size_t len = ipv4_at(seg, i)) {
        out += token("ip", seg.substr(i, len));
        i += len;
        continue;
      }
    }
    if (!is_word(c)) {
      out += c;
      ++i;
      continue;
    }
    // A whole name token: only where a run of name characters starts.
    if (!is_name_char(prev) || i == 0) {
      const std::size_t j = name_end(seg, i);
      const auto name = seg.substr(i, j - i);
      const bool home = i >= 6 && seg.substr(i - 6, 6) == "/home/";
      if (home && known(name) == nullptr) {
        learn_user(name);
      }
      if (const Name* found = known(name)) {
        const bool positional = home || prev == '@' ||
                                (i >= 2 && seg[i - 1] == '/' && seg[i - 2] == '/') ||
                                (at(seg, j) == ':' && at(seg, j + 1) == '/');
        if (found->distinctive || positional) {
          out += token(found->kind == Kind::host ? "host" : "user", name);
          i = j;
          continue;
        }
      } else if (const auto dot = name.find('.'); dot != std::string_view::npos) {
        // "node17.cluster.local" when only "node17" is known: its first label
        if (const Name* label = known(name.substr(0, dot)); label && label->distinctive) {
          out += token(label->kind == Kind::host ? "host" : "user", name.substr(0, dot));
          i += dot;
          continue;
        }
      }
    }
    std::size_t j = i;
    while (j < seg.size() && is_word(seg[j])) {
      ++j;
    }
    const auto word = seg.substr(i, j - i);
    out.append(word);
    i = j;
    if (iequals(word, "SerialNumber") && at(seg, j) == ':') {
      // the USB core's "usb 1-2: SerialNumber: <string>": the whole rest of the line, whatever
      // its characters (a device's serial need not hold a digit)
      const auto value = trim_blanks(seg.substr(j + 1));
      if (!value.empty()) {
        const auto first = static_cast<std::size_t>(value.data() - seg.data());
        out.append(seg.substr(j, first - j));
        out += token("serial", value);
        i = first + value.size();
        continue;
      }
    }
    if (iequals(word, "serial")) {
      if (const auto value = serial_value(seg, j)) {
        out.append(seg.substr(j, value->first - j));
        out += token("serial", seg.substr(value->first, value->second - value->first));
        i = value->second;
      }
    }
  }
}

} // namespace gpf
