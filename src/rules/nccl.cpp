// Rules whose id starts with "nccl.": the opt-in NCCL start-up test (--nccl). One child loads
// libnccl.so.2 where the job would, initialises one communicator over the GPUs the CUDA stage
// found usable (ncclCommInitAll), runs one all-reduce and checks the sum. A hang names its step
// and the GPUs; the step times are information, never judged. Facts: NCCL's nccl.h and user
// guide (docs/sources.md#nccl).
#include "common.hpp"
#include "gpu_hang.hpp"

namespace gpf {
namespace {

// The first step that did not pass, when it is `name` (nullptr otherwise).
const NcclStep* failed_at(const NcclFacts& n, std::string_view name) {
  const auto bad = std::find_if(n.steps.begin(), n.steps.end(), [](auto& s) { return !s.ok; });
  return bad != n.steps.end() && bad->name == name ? &*bad : nullptr;
}

// "rank 0: GPU 0 (0000:3b:00.0, NVIDIA H100 80GB HBM3)" per rank.
std::vector<std::string> rank_evidence(const RuleContext& c) {
  std::vector<std::string> out;
  const auto& gpus = c.facts.nccl.gpus;
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    out.push_back(fmt::format("rank {}: {}", r, c.job.label(gpus[r])));
  }
  return out;
}

std::string library_evidence(const NcclFacts& n) {
  return fmt::format("library: {} (found by {}); NCCL {}; environment: {}",
                     n.library_path.empty() ? n.library : n.library_path, n.library_from,
                     n.version.empty() ? "version unknown" : n.version,
                     n.env_mode == "job" ? "the job's NCCL_* variables" : "NCCL's defaults");
}

// What NCCL said last before it stopped: its final INFO lines.
void add_last_log_lines(const NcclFacts& n, std::vector<std::string>& evidence) {
  constexpr std::size_t k_lines = 3;
  const std::size_t from = n.log.size() > k_lines ? n.log.size() - k_lines : 0;
  for (std::size_t i = from; i < n.log.size(); ++i) {
    evidence.push_back(fmt::format("NCCL said: {}", n.log[i]));
  }
  if (n.log.empty()) {
    evidence.push_back("NCCL printed no INFO line before it stopped");
  }
}

// The test again with one NCCL variable set, on the same library, in the job's environment.
std::string retry_command(const NcclFacts& n, std::string_view variable) {
  return fmt::format("{} gpu-preflight --nccl={} --nccl-env job --nccl-timeout {:g}", variable,
                     n.library_path.empty() ? n.library : n.library_path, n.timeout_s);
}

// The transports NCCL's connection lines name ("... via P2P/CUMEM" gives "P2P/CUMEM"), each
// once; "" when it printed none.
std::string transports_of(const NcclFacts& n) {
  std::vector<std::string> kinds;
  for (const auto& line : n.transports) {
    const auto at = line.find(" via ");
    if (at == std::string::npos) {
      continue;
    }
    std::string kind(trim(std::string_view(line).substr(at + 5)));
    if (!kind.empty() && std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      kinds.push_back(std::move(kind));
    }
  }
  return fmt::format("{}", fmt::join(kinds, ", "));
}

// One finding for a step that hung: the step, the deadline, the GPUs, the transport, NCCL's last
// words; judged as every hang between GPUs is (gpu_hang.hpp): one GPU kept, the remedies in order.
std::vector<Hit> hung(const RuleContext& c, std::string_view step, std::string_view call) {
  const NcclFacts& n = c.facts.nccl;
  const NcclStep* s = failed_at(n, step);
  if (!n.ran || !s || !s->timed_out) {
    return {};
  }
  const std::string transport = transports_of(n);
  std::vector<std::string> evidence{
      fmt::format("{} over {} did not return within {:.1f} s (deadline {:g} s)", call,
                  counted(n.gpus.size(), "GPU"), s->duration_ms / 1000.0, n.timeout_s),
      library_evidence(n)};
  if (!transport.empty()) {
    evidence.push_back("transport: " + quote_evidence(transport, 200));
  }
  const auto ranks = rank_evidence(c);
  evidence.insert(evidence.end(), ranks.begin(), ranks.end());
  add_last_log_lines(n, evidence);
  GpuHang h;
  for (std::size_t i = 0; i < n.gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < n.gpus.size(); ++j) {
      h.pairs.emplace_back(n.gpus[i], n.gpus[j]);
    }
  }
  h.transport = transport.empty() ? "NCCL, before it named a transport" : "NCCL " + transport;
  h.retry = retry_command(n, "NCCL_P2P_DISABLE=1");
  for (const PciBridge* port : hang_acs_ports(c.facts, h)) {
    evidence.push_back(acs_evidence(*port));
  }
  Hit hit{fmt::format("NCCL hung in {} on GPUs {} ({}): start-up across GPUs hangs", step,
                      fmt::join(n.gpus, ", "), quote_evidence(h.transport, 120)),
          std::move(evidence)};
  hit.headline = fmt::format("NCCL hung in {}", step);
  judge_gpu_hang(c, h, hit);
  return {hit};
}

} // namespace

