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

// NCCL's WARN messages by family (shared memory, IB verbs, sockets, P2P/IPC, CUDA calls, plugins,
// timeouts and aborts), from NVIDIA/nccl's source at one tag, with the node rules each family
// points at. A WARN line is classified by what its message starts with (the text after
// "NCCL WARN ", anchored there: never a word in the middle of a message).
struct NcclWarnFamily {
  std::string_view id;   // stable, e.g. "ib-verbs"
  std::string_view name; // "InfiniBand verbs"
  // Message starts (after "NCCL WARN "), matched case-sensitively at the start; unused slots are
  // empty.
  std::string_view starts[6];
  std::string_view rules;   // candidate node rule ids, space-separated, most specific first
  std::string_view meaning; // what a WARN of this family says about the node
  std::string_view source;  // the NCCL source files of the family at the tag
};

// The tag of NVIDIA/nccl the families were read from.
inline constexpr std::string_view k_nccl_warn_tag = "v2.30.7-1";

std::span<const NcclWarnFamily> nccl_warn_families();
// The family of one log line holding "NCCL WARN "; nullptr when the line holds none or its
// message starts with nothing the families know.
const NcclWarnFamily* nccl_warn_family(std::string_view line);

} // namespace gpf
