#pragma once
// The job-log pattern table of `explain-log` (docs/explain-log.md): one row per distinctive error
// text a training job prints (CUDA runtime and driver errors, NCCL, PyTorch, TensorFlow, the
// container runtime, accelerate), with its source and the rule ids that judge its usual node
// causes, most specific first; a row of the job's own (out of memory, a device-side assert, an
// import error) names none.
#include <array>
#include <span>
#include <string_view>

namespace gpf {

// Whose fault an error is: the node's, the job's, or either (a CUDA error whose code alone does
// not decide; explain-log then says what does).
enum class LogCause { node, job, ambiguous };

struct LogPattern {
  std::string_view id; // stable, e.g. "cuda.system-not-ready"
  LogCause cause = LogCause::node;
  // Texts that select the row, matched case-insensitively inside a line; unused slots are empty.
  // Each is distinctive on its own: never a generic word such as "error" or "CUDA".
  std::array<std::string_view, 3> texts;
  std::string_view rules;   // candidate rule ids, space-separated, most specific first; "" for job
  std::string_view meaning; // what the text says, one sentence
  std::string_view source;  // public URL where the text and its cause are established
};

// Every row, most specific first: a line that several rows match is given to the first.
std::span<const LogPattern> log_patterns();
// nullptr when no row has this id.
const LogPattern* find_log_pattern(std::string_view id);

} // namespace gpf
