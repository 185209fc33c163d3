#pragma once
// NCCL's WARN messages by family (shared memory, IB verbs, sockets, P2P/IPC, CUDA calls, plugins,
// timeouts and aborts), from NVIDIA/nccl's source at one tag, with the node rules each family
// points at. A WARN line is classified by what its message starts with (the text after
// "NCCL WARN ", anchored there: never a word in the middle of a message).
#include <span>
#include <string_view>

namespace gpf {

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
