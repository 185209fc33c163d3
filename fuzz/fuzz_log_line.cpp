// libFuzzer target: kernel-log lines of every format, and the signature table on their messages.
// Properties: no crash; the time and message views stay inside their line.
#include "fuzz_support.hpp"

#include "gpf/probes/kernel_log_format.hpp"
#include "gpf/probes/kernel_log_signatures.hpp"

#include <span>
#include <vector>

namespace {
bool inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}
} // namespace

GPF_FUZZ_TARGET(log_line) {
  const auto text = gpf::fuzz::as_text(data, size);
  std::vector<std::string_view> messages;
  for (auto line : gpf::split_lines(text)) {
    const auto parsed = gpf::parse_log_line(line);
    gpf::fuzz::require(inside(parsed.time, line), "time is a view into the line");
    gpf::fuzz::require(inside(parsed.message, line), "message is a view into the line");
    messages.push_back(parsed.message);
    (void)gpf::parse_monotonic_seconds(line);
  }
  // Multi-line signatures read consecutive messages: try each suffix (bounded, to stay fast).
  const std::span<const std::string_view> all(messages);
  for (std::size_t i = 0; i < all.size() && i < 64; ++i) {
    (void)gpf::match_signature(all.subspan(i));
  }
  return 0;
}
