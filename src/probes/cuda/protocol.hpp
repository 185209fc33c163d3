#pragma once
// What a CUDA child tells the parent: one JSON object per line on a pipe, written as each thing
// happens, so that a child killed at the deadline has already said which step it was in.
// docs/cuda-probe.md lists the events. Pure functions, tested on inline strings.
#include "gpf/facts/cuda_facts.hpp"
#include "probes/child/runner.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpf::cuda {

enum class EventKind {
  begin,          // a step started: step.name (and pair for a peer copy)
  end,            // a step finished: step (ok, duration, error)
  library,        // text: the file the loader picked
  load_error,     // text: dlopen's error
  missing_symbol, // text: the symbol; required
  driver_version, // value: cuDriverGetVersion
  device,         // device: what enumeration learnt about one device
  peer,           // peer: one peer copy's result (and its bandwidth)
  bandwidth,      // h2d_gbps, d2h_gbps: the host copies' bandwidth; text: why not measured
  active,         // active: the active step's result on this GPU
  peer_bandwidth, // peer (from, to, gbps, error): one pair's timed copies, after every pair's
                  // verified copy; text: why not measured
  fabric,         // fabric: the fabric allocation probe's result on this GPU
  done,           // the child finished everything it was asked to do
  invalid,        // a line that is not an event (text: the line, capped)
};

struct Event {
  EventKind kind = EventKind::invalid;
  CudaStep step;
  std::optional<std::pair<int, int>> pair; // begin of a peer copy: (from, to) CUDA indices
  CudaDevice device;
  CudaPeerResult peer;
  std::string text;
  bool required = false;
  int value = 0;
  std::optional<double> h2d_gbps;
  std::optional<double> d2h_gbps;
  CudaActiveResult active;
  CudaFabricResult fabric;
};

// One line, without the trailing '\n'. Strings are made valid UTF-8.
std::string encode_event(const Event& event);
// Never throws: anything that is not a well-formed event gives EventKind::invalid.
Event decode_event(std::string_view line);

using child::ChildEnd;
using child::TimedLine;

// Everything one child said, folded: its steps in order (a step begun and never finished is
// timed_out when the deadline killed the child, failed with CHILD_DIED otherwise).
struct Transcript {
  std::vector<CudaStep> steps;
  std::vector<CudaDevice> devices;
  std::vector<CudaPeerResult> peers;
  std::optional<int> driver_version;
  std::optional<double> h2d_gbps; // the bandwidth event
  std::optional<double> d2h_gbps;
  std::string bandwidth_not_checked;
  CudaActiveResult active; // the active event
  CudaFabricResult fabric; // the fabric event
  bool timing_cut = false; // killed while timing peer copies, every pair verified before
  std::string library_path;
  std::string load_error;
  std::vector<std::string> missing_required;
  std::vector<std::string> missing_optional;
  bool done = false;
  bool timed_out = false;
  std::string child_error; // died without finishing, or spoke garbage
  std::vector<std::string> invalid_lines;

  bool all_steps_ok() const;
  const CudaStep* failed_step() const; // the first step that did not pass
};

Transcript fold_transcript(const std::vector<TimedLine>& lines, const ChildEnd& end);

// The CUDA protocol on top of the generic child machinery.
using child::ChildGroup;
using child::ChildSpec;
using child::Clock;
using child::EnvOverride;
using child::LineWriter;
// Writes one event line.
void emit_event(LineWriter& out, const Event& event);
// A group whose children speak this protocol.
inline ChildGroup make_child_group() {
  return ChildGroup(
      [](std::string_view line) { return decode_event(line).kind == EventKind::done; });
}
// Everything one child said so far, folded.
inline Transcript transcript(const ChildGroup& group, std::size_t id) {
  return fold_transcript(group.lines(id), group.end(id));
}

} // namespace gpf::cuda
