// libFuzzer target: explain-log's streaming matcher (the pattern automaton and the kernel-log
// scanner together) on any bytes.
// Properties: no crash; every quoted line is valid UTF-8 and cut to the quote limit; a node match
// names rules, a job match none; the pattern table's matches (line, number, count) do not depend
// on how the bytes arrive in chunks (the kernel-log part has its own target, log_scanner, with
// the chunking caveats docs/kernel-log.md gives).
#include "fuzz_support.hpp"

#include "gpf/cli/explain_log.hpp"

#include <algorithm>

namespace {
std::string table_matches(const gpf::LogExplanation& ex) {
  std::string out = std::to_string(ex.lines) + "/" + std::to_string(ex.lines_cut) + "\n";
  for (const auto& m : ex.matches) {
    if (m.pattern != "kernel-log") {
      out += m.pattern + "|" + std::to_string(m.line_number) + "|" + std::to_string(m.count) + "|" +
             m.line + "\n";
    }
  }
  return out;
}
} // namespace

GPF_FUZZ_TARGET(explain_log) {
  if (size == 0) {
    return 0;
  }
  // The first byte picks the chunk size, the rest is the log; at most 256 feeds per input.
  const auto text = gpf::fuzz::as_text(data + 1, size - 1);
  const std::size_t chunk = std::max<std::size_t>(1 + data[0] % 61, text.size() / 256);
  const auto whole = gpf::explain_log_text(text);
  gpf::LogExplainer explainer;
  for (std::size_t at = 0; at < text.size(); at += chunk) {
    explainer.feed(text.substr(at, chunk));
  }
  const auto pieces = explainer.finish();
  for (const auto& m : whole.matches) {
    gpf::fuzz::require(gpf::fuzz::is_valid_utf8(m.line), "quoted lines are valid UTF-8");
    gpf::fuzz::require(m.line.size() <= gpf::k_explain_quote_max + 8, "quoted lines are cut");
    // a CUDA error named by itself names no rule: its row says the node's conditions in words
    gpf::fuzz::require(m.pattern == "cuda-error"
                           ? m.rules.empty()
                           : (m.cause == gpf::LogCause::node) == !m.rules.empty(),
                       "a node match names rules, a job match none");
  }
  gpf::fuzz::require(whole.bytes == text.size(), "every byte is counted");
  gpf::fuzz::require(table_matches(whole) == table_matches(pieces),
                     "the same table matches whatever the chunking");
  return 0;
}
