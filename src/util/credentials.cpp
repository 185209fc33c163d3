// without_credentials (credentials.hpp): one pass over the text, token by token, no look-back past
// the current token. The keys follow what carries secrets on kernel command lines
// (rd.iscsi.password, rd.iscsi.in.password, ...:
// https://man7.org/linux/man-pages/man7/dracut.cmdline.7.html).
#include "gpf/util/credentials.hpp"

#include <nlohmann/json.hpp>

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
  // "auth" covers auth=, oauth, authorization; the API-key spellings without a bare "key", which
  // would catch keymap= and the like
  static constexpr std::array<std::string_view, 10> k_words = {
      "password",   "passwd", "passphrase", "secret",  "token",
      "credential", "auth",   "apikey",     "api_key", "api-key"};
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
      if (i + 1 < token.size() && (token[i + 1] == '"' || token[i + 1] == '\'')) {
        // a quoted value ("..." or '...') may hold blanks: up to the closing quote (or the line's
        // end)
        const char quote = token[i + 1];
        const std::size_t open = begin + i + 1;
        std::size_t close = open + 1;
        while (close < text.size() && text[close] != quote && text[close] != '\n') {
          ++close;
        }
        out += quote;
        out.append(k_redacted);
        if (close < text.size() && text[close] == quote) {
          out += quote;
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
  if (auto at = token.find('@'); at != std::string_view::npos) {
    const std::size_t start = userinfo_start(token, at);
    if (start != std::string_view::npos) {
      // a password may hold '@' itself (user:pa@ss@host): the userinfo ends at the last '@'
      // before the path
      const std::size_t path = std::min(token.find('/', at), token.size());
      at = token.rfind('@', path - 1);
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

// Appends the JSON string literal text[open, close] (both quotes included) with its decoded value
// scrubbed and encoded again; false when it is not a valid literal (nothing appended).
bool scrub_json_string(std::string_view literal, std::string& out) {
  std::string value;
  try {
    value = nlohmann::json::parse(literal).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  out += nlohmann::json(without_credentials(value))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return true;
}

} // namespace

std::string without_credentials_json(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('"', i);
    if (open == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, open - i));
    std::size_t close = open + 1;
    while (close < text.size() && text[close] != '"') {
      close += text[close] == '\\' ? 2 : 1;
    }
    if (close >= text.size()) {
      out.append(without_credentials(text.substr(open))); // an unterminated string: as text
      break;
    }
    const std::string_view literal = text.substr(open, close - open + 1);
    if (!scrub_json_string(literal, out)) {
      out.append(without_credentials(literal));
    }
    i = close + 1;
  }
  return out;
}

bool names_a_secret_variable(std::string_view name) {
  std::string upper(name);
  for (auto& ch : upper) {
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  for (const std::string_view word :
       {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}) {
    if (upper.find(word) != std::string::npos) {
      return true;
    }
  }
  return false;
}

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
