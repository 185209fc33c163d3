// libFuzzer target: the whole streaming kernel-log scanner.
// Properties: no crash; their JSON renders (valid UTF-8, else nlohmann throws); the facts do not
// depend on how the bytes arrive in chunks, unless a timestamp falls by more than a second: such
// resets are found by sampling, and docs/kernel-log.md ("Boot rule") says which ones a sample
// placement can miss, so there the chunking may legitimately change the boot boundary. The
// "formats" list is also left out: it names the formats of the lines the scanner looked at
// (prefilter hits and samples), so which malformed line shows up in it depends on read sizes.
#include "fuzz_support.hpp"

#include "gpf/probes/kernel_log_format.hpp"
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/report/log_json.hpp"

#include <algorithm>
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
  // The first byte picks the chunk size, the rest is the log. At most 256 feeds per input: tiny
  // feeds of a 100 KiB input ran at ~5 inputs/s under ASan, too slow to explore anything.
  const auto text = gpf::fuzz::as_text(data + 1, size - 1);
  const std::size_t chunk = std::max<std::size_t>(1 + data[0] % 61, text.size() / 256);
  const auto whole = gpf::scan_kernel_log(text);
  gpf::KernelLogScanner scanner;
  for (std::size_t at = 0; at < text.size(); at += chunk) {
    scanner.feed(text.substr(at, chunk));
  }
  const auto pieces = scanner.finish();
  auto whole_json = gpf::log_facts_json(whole);
  auto pieces_json = gpf::log_facts_json(pieces);
  whole_json.erase("formats");
  pieces_json.erase("formats");
  const auto a = whole_json.dump();
  const auto b = pieces_json.dump();
  if (has_timestamp_drop(text)) {
    return 0;
  }
  if (a != b) {
    std::fprintf(stderr, "chunk %zu\nwhole:  %s\npieces: %s\n", chunk, a.substr(0, 4000).c_str(),
                 b.substr(0, 4000).c_str());
  }
  gpf::fuzz::require(a == b, "the same facts whatever the chunking");
  return 0;
}
