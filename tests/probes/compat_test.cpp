// Pure parsers of the compat probe, on inline data and on ld.so.cache files written by glibc's own
// ldconfig in its three formats (tests/data/ld.so.cache, see regenerate.sh there).
#include "gpf/probes/compat_parsers.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

using namespace gpf;

namespace {

std::string read_sample(const std::string& name) {
  std::ifstream in(std::string(GPF_SOURCE_DIR) + "/tests/data/ld.so.cache/" + name,
                   std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <class T> void put(std::string& out, std::size_t at, T value) {
  if (out.size() < at + sizeof(T)) {
    out.resize(at + sizeof(T));
  }
  std::memcpy(out.data() + at, &value, sizeof(T));
}

// A new-format cache holding the given (name, path, flags) entries.
std::string
make_new_cache(const std::vector<std::tuple<std::string, std::string, std::int32_t>>& entries) {
  std::string out = "glibc-ld.so.cache1.1";
  const std::size_t header = 48;
  const std::size_t strings = header + entries.size() * 24;
  std::string table;
  out.resize(strings);
  put<std::uint32_t>(out, 20, static_cast<std::uint32_t>(entries.size()));
  put<std::uint8_t>(out, 28, 2); // little-endian
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& [name, path, flags] = entries[i];
    const auto name_at = strings + table.size();
    table += name + '\0';
    const auto path_at = strings + table.size();
    table += path + '\0';
    const std::size_t at = header + i * 24;
    put<std::int32_t>(out, at, flags);
    put<std::uint32_t>(out, at + 4, static_cast<std::uint32_t>(name_at));
    put<std::uint32_t>(out, at + 8, static_cast<std::uint32_t>(path_at));
  }
  put<std::uint32_t>(out, 24, static_cast<std::uint32_t>(table.size()));
  return out + table;
}

} // namespace

TEST_CASE("ld.so.cache written by glibc: new, old and old+new formats") {
  struct Case {
    const char* file;
    const char* format;
  };
  for (const Case c :
       {Case{"new.bin", "new"}, Case{"old.bin", "old"}, Case{"compat.bin", "old+new"}}) {
    INFO(c.file);
    const std::string sample = read_sample(c.file); // the entries view it
    auto cache = parse_ld_so_cache(sample);
    REQUIRE(cache);
    CHECK(cache->format == c.format);
    REQUIRE(cache->entries.size() == 3); // as `ldconfig -p` printed: expected.txt
    const auto* cuda = find_in_ld_cache(*cache, "libcuda.so.1", 0x0303);
    REQUIRE(cuda);
    CHECK(cuda->path ==
          "/usr/local/cuda/compat/libcuda.so.1"); // the first of the two, as ld.so takes it
    const auto* nvml = find_in_ld_cache(*cache, "libnvidia-ml.so.1", 0x0303);
    REQUIRE(nvml);
    CHECK(nvml->path == "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
    CHECK_FALSE(find_in_ld_cache(*cache, "libcuda.so.1", 0x0003)); // no 32-bit entry
    CHECK_FALSE(find_in_ld_cache(*cache, "libcudart.so.12", 0x0303));
  }
}

TEST_CASE("ld.so.cache entries of another architecture are not the native library") {
  const auto data =
      make_new_cache({{"libcuda.so.1", "/usr/lib/i386-linux-gnu/libcuda.so.1", 0x0003},
                      {"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", 0x0303}});
  auto cache = parse_ld_so_cache(data);
  REQUIRE(cache);
  CHECK(find_in_ld_cache(*cache, "libcuda.so.1", 0x0303)->path ==
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  CHECK(find_in_ld_cache(*cache, "libcuda.so.1", 0x0003)->path ==
        "/usr/lib/i386-linux-gnu/libcuda.so.1");
#if defined(__x86_64__)
  CHECK(native_ld_cache_flags() == 0x0303);
#endif
}

TEST_CASE("ld.so.cache garbage, truncation and lying counts give errors, never a crash") {
  CHECK_FALSE(parse_ld_so_cache(""));
  CHECK_FALSE(parse_ld_so_cache("garbage that is long enough to be a header of something"));
  CHECK_FALSE(parse_ld_so_cache("glibc-ld.so.cache1.1"));
  CHECK_FALSE(parse_ld_so_cache("ld.so-1.7.0"));

  auto huge = make_new_cache({{"libcuda.so.1", "/x/libcuda.so.1", 0x0303}});
  put<std::uint32_t>(huge, 20, 0xffffffffu);
  CHECK_THAT(parse_ld_so_cache(huge).error().message, Catch::Contains("does not fit"));

  auto bad_offset = make_new_cache({{"libcuda.so.1", "/x/libcuda.so.1", 0x0303}});
  put<std::uint32_t>(bad_offset, 48 + 8, 0x7fffffffu);
  CHECK_THAT(parse_ld_so_cache(bad_offset).error().message, Catch::Contains("out of bounds"));

  auto unterminated = make_new_cache({{"libcuda.so.1", "/x/libcuda.so.1", 0x0303}});
  unterminated.pop_back(); // the last string loses its NUL
  CHECK_THAT(parse_ld_so_cache(unterminated).error().message, Catch::Contains("unterminated"));

  auto big_endian = make_new_cache({});
  put<std::uint8_t>(big_endian, 28, 3);
  CHECK_THAT(parse_ld_so_cache(big_endian).error().message, Catch::Contains("big-endian"));

  // Every prefix of every real sample, and random corruption: an Error or a result, nothing else.
  std::mt19937 rng(12345);
  for (const char* file : {"new.bin", "old.bin", "compat.bin"}) {
    const auto data = read_sample(file);
    for (std::size_t n = 0; n < data.size(); ++n) {
      auto r = parse_ld_so_cache(std::string_view(data).substr(0, n));
      if (r) {
        for (const auto& e : r->entries) {
          CHECK(e.path.size() < data.size());
        }
      }
    }
    for (int round = 0; round < 2000; ++round) {
      auto copy = data;
      for (int flips = 0; flips < 4; ++flips) {
        copy[rng() % copy.size()] = static_cast<char>(rng());
      }
      auto r = parse_ld_so_cache(copy);
      if (r) {
        CHECK(r->entries.size() <= copy.size());
      }
    }
  }
}

TEST_CASE("LD_LIBRARY_PATH splits like the loader's") {
  CHECK(split_library_path("/a:/b") == std::vector<std::string>{"/a", "/b"});
  CHECK(split_library_path("/a;/b") == std::vector<std::string>{"/a", "/b"});
  CHECK(split_library_path("/a::/b:") == std::vector<std::string>{"/a", "", "/b", ""});
  CHECK(split_library_path("") == std::vector<std::string>{""});
}

TEST_CASE("the CUDA toolkit version from version.json and version.txt") {
  CHECK(
      parse_cuda_version_json(
          R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cudart": {"version": "12.4.127"}})") ==
      "12.4.1");
  CHECK(parse_cuda_version_json(R"({"cuda": {"version": "13.0"}})") == "13.0");
  CHECK_FALSE(parse_cuda_version_json(R"({"cuda": {"version": 12}})"));
  CHECK_FALSE(parse_cuda_version_json(R"({"cuda": {"version": "twelve"}})"));
  CHECK_FALSE(parse_cuda_version_json(R"({"cuda": {"version": "12"}})"));
  CHECK_FALSE(parse_cuda_version_json(R"({"cuda_cudart": {"version": "12.4.127"}})"));
  CHECK_FALSE(parse_cuda_version_json("{\"cuda\": "));
  CHECK_FALSE(parse_cuda_version_json("\xff\xfe garbage"));
  CHECK(parse_cuda_version_txt("CUDA Version 10.2.89\n") == "10.2.89");
  CHECK(parse_cuda_version_txt("CUDA Version 11.0.228") == "11.0.228");
  CHECK_FALSE(parse_cuda_version_txt("CUDA Version\n"));
  CHECK_FALSE(parse_cuda_version_txt(""));
}

TEST_CASE("the driver version in a library file name") {
  struct Case {
    const char* name;
    const char* stem;
    const char* version; // "" = none
  };
  const Case cases[] = {
      {"libcuda.so.550.54.15", "libcuda.so", "550.54.15"},
      {"libcuda.so.570.26", "libcuda.so", "570.26"},
      {"libnvidia-ml.so.535.104.05", "libnvidia-ml.so", "535.104.05"},
      {"libcuda.so.1", "libcuda.so", ""},
      {"libcuda.so.1.1", "libcuda.so", ""}, // WSL2's libcuda
      {"libcuda.so", "libcuda.so", ""},
      {"libcuda.so.550.54.15.bak", "libcuda.so", ""},
      {"libcuda.so.550.", "libcuda.so", ""},
      {"libcudart.so.12.4.127", "libcuda.so", ""},
      {"libnvidia-ml.so.550.54.15", "libcuda.so", ""},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const auto v = library_version_from_name(c.name, c.stem);
    if (std::string(c.version).empty()) {
      CHECK_FALSE(v);
    } else {
      CHECK(v == c.version);
    }
  }
}

TEST_CASE("absolute paths normalise lexically and never climb above the root") {
  CHECK(normalize_absolute_path("/usr//lib/./x86_64-linux-gnu/") == "/usr/lib/x86_64-linux-gnu");
  CHECK(normalize_absolute_path("/usr/local/cuda/lib64/../compat") == "/usr/local/cuda/compat");
  CHECK(normalize_absolute_path("/../../etc") == "/etc");
  CHECK(normalize_absolute_path("/") == "/");
  CHECK(parent_path("/a/b/c") == "/a/b");
  CHECK(parent_path("/c") == "/");
  CHECK(path_has_component("/usr/local/cuda/lib64/stubs/libcuda.so.1", "stubs"));
  CHECK_FALSE(path_has_component("/opt/stubsville/libcuda.so.1", "stubs"));
  CHECK(path_has_component("/usr/local/cuda-12.4/compat/libcuda.so.1", "compat"));
}
