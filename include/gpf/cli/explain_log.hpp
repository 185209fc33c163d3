#pragma once
// `gpu-preflight explain-log FILE|-` (docs/explain-log.md): a failed job's log, streamed in
// bounded memory, matched against the pattern table (knowledge/log_patterns.hpp) and, for pasted
// kernel-log lines, the kernel-log scanner; each match names the rules of its usual node causes,
// most specific first, or says the error is the job's own. --check then runs the check and marks
// each candidate confirmed or rejected by the findings.
#include "gpf/knowledge/log_patterns.hpp"
#include "gpf/rules/verdict.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace gpf {

// A quoted line is cut to this many bytes.
inline constexpr std::size_t k_explain_quote_max = 512;

// One distinctive error of the log: a pattern row, a CUDA error by its enum name (CUresult or
// cudaError_t, knowledge/cuda_errors.hpp), or kernel-log events that one rule judges.
struct LogMatch {
  std::string pattern; // the row's id, "cuda-error", or "kernel-log"
  LogCause cause = LogCause::node;
  std::vector<std::string> rules; // candidate rule ids, most specific first; empty for the job's
  std::string meaning;
  // A CUDA error's: the node conditions that cause it (node), what tells node from job
  // (ambiguous); "" otherwise.
  std::string detail;
  std::string source;            // public URL ("" for kernel-log events: the rule has one)
  std::string line;              // the first matching line, valid UTF-8, cut to the quote limit
  std::uint64_t line_number = 0; // 1-based; 0 for kernel-log events
  std::uint64_t count = 1;       // lines (events) like it
};

struct LogExplanation {
  // node causes first (kernel log, then table order), then either's, then the job's
  std::vector<LogMatch> matches;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  std::uint64_t lines_cut = 0; // lines longer than 64 KiB: the rest was not examined
  bool node_cause() const;
};

// The streaming matcher: bytes in any split, memory bounded whatever the input's size.
class LogExplainer {
public:
  LogExplainer();
  ~LogExplainer();
  LogExplainer(const LogExplainer&) = delete;
  LogExplainer& operator=(const LogExplainer&) = delete;
  void feed(std::string_view bytes);
  // Ends the input (a last line without '\n' counts). Call once.
  LogExplanation finish();

private:
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

// A whole log held in memory (tests, fuzzing).
LogExplanation explain_log_text(std::string_view text);

// What --check found for one candidate rule.
enum class CandidateState { hypothesis, confirmed, rejected, not_checked };

struct ExplainLogOptions {
  std::string path = "-"; // FILE or "-" (stdin)
  std::string format = "text";
  bool check = false;
  std::string root; // --root DIR for --check
};

CLI::App* add_explain_log_command(CLI::App& app, ExplainLogOptions& options);
// What --check needs of a check: its findings, and which probes had data.
struct ExplainLogChecked {
  Assessment assessment;
  std::vector<ProbeStatus> probes;
};
// Runs the check for --check; nullopt when it could not run (it printed why).
using ExplainLogCheck = std::function<std::optional<ExplainLogChecked>()>;
// 0 nothing points at the node (with --check: every candidate checked and rejected); 1 a node
// cause is named (with --check: confirmed, or not checked because an input it reads could not be
// read); 2 the log cannot be read or the check cannot run.
int run_explain_log(const ExplainLogOptions& options, std::span<const Rule> rules,
                    const ExplainLogCheck& check);

} // namespace gpf
