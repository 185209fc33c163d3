#pragma once
// Pure parse functions of the compat probe: bytes/text in, typed values out. They never read the
// host and never throw; bad input gives an Error or nullopt. Tested on inline data.
#include "gpf/util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

// Views into the bytes parsed (valid while they are): a cache is read in place, never expanded, so
// entries sharing one string cost nothing more (a 1 MB file cost 417 MB when each was a copy).
struct LdCacheEntry {
  std::string_view name; // the soname key ("libcuda.so.1")
  std::string_view path; // absolute path the loader opens
  std::int32_t flags = 0;
  std::uint64_t hwcap = 0;
};

struct LdCache {
  std::string format; // "new", "old", "old+new"
  std::vector<LdCacheEntry> entries;
};

// glibc's binary /etc/ld.so.cache: the old format (magic "ld.so-1.7.0"), the new one
// ("glibc-ld.so.cache1.1"), or the old followed by the new (where the new part is read). Every
// count and string offset is checked against the data; anything out of bounds, truncated or
// unterminated is an Error, never a read past the end; a string is at most 4096 bytes (PATH_MAX),
// so each entry costs a bounded scan: time and memory linear in the data. The entries view `data`,
// which must outlive the cache.
Result<LdCache> parse_ld_so_cache(std::string_view data);

// The cache flags of this build's native libraries (x86-64: 0x0303, aarch64: 0x0a03): the
// entries the dynamic loader of this process would accept.
std::int32_t native_ld_cache_flags();

// The first cache entry for soname with the given flags (hwcaps-subdirectory entries last).
const LdCacheEntry* find_in_ld_cache(const LdCache& cache, std::string_view soname,
                                     std::int32_t flags);

// LD_LIBRARY_PATH as the loader splits it (':' or ';'); empty entries (meaning the current
// directory) are kept as "" so the caller can say it skipped them.
std::vector<std::string> split_library_path(std::string_view value);

// The toolkit version in a CUDA toolkit's version.json ({"cuda": {"version": "12.4.1"}}).
std::optional<std::string> parse_cuda_version_json(std::string_view text);
// The toolkit version in a pre-11.1 version.txt ("CUDA Version 10.2.89").
std::optional<std::string> parse_cuda_version_txt(std::string_view text);

// The driver version in a driver library's file name: ("libcuda.so.550.54.15", "libcuda.so") ->
// "550.54.15". nullopt for "libcuda.so.1", "libcuda.so.1.1" (WSL) and anything not a driver
// version (at least two components, the first of three digits or more).
std::optional<std::string> library_version_from_name(std::string_view file_name,
                                                     std::string_view stem);

// Lexically normalises an absolute path: collapses "//", "." and ".." (never above "/").
std::string normalize_absolute_path(std::string_view path);

// The directory part of an absolute path ("/a/b/c" -> "/a/b"; "/c" -> "/").
std::string parent_path(std::string_view path);

// True when a component of the path equals name ("/usr/local/cuda/lib64/stubs/libcuda.so.1").
bool path_has_component(std::string_view path, std::string_view name);

} // namespace gpf