std::span<const Rule> nccl_rules() {
  static const Rule
      rows[] =
          {
              {.id = "nccl.not-loaded",
               .stage = Stage::host,
               .severity = Severity::warn,
               .title = "NCCL loads where the job would find it (--nccl)",
               .remedy =
                   "Install NCCL where the job finds it (pip install nvidia-nccl-cu12 in the job's Python environment, or the libnccl2 package), or name the library with --nccl=PATH",
               .source = "docs/sources.md#nccl",
               .explanation =
                   "With --nccl the checker opens libnccl.so.2 where the job's own dlopen would find it: a path given as --nccl=PATH, else LD_LIBRARY_PATH, else the Python environment's nvidia-nccl wheel (VIRTUAL_ENV, CONDA_PREFIX), else the loader's default search. A library that cannot be opened, or that lacks an entry point the test calls, means a job that loads NCCL the same way fails at its start. Warn: a job that brings its own NCCL (linked in, or loaded by path) is not affected.",
               .evidence =
                   "dlopen's error or the missing symbols, the library asked for and how it was found.",
               .cases = {fires("nccl-not-loaded"), silent("nccl-wrong-result")},
               .check = [](const RuleContext& c) -> std::vector<Hit> {
                 const NcclFacts& n = c.facts.nccl;
                 if (!n.ran || (n.load_error.empty() && n.missing_symbols.empty())) {
                   return {};
                 }
                 std::vector<std::string> evidence{
                     fmt::format("library: {} (found by {})", n.library, n.library_from)};
                 if (!n.load_error.empty()) {
                   evidence.push_back(fmt::format("dlopen: {}", n.load_error));
                 }
                 if (!n.missing_symbols.empty()) {
                   evidence.push_back(fmt::format(
                       "{} lacks {}", n.library_path.empty() ? n.library : n.library_path,
                       fmt::join(n.missing_symbols, ", ")));
                 }
                 return {Hit{fmt::format("NCCL could not be loaded from {}", n.library),
                             std::move(evidence)}};
               }},
              {.id = "nccl.init-hung",
               .stage = Stage::host,
               .severity = Severity::warn,
               .title = "NCCL's communicator initialisation finishes (--nccl)",
               .remedy =
                   "Start the job on one GPU (the recommendation keeps the best-placed one); for several, export NCCL_P2P_DISABLE=1 (first on GeForce GPUs or where NCCL_P2P_LEVEL forces peer-to-peer), then NCCL_SHM_DISABLE=1, and check PCIe ACS and the IOMMU (gpu-preflight's pcie. and iommu. findings)",
               .source =
                   "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
               .explanation =
                   "ncclCommInitAll over the usable GPUs did not return before --nccl-timeout. A job hangs the same way at its start, holding its allocation, with no error. NCCL's troubleshooting guide traces such hangs to peer-to-peer traffic over PCIe with ACS enabled or an IOMMU in translation mode, a /dev/shm too small for its shared-memory transport, and unusable network interfaces. The evidence gives NCCL's last INFO lines, which name the stage it was in. Warn, as a hang between GPUs seen by CUDA's peer copies (cuda.multi-gpu-hung) is: the recommendation keeps one GPU, the best-placed healthy one, and --min-gpus N > 1 makes it a fail.",
               .evidence =
                   "The step, its deadline, each rank's GPU, the library and NCCL's last NCCL_DEBUG=INFO lines.",
               .caused_by = "cuda.multi-gpu-hung cuda.multi-gpu-failed",
               .cases = {fires("nccl-init-hung"), silent("nccl-wrong-result")},
               .check = [](const RuleContext& c) -> std::vector<Hit> {
                 return hung(c, k_nccl_init_step, "ncclCommInitAll");
               }},
              {.id = "nccl.all-reduce-hung",
               .stage = Stage::host,
               .severity = Severity::warn,
               .title = "NCCL's first all-reduce finishes (--nccl)",
               .remedy =
                   "Start the job on one GPU (the recommendation keeps the best-placed one); for several, export NCCL_P2P_DISABLE=1 (first on GeForce GPUs or where NCCL_P2P_LEVEL forces peer-to-peer) and check PCIe ACS and the IOMMU; if the hang stays without peer-to-peer, drain the node for a GPU reset",
               .source =
                   "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
               .explanation =
                   "The communicator came up, but one all-reduce of 1 MiB per GPU did not finish before --nccl-timeout: the transports NCCL chose (listed in the facts) connect but do not carry data. A training job hangs in its first collective the same way. The usual causes are peer-to-peer over a PCIe path that drops or redirects the traffic (ACS, IOMMU), peer-to-peer that consumer GPUs report but do not carry, and a GPU or link in a bad state. Warn, as a hang between GPUs seen by CUDA's peer copies (cuda.multi-gpu-hung) is: the recommendation keeps one GPU, the best-placed healthy one, and --min-gpus N > 1 makes it a fail.",
               .evidence =
                   "The step, its deadline, each rank's GPU, the library and NCCL's last NCCL_DEBUG=INFO lines.",
               .caused_by = "cuda.multi-gpu-hung cuda.multi-gpu-failed",
               .reads = {ProbeId::nccl},
               .cases = {fires("nccl-all-reduce-hung"), silent("nccl-wrong-result")},
               .check = [](const RuleContext& c) -> std::vector<Hit> {
                 return hung(c, k_nccl_all_reduce_step, "ncclAllReduce");
               }},
              {.id = "nccl.wrong-result",
               .stage = Stage::host,
               .severity = Severity::fail,
               .title = "NCCL's all-reduce gives the right sum (--nccl)",
               .remedy =
                   "Drain the node: an all-reduce that returns a wrong sum corrupts training silently; rerun `gpu-preflight --nccl` with NCCL_P2P_DISABLE=1 exported and --nccl-env job to see whether peer-to-peer is at fault, and check the GPUs' memory (nvidia-smi -q -d ECC)",
               .source = "docs/sources.md#nccl",
               .explanation =
                   "Each rank contributes (rank + 1) x (i mod 1021 + 1) at element i, so every element of the result must be n(n+1)/2 x (i mod 1021 + 1). A different value on any rank means data was lost, doubled or corrupted on its way: the worst kind of failure, since training goes on with wrong gradients.",
               .evidence =
                   "The rank, the element, the value found and the sum expected; each rank's GPU.",
               .cases = {fires("nccl-wrong-result"), silent("nccl-call-failed")},
               .check = [](const RuleContext& c) -> std::vector<Hit> {
                 const NcclFacts& n = c.facts.nccl;
                 const NcclStep* s = failed_at(n, k_nccl_check_step);
                 if (!n.ran || !s || s->timed_out) {
                   return {};
                 }
                 std::vector<std::string> evidence{s->error_text, library_evidence(n)};
                 const auto ranks = rank_evidence(c);
                 evidence.insert(evidence.end(), ranks.begin(), ranks.end());
                 Hit hit{fmt::format("NCCL's all-reduce over GPUs {} gave a wrong sum",
                                     fmt::join(n.gpus, ", ")),
                         std::move(evidence)};
                 hit.remedy = fmt::format(
                     "Drain the node: an all-reduce that returns a wrong sum corrupts training silently. "
                     "See whether peer-to-peer is at fault: `{}`; check the GPUs' memory (nvidia-smi -q -d "
                     "ECC)",
                     retry_command(n, "NCCL_P2P_DISABLE=1"));
                 return {hit};
               }},
              {.id = "nccl.call-failed",
               .stage = Stage::host,
               .severity = Severity::fail,
               .title = "NCCL starts on the usable GPUs without an error (--nccl)",
               .remedy =
                   "Read NCCL's message in the evidence; rerun `gpu-preflight --nccl` with --nccl-env job to see whether the job's NCCL_* settings change it, and check the library's CUDA build against the driver",
               .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api.html",
               .explanation =
                   "An NCCL call returned an error code (ncclResult_t), or the test child died or failed a CUDA step it needs (its buffers). The evidence gives nccl.h's name for the code, the library's own message (ncclGetErrorString) and the detail of the last error (ncclGetLastError). A job calling NCCL the same way fails at its start.",
               .evidence =
                   "The failing step and call, the code's name, NCCL's message, the library and each rank's GPU.",
               .cases = {fires("nccl-call-failed"), silent("nccl-wrong-result")},
               .check = [](const RuleContext& c) -> std::vector<Hit> {
                 const NcclFacts& n = c.facts.nccl;
                 if (!n.ran || !n.load_error.empty() || !n.missing_symbols.empty()) {
                   return {};
                 }
                 const auto bad =
                     std::find_if(n.steps.begin(), n.steps.end(), [](auto& s) { return !s.ok; });
                 if (bad == n.steps.end() || bad->name == k_nccl_check_step ||
                     (bad->timed_out &&
                      (bad->name == k_nccl_init_step || bad->name == k_nccl_all_reduce_step))) {
                   return {}; // passed, a wrong sum (nccl.wrong-result), or NCCL hung (the *-hung
                              // rows)
                 }
                 std::vector<std::string> evidence{
                     bad->timed_out
                         ? fmt::format("step {} did not finish before the deadline ({:g} s)",
                                       bad->name, n.timeout_s)
                         : fmt::format("step {}: {}{}: {}", bad->name, bad->error_name,
                                       bad->error_code ? fmt::format(" ({})", *bad->error_code)
                                                       : "",
                                       bad->error_text),
                     library_evidence(n)};
                 const auto ranks = rank_evidence(c);
                 evidence.insert(evidence.end(), ranks.begin(), ranks.end());
                 return {Hit{fmt::format("NCCL failed in {}: {}", bad->name,
                                         bad->timed_out ? "did not finish" : bad->error_name),
                             std::move(evidence)}};
               }},
          };
  return rows;
}

} // namespace gpf
