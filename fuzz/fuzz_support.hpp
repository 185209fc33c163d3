#pragma once
// Shared by the libFuzzer targets: a failed property aborts (libFuzzer then saves the input as a
// crash), and the checks every parser's output must pass.
#include "gpf/util/text.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <stdexcept>
#include <stdlib.h>

// One function per target: libFuzzer's entry point in the fuzz build; a named function in the
// normal test build, where tests/unit/fuzz_regressions_test.cpp replays the saved crash inputs.
#ifdef GPF_FUZZ_REGRESSIONS
#define GPF_FUZZ_TARGET(name) int gpf_fuzz_##name(const std::uint8_t* data, std::size_t size)
#else
#define GPF_FUZZ_TARGET(name)                                                                      \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
#endif

namespace gpf::fuzz {

// A violated property: abort under libFuzzer (it keeps the input), an exception in the tests.
inline void require(bool ok, const char* what) {
  if (!ok) {
#ifdef GPF_FUZZ_REGRESSIONS
    throw std::runtime_error(std::string("fuzz property violated: ") + what);
#else
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
#endif
  }
}

// The next string of a multi-file input, as libFuzzer's
// FuzzedDataProvider::ConsumeRandomLengthString reads it: two backslashes are one backslash, a
// backslash followed by anything else ends it.
inline std::string take_string(std::string_view& rest) {
  std::string out;
  while (!rest.empty()) {
    const char c = rest.front();
    rest.remove_prefix(1);
    if (c == '\\' && !rest.empty()) {
      const char next = rest.front();
      rest.remove_prefix(1);
      if (next != '\\') {
        break;
      }
    }
    out += c;
  }
  return out;
}

inline bool is_valid_utf8(std::string_view s) {
  return to_valid_utf8(s) == s;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A private scratch root for targets that go through Host::snapshot (devices.json, whole
// snapshots): created once per process under $TMPDIR, reused by every input.
inline const std::filesystem::path& scratch_root() {
  static const std::filesystem::path root = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpf-fuzz-XXXXXX").string();
    const char* made = ::mkdtemp(pattern.data());
    require(made != nullptr, "mkdtemp");
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_root(), ec);
    });
    return std::filesystem::path(made);
  }();
  return root;
}

} // namespace gpf::fuzz
