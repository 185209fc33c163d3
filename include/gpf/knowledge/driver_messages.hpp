#pragma once
// The NVIDIA kernel modules' own log messages, as data: every message of the catalogued kinds
// at one driver tag (the NVRM: lines of nvidia.ko, the nvidia-uvm, nvidia-modeset and nvidia-drm
// print macros, the resource manager's Linux glue: osinit.c and osapi.c), each with what it means
// in our words and gpu-preflight's judgement. tests/data/driver-messages/<tag>.txt is the list
// extracted from the tag by scripts/extract-driver-messages.py, which also rewrites the rows
// (docs/kernel-log.md "Driver messages").
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

constexpr std::string_view k_driver_messages_tag = "595.45.04";
constexpr std::string_view k_driver_messages_url =
    "https://github.com/NVIDIA/open-gpu-kernel-modules/tree/595.45.04";

// gpu-preflight's judgement of a message for a job about to start.
enum class MessageJudgement {
  benign,   // normal operation, a notice, a process's own refused request, or debug output
  outside,  // on a path a compute job does not use (display, Tegra SoC, notebook ACPI, suspend)
  failure,  // a failure of the driver or the GPU that no kernel-log signature judges yet
  evidence, // recognised by a kernel-log signature: the event kind the family names or the
            // driver's load banner
  unjudged, // new in a refresh and not yet read (a test allows none)
};

// A family of messages that share a meaning and a judgement.
enum class MessageFamily {
  unjudged,
  // evidence: one family per kernel-log event kind the catalog's messages show, and the load
  rm_init_failed,
  rm_init_minor,
  api_mismatch,
  fallen_off_bus,
  bar_invalid,
  probe_not_called,
  probe_failed,
  no_gpu_initialized,
  not_supported,
  not_supported_open,
  power_cables,
  gsp_firmware,
  crash_dump,
  driver_load,
  // failure, not yet judged
  rm_init_step,
  module_init,
  pci_resources,
  interrupts,
  driver_conflict,
  dma_mapping,
  memory,
  gpu_memory_numa,
  gpu_reset,
  module_mismatch,
  gpu_not_supported,
  driver_internal,
  // benign
  notice,
  module_option,
  client_request,
  leak_report,
  debug_hidden,
  uvm_debug,
  // outside a compute job's path
  display,
  soc,
  acpi,
  power_management,
};

struct MessageFamilyInfo {
  MessageFamily family;
  MessageJudgement judgement;
  std::string_view event_kind; // evidence: the event's name in facts.log ("rm-init-failed"),
                               // or "driver-load"; "" otherwise
  std::string_view meaning;    // our words
};

enum class PrintLevel { error, warning, info, debug };

struct DriverMessage {
  std::string_view module; // nvidia, nvidia-rm, nvidia-uvm, nvidia-modeset, nvidia-drm
  PrintLevel level;
  bool logged;             // reaches the kernel log with default module options
  std::string_view file;   // path in the tag (the row's source: k_driver_messages_url + file)
  std::string_view format; // printf format as the kernel prints it (macro prefix included)
  MessageFamily family;
};

std::span<const DriverMessage> driver_message_table();
std::span<const MessageFamilyInfo> message_family_table();
const MessageFamilyInfo& message_family(MessageFamily family);
std::string_view print_level_name(PrintLevel level);
std::string_view message_judgement_name(MessageJudgement judgement);

// The failure message (judgement failure, logged with default module options) that an NVRM
// payload (the text after "NVRM:" and its blanks) is an instance of: the payload has the shape of
// the format's first line, each conversion standing for any text, and the format holds enough
// literal text to be told apart. nullptr when none.
const DriverMessage* match_failure_message(std::string_view payload);

// What to do about a message of a failure family: a concrete next step.
std::string_view failure_remedy(MessageFamily family);
// The same for a failure event, which names its row by the row's format (LogEvent::detail);
// "" for a format no row has.
std::string_view failure_remedy_for_format(std::string_view format);

// The rows as the extracted list writes them: "module\tlevel\tlogged\tfile\tformat", the format
// with C escapes as in the source (\n, \t, \", \\).
std::string driver_message_line(const DriverMessage& row);

// Lines of an extracted list (tests/data/driver-messages/<tag>.txt) that the table lacks, and
// rows of the table the list lacks. Comment lines ('#') and empty lines are skipped.
struct MessageListDiff {
  std::vector<std::string> not_in_table;
  std::vector<std::string> not_in_list;
};
MessageListDiff compare_driver_messages(std::string_view list_text);

} // namespace gpf
