#pragma once
// Signature matching of the kernel-log scanner: a table of the exact texts the NVIDIA driver and
// the kernel print (docs/kernel-log.md "Signatures", facts §3–§5), each with a decoder that pins
// the event to the PCI device it names. Pure; never throws.
#include "gpf/facts/log_facts.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpf {

// What a kernel message (or a run of consecutive NVRM messages) was recognised as. Text taken from
// the log (detail, meaning) is raw bytes, capped: the scanner makes it valid UTF-8 once per event.
struct Recognised {
  enum class What { event, gpu_uuid, driver_load };
  What what = What::event;
  LogEvent event;           // What::event: kind, bus id, decoded fields and meaning (no lines yet)
  std::string uuid;         // What::gpu_uuid: the UUID of event.bus_id
  LogDriverLoad load;       // What::driver_load: version and flavour (no line yet)
  std::size_t consumed = 1; // messages used; more than one for multi-line messages
};

using SignatureDecoder = bool (*)(std::string_view text, Recognised& out);

// Where a row's pattern must stand. A line counts as the driver's only in the exact shape the
// driver prints: the pattern right after its prefix, never somewhere inside a message (docs/
// kernel-log.md "Provenance"): a user's process name or file name can put any text in the middle.
enum class Anchor {
  start,  // at the start of the NVRM payload or of the kernel message
  gpu,    // NVRM: at the start, or after "GPU <bus>: " / "GPU at <bus>[:] " / "GPU<n> ", either
          // optionally followed by one function name ("RmInitAdapter: ")
  device, // after the kernel's device prefix "<driver> <bus>[:<service>]: " (required)
  module, // at the start, or after one "<name>: " word (a module, subsystem or switch name)
};

// One row: the exact text that identifies a message and how to decode it.
struct Signature {
  std::string_view name;    // for tests and docs
  std::string_view pattern; // exact text at the anchor ('|' between alternatives)
  bool nvrm;                // the message must start with "NVRM:" (pattern looked for after it)
  Anchor anchor;            // where the pattern must start
  std::size_t max_lines;    // 1, or how many consecutive NVRM lines the message may span
  std::string_view end;    // multi-line: text on the message's last line ('|' between alternatives)
  SignatureDecoder decode; // fills the result from the (joined) text; false = not this signature
  std::string_view source;
};

std::span<const Signature> signature_table();

// The most consecutive NVRM messages one signature uses.
inline constexpr std::size_t k_signature_window = 5;

// messages[0] is the candidate kernel message (prefixes removed); a multi-line signature may use
// the following ones, which must be consecutive NVRM messages. nullopt: no signature matches.
std::optional<Recognised> match_signature(std::span<const std::string_view> messages);

// True when a kernel message is shaped as the kernel prints a process's own record:
// "<comm>[<pid>]: ..." (segfault, unhandled signal), "traps: <comm>[<pid>] ...", "<comm> (<pid>):
// ...". Its head is the process name, which any user sets (PR_SET_NAME, 15 bytes), and its tail
// may carry a file name (255 bytes of anything): such a record is never the driver's.
bool task_record(std::string_view message);

// The PCI address that follows marker in text (e.g. "PCI:", "GPU "), normalised to
// dddd:bb:dd.f; nullopt when there is none or it is malformed.
std::optional<std::string> pci_after(std::string_view text, std::string_view marker);

} // namespace gpf
