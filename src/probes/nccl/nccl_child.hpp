#pragma once
// The NCCL child: what it does (runs in its own forked process, probes/child/runner.hpp) and how
// the parent folds what it said into NcclFacts. It speaks the CUDA children's line protocol
// (probes/cuda/protocol.hpp: begin, end, library, load_error, missing_symbol, done) plus two
// events of its own: {"event":"nccl_version","value":N} and {"event":"nccl_log","text":LINE}, one
// per line NCCL printed (NCCL_DEBUG=INFO), forwarded as it is printed so that a child killed in a
// hang has already passed on what NCCL said before it.
#include "gpf/facts/nccl_facts.hpp"
#include "probes/child/runner.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::nccl {

// int32 elements per GPU in the all-reduce (1 MiB): enough for NCCL to use its real transports,
// small enough to cost nothing next to the communicator's start-up.
inline constexpr std::size_t k_elements = std::size_t{1} << 18;

// What rank `rank` contributes at element i, and the sum every rank must then hold: a pattern
// that differs per element and per rank, so a missing, doubled or shifted contribution shows.
int rank_value(int rank, std::size_t i);
int expected_sum(int ranks, std::size_t i);

// Runs in the child: load libcuda, cuInit, a context and two buffers on each of the `ranks` GPUs
// CUDA_VISIBLE_DEVICES shows it, load libnccl, ncclGetVersion, ncclCommInitAll over them, one
// grouped ncclAllReduce (sum), wait for it, check every element on every GPU. Without
// keep_nccl_env, every NCCL_* variable but NCCL_DEBUG is dropped first (NCCL's defaults).
void nccl_child(const std::string& libcuda, const std::string& libnccl, int ranks,
                bool keep_nccl_env, child::LineWriter& out);

// The connection an NCCL INFO line announces, without its channel: "0[0] -> 1[1] via P2P/CUMEM"
// from "host:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"; nullopt for other lines.
std::optional<std::string> connection_of(std::string_view line);

// Everything the child said, folded into facts (steps, library, version, log, transports,
// child_error); a step begun and never finished is timed out when the deadline killed the child.
void fold_nccl_transcript(const std::vector<child::TimedLine>& lines, const child::ChildEnd& end,
                          NcclFacts& facts);

} // namespace gpf::nccl
