// libFuzzer target: the whole streaming kernel-log scanner.
// Properties: no crash; their JSON renders (valid UTF-8, else nlohmann throws); the facts do not
// depend on how the bytes arrive in chunks, unless a timestamp falls by more than a second: such
// resets are found by sampling, and docs/kernel-log.md ("Boot rule") says which ones a sample
// placement can miss, so there the chunking may legitimately change the boot boundary.
#include "fuzz_support.hpp"

#include "gpf/probes/kernel_log_format.hpp"
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/report/log_json.hpp"

#include <optional>

namespace {
bool has_timestamp_drop(std::string_view text) {
  std::optional<double> last;
  for (auto line : gpf::split_lines(text)) {
    const auto parsed = gpf::parse_log_line(line.substr(0, gpf::k_log_max_line));
    if (parsed.monotonic) {
      if (last && *parsed.monotonic + 1.0 < *last) {
        return true;
      }
      last = parsed.monotonic;
    }
  }
  return false;
}
} // namespace

GPF_FUZZ_TARGET(log_scanner) {
  if (size == 0) {
    return 0;
  }
  // The first byte picks the chunk size, the rest is the log.
  const std::size_t chunk = 1 + data[0] % 61;
  const auto text = gpf::fuzz::as_text(data + 1, size - 1);
  const auto whole = gpf::scan_kernel_log(text);
  gpf::KernelLogScanner scanner;
  for (std::size_t at = 0; at < text.size(); at += chunk) {
    scanner.feed(text.substr(at, chunk));
  }
  const auto pieces = scanner.finish();
  const auto a = gpf::log_facts_json(whole).dump();
  const auto b = gpf::log_facts_json(pieces).dump();
  if (has_timestamp_drop(text)) {
    return 0;
  }
  if (a != b) {
    std::fprintf(stderr, "chunk %zu\nwhole:  %s\npieces: %s\n", chunk, a.substr(0, 4000).c_str(), b.substr(0, 4000).c_str());
  }
  gpf::fuzz::require(a == b, "the same facts whatever the chunking");
  return 0;
}
