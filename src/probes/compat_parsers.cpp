// Pure parsers of the compat probe. The ld.so.cache layout follows glibc's
// sysdeps/generic/dl-cache.h (facts, not code: the magic strings, the header fields, the entry
// sizes); nothing here trusts a count or an offset from the file before checking it against the
// data.
#include "gpf/probes/compat_parsers.hpp"
#include "gpf/util/json_value.hpp"

#include "gpf/util/json_read.hpp"
#include "gpf/util/text.hpp"
#include "gpf/util/version.hpp"

#include <nlohmann/json.hpp>

#include <cstring>

namespace gpf {
namespace {

constexpr std::string_view k_old_magic = "ld.so-1.7.0";          // followed by one pad byte
constexpr std::string_view k_new_magic = "glibc-ld.so.cache1.1"; // magic + version
constexpr std::size_t k_old_header = 16;                         // magic[11] + pad, uint32 nlibs
constexpr std::size_t k_old_entry = 12; // int32 flags, uint32 key, uint32 value
constexpr std::size_t k_new_header =
    48; // magic+version[20], nlibs, len_strings, flags+pad[4], extension_offset, unused[3]
constexpr std::size_t k_new_entry = 24; // flags, key, value, osversion, uint64 hwcap
constexpr std::uint8_t k_big_endian =
    3; // cache_file_new.flags: 2 little-endian, 3 big-endian (glibc 2.33+)
constexpr std::uint64_t k_max_entries = 1u << 20;

template <class T> T load(std::string_view data, std::size_t offset) {
  T value{};
  std::memcpy(&value, data.data() + offset, sizeof(T));
  return value;
}

constexpr std::size_t k_max_string = 4096; // PATH_MAX: no soname or path is longer

// A NUL-terminated string at base+offset inside data (a view of it), or an Error.
Result<std::string_view> string_at(std::string_view data, std::size_t base, std::uint64_t offset) {
  if (base > data.size() || offset >= data.size() - base) {
    return Error{"string offset out of bounds"};
  }
  const auto start = base + static_cast<std::size_t>(offset);
  const auto window = data.substr(start, k_max_string + 1);
  const auto end = window.find('\0');
  if (end == std::string_view::npos) {
    return Error{window.size() > k_max_string
                     ? "a string longer than " + std::to_string(k_max_string) + " bytes"
                     : std::string("unterminated string")};
  }
  return window.substr(0, end);
}

Result<LdCache> parse_new(std::string_view data, std::size_t base, std::string format) {
  if (data.size() - base < k_new_header) {
    return Error{"truncated header"};
  }
  const auto nlibs = load<std::uint32_t>(data, base + 20);
  const auto flags = load<std::uint8_t>(data, base + 28);
  if (flags == k_big_endian) {
    return Error{"big-endian cache (from another machine) is not supported"};
  }
  if (nlibs > k_max_entries || static_cast<std::uint64_t>(nlibs) * k_new_entry >
                                   static_cast<std::uint64_t>(data.size() - base - k_new_header)) {
    return Error{"entry count " + std::to_string(nlibs) + " does not fit in the file"};
  }
  LdCache cache{std::move(format), {}};
  cache.entries.reserve(nlibs);
  for (std::size_t i = 0; i < nlibs; ++i) {
    const std::size_t at = base + k_new_header + i * k_new_entry;
    auto name = string_at(data, base, load<std::uint32_t>(data, at + 4));
    auto path = string_at(data, base, load<std::uint32_t>(data, at + 8));
    if (!name || !path) {
      return Error{"entry " + std::to_string(i) + ": " +
                   (!name ? name.error().message : path.error().message)};
    }
    cache.entries.push_back(
        {*name, *path, load<std::int32_t>(data, at), load<std::uint64_t>(data, at + 16)});
  }
  return cache;
}

// The old format; when the new format follows it (glibc's "compat" cache) the new part is read.
Result<LdCache> parse_old(std::string_view data) {
  if (data.size() < k_old_header) {
    return Error{"truncated header"};
  }
  const auto nlibs = load<std::uint32_t>(data, k_old_header - 4);
  if (nlibs > k_max_entries || static_cast<std::uint64_t>(nlibs) * k_old_entry >
                                   static_cast<std::uint64_t>(data.size() - k_old_header)) {
    return Error{"entry count " + std::to_string(nlibs) + " does not fit in the file"};
  }
  const std::size_t strings = k_old_header + nlibs * k_old_entry;
  // The new part starts at the end of the old entries, aligned for its 64-bit fields.
  for (std::size_t align : {std::size_t{8}, std::size_t{4}}) {
    const std::size_t at = (strings + align - 1) / align * align;
    if (at <= data.size() && data.substr(at, k_new_magic.size()) == k_new_magic) {
      return parse_new(data, at, "old+new");
    }
  }
  LdCache cache{"old", {}};
  cache.entries.reserve(nlibs);
  for (std::size_t i = 0; i < nlibs; ++i) {
    const std::size_t at = k_old_header + i * k_old_entry;
    auto name = string_at(data, strings, load<std::uint32_t>(data, at + 4));
    auto path = string_at(data, strings, load<std::uint32_t>(data, at + 8));
    if (!name || !path) {
      return Error{"entry " + std::to_string(i) + ": " +
                   (!name ? name.error().message : path.error().message)};
    }
    cache.entries.push_back({*name, *path, load<std::int32_t>(data, at), 0});
  }
  return cache;
}

} // namespace

Result<LdCache> parse_ld_so_cache(std::string_view data) {
  if (data.substr(0, k_new_magic.size()) == k_new_magic) {
    return parse_new(data, 0, "new");
  }
  if (data.substr(0, k_old_magic.size()) != k_old_magic) {
    return Error{"not an ld.so.cache (unknown magic)"};
  }
  return parse_old(data);
}

} // namespace gpf

