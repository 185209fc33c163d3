// without_credentials (credentials.hpp): one pass over the text, token by token, no look-back past
// the current token. The keys follow what carries secrets on kernel command lines
// (rd.iscsi.password, rd.iscsi.in.password, ...:
// https://man7.org/linux/man-pages/man7/dracut.cmdline.7.html).
#include "gpf/util/credentials.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace gpf {
namespace {

constexpr std::string_view k_redacted = "REDACTED";

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool secret_key(std::string_view key) {
  static constexpr std::array<std::string_view, 6> k_words = {"password", "passwd", "passphrase",
                                                              "secret",   "token",  "credential"};
  if (key.empty() || key.size() > 256) {
    return false;
  }
  std::string lower(key);
  for (auto& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const auto w : k_words) {
    if (lower.find(w) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Where the userinfo of token (a '@' at at) starts, or npos when it is not one.
std::size_t userinfo_start(std::string_view token, std::size_t at) {
  const std::string_view before = token.substr(0, at);
  if (const auto scheme = before.rfind("://"); scheme != std::string_view::npos) {
    const std::size_t start = scheme + 3;
    return before.find('/', start) == std::string_view::npos ? start : std::string_view::npos;
  }
  // "scheme:" at the token's start or after its last '=' before the '@'
  const auto eq = before.rfind('=');
  std::size_t p = eq == std::string_view::npos ? 0 : eq + 1;
  const std::size_t word = p;
  while (p < before.size() && is_alpha(before[p])) {
    ++p;
  }
  if (p == word || p >= before.size() || before[p] != ':' ||
      before.find('/', p) != std::string_view::npos) {
    return std::string_view::npos;
  }
  return p + 1;
}

// Appends the token text[begin, end) with its credentials replaced; next is where the scan goes
// on (past end when a quoted value ran over blanks).
void scrub_token(std::string_view text, std::size_t begin, std::size_t end, std::string& out,
                 std::size_t& next) {
  const std::string_view token = text.substr(begin, end - begin);
  next = end;
  // key=value with a secret key
  std::size_t key_start = 0;
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == ',') {
      key_start = i + 1;
      continue;
    }
    if (token[i] != '=') {
      continue;
    }
    if (secret_key(token.substr(key_start, i - key_start))) {
      out.append(token.substr(0, i + 1));
      if (i + 1 < token.size() && token[i + 1] == '"') {
        // a quoted value may hold blanks: up to the closing quote (or the line's end)
        const std::size_t open = begin + i + 1;
        std::size_t close = open + 1;
        while (close < text.size() && text[close] != '"' && text[close] != '\n') {
          ++close;
        }
        out += '"';
        out.append(k_redacted);
        if (close < text.size() && text[close] == '"') {
          out += '"';
          ++close;
        }
        next = std::max(end, close);
      } else {
        out.append(k_redacted);
      }
      return;
    }
    key_start = i + 1;
  }
  // user:password@ in a URL or a scheme:user:password@ target
  if (const auto at = token.find('@'); at != std::string_view::npos) {
    const std::size_t start = userinfo_start(token, at);
    if (start != std::string_view::npos) {
      const auto colon = token.find(':', start);
      if (colon != std::string_view::npos && colon < at && colon + 1 < at) {
        out.append(token.substr(0, colon + 1));
        out.append(k_redacted);
        out.append(token.substr(at));
        return;
      }
    }
  }
  out.append(token);
}

} // namespace

std::string without_credentials(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_space(text[i])) {
      out += text[i++];
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !is_space(text[end])) {
      ++end;
    }
    std::size_t next = end;
    scrub_token(text, i, end, out, next);
    i = next;
  }
  return out;
}

} // namespace gpf