namespace gpf {

std::int32_t native_ld_cache_flags() {
  constexpr std::int32_t k_elf_libc6 = 0x0003;
#if defined(__x86_64__)
  return k_elf_libc6 | 0x0300;
#elif defined(__aarch64__)
  return k_elf_libc6 | 0x0a00;
#else
  return k_elf_libc6;
#endif
}

const LdCacheEntry* find_in_ld_cache(const LdCache& cache, std::string_view soname,
                                     std::int32_t flags) {
  constexpr std::uint64_t k_hwcap_extension = 1ull << 62; // glibc-hwcaps subdirectory entries
  const LdCacheEntry* fallback = nullptr;
  for (const auto& e : cache.entries) {
    if (e.name != soname || e.flags != flags) {
      continue;
    }
    if ((e.hwcap & k_hwcap_extension) == 0) {
      return &e;
    }
    if (!fallback) {
      fallback = &e;
    }
  }
  return fallback;
}

std::vector<std::string> split_library_path(std::string_view value) {
  std::vector<std::string> dirs;
  std::string current;
  for (char c : value) {
    if (c == ':' || c == ';') {
      dirs.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  dirs.push_back(current);
  return dirs;
}

std::optional<std::string> parse_cuda_version_json(std::string_view text) {
  if (!json_depth_within(text)) {
    return std::nullopt;
  }
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  const auto version = JsonIn(doc)["cuda"]["version"].lenient<std::string>();
  if (!version) {
    return std::nullopt;
  }
  const auto v = trim(*version);
  if (!Version::parse_exact(v) || v.find('.') == std::string_view::npos) {
    return std::nullopt;
  }
  return std::string(v);
}

std::optional<std::string> parse_cuda_version_txt(std::string_view text) {
  for (auto line : split_lines(text)) {
    line = trim(line);
    if (starts_with(line, "CUDA Version ")) {
      auto v = Version::parse(line.substr(13));
      if (v && v->parts().size() >= 2) {
        return v->str();
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> library_version_from_name(std::string_view file_name,
                                                     std::string_view stem) {
  if (!starts_with(file_name, stem) || file_name.size() < stem.size() + 2 ||
      file_name[stem.size()] != '.') {
    return std::nullopt;
  }
  const auto rest = file_name.substr(stem.size() + 1);
  auto v = Version::parse_exact(rest);
  if (!v || v->parts().size() < 2 || rest.find('.') < 3) {
    return std::nullopt;
  }
  return std::string(rest);
}

std::string normalize_absolute_path(std::string_view path) {
  std::vector<std::string_view> parts;
  for (auto part : split(path, '/')) {
    if (part.empty() || part == ".") {
      continue;
    }
    if (part == "..") {
      if (!parts.empty()) {
        parts.pop_back();
      }
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (auto part : parts) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

std::string parent_path(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) {
    return "/";
  }
  return std::string(path.substr(0, slash));
}

bool path_has_component(std::string_view path, std::string_view name) {
  for (auto part : split(path, '/')) {
    if (part == name) {
      return true;
    }
  }
  return false;
}

} // namespace gpf
