// Rules whose id starts with "env.": the job's environment: CUDA_VISIBLE_DEVICES,
// CUDA_DEVICE_ORDER, injection and debugging variables, NCCL switches.
#include "common.hpp"

namespace gpf {
namespace {

std::optional<std::string> set_value(const RuleContext& c, std::string_view name) {
  auto v = c.facts.env.get(name);
  if (!v || trim(*v).empty()) {
    return std::nullopt;
  }
  return v;
}

bool flag_on(const std::optional<std::string>& v) {
  return v && trim(*v) != "0";
}

std::vector<Hit> nccl_disabled(const RuleContext& c, std::string_view name, std::string_view what) {
  const auto v = set_value(c, name);
  if (!flag_on(v)) {
    return {};
  }
  return {{fmt::format("{} is set: {}", name, what),
           {fmt::format("{}={}", name, quote_evidence(*v, 80))}}};
}

} // namespace

std::span<const Rule> env_rules() {
  static const Rule rows[] = {
      {.id = "env.cuda-visible-devices-unknown-entry",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "Every CUDA_VISIBLE_DEVICES entry names a GPU of this host",
       .remedy =
           "Fix CUDA_VISIBLE_DEVICES: use indices below the GPU count or full GPU UUIDs (`nvidia-smi -L`)",
       .source =
           "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html",
       .explanation =
           "CUDA_VISIBLE_DEVICES names an index past the GPU count, or a UUID of no GPU here. "
           "CUDA stops reading the list at the first invalid entry and ignores the rest, so the "
           "job sees fewer GPUs than meant, or none. Confirm by hand: `echo "
           "\"$CUDA_VISIBLE_DEVICES\"` and `nvidia-smi -L`. Warn: the recommendation keeps the "
           "GPUs before the invalid entry, and --min-gpus fails the check when too few remain.",
       .evidence =
           "CUDA_VISIBLE_DEVICES in the job environment, each entry (an index, a GPU UUID or "
           "unique prefix, MIG-GPU-<uuid>/<gi>/<ci>) resolved against the GPUs in CUDA's "
           "enumeration order with their cuDeviceGetUuid, or the driver's list with its GPU "
           "UUID lines (proc/driver/nvidia/gpus/*/information) when CUDA did not enumerate.",
       .cases = {fires("environ-unknown-entry"), silent("environ-restricted")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& vd = c.job.visible;
         if (vd.ignored.empty()) {
           return {};
         }
         return {
             {fmt::format(
                  "CUDA_VISIBLE_DEVICES names no GPU at \"{}\"; CUDA ignores that entry and every one after it",
                  vd.ignored.front()),
              {"CUDA_VISIBLE_DEVICES=" + vd.raw}}};
       }},
      {.id = "env.cuda-visible-devices-empty",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "CUDA_VISIBLE_DEVICES is not set to the empty string",
       .remedy = "Unset CUDA_VISIBLE_DEVICES or set it to the GPUs the job should use",
       .source =
           "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html",
       .explanation =
           "CUDA_VISIBLE_DEVICES set to the empty string hides every GPU from CUDA (unset shows "
           "them all). A launcher or scheduler often leaves it empty for a job that asked for "
           "no GPU. The job would run without GPUs or fail. Confirm by hand: `env | grep "
           "CUDA_VISIBLE_DEVICES`. Warn: no GPU is recommended, and --min-gpus fails the check.",
       .evidence = "CUDA_VISIBLE_DEVICES in the job environment: set, but empty or only blanks.",
       .cases = {fires("environ-empty"), silent("environ-restricted")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         auto value = c.facts.env.get("CUDA_VISIBLE_DEVICES");
         if (!value || !trim(*value).empty()) {
           return {};
         }
         return {{"CUDA_VISIBLE_DEVICES is set but empty: the job will see no GPU",
                  {"CUDA_VISIBLE_DEVICES=" + *value}}};
       }},
      {.id = "env.cuda-visible-devices-duplicate",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "CUDA_VISIBLE_DEVICES names each GPU once",
       .remedy =
           "List each GPU once; "
           "launchers that count the entries (torchrun --nproc-per-node, accelerate) would start more ranks than there are GPUs, and CUDA does not document what duplicates do",
       .source =
           "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html",
       .explanation =
           "A GPU listed twice in CUDA_VISIBLE_DEVICES (by index and by UUID, or twice by index) is not documented by CUDA; launchers that derive the number of ranks from the list start more ranks than there are GPUs, which then contend for one GPU.",
       .evidence =
           "CUDA_VISIBLE_DEVICES of the job environment, each entry resolved to a GPU up to the first entry that names none.",
       .cases = {fires("topo-env-hazards"), silent("topo-mig-uuid")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto value = c.facts.env.get("CUDA_VISIBLE_DEVICES");
         if (!value || trim(*value).empty()) {
           return {};
         }
         std::map<std::string, std::string> first; // key -> first entry naming it
         std::vector<std::string> repeats;
         for (const auto& [entry, bus] : c.job.visible.entries) {
           std::string key = bus.empty() ? entry : bus; // MIG-<uuid> of an unknown GPU: itself
           if (auto mig = parse_mig_reference(entry)) {
             key += fmt::format("/{}/{}", mig->gpu_instance,
                                mig->compute_instance); // instances of one GPU differ
           }
           const auto [it, inserted] = first.emplace(key, entry);
           if (!inserted) {
             repeats.push_back(fmt::format("{} is named by \"{}\" and \"{}\"", c.job.label(bus),
                                           quote_evidence(it->second, 80),
                                           quote_evidence(entry, 80)));
           }
         }
         if (repeats.empty()) {
           return {};
         }
         std::vector<std::string> evidence{"CUDA_VISIBLE_DEVICES=" + quote_evidence(*value, 300)};
         evidence.insert(evidence.end(), repeats.begin(), repeats.end());
         return {{fmt::format("CUDA_VISIBLE_DEVICES names the same GPU more than once ({})",
                              counted(repeats.size(), "repeat")),
                  std::move(evidence)}};
       }},
      {.id = "env.cuda-visible-devices-mig-unknown",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "Every MIG instance CUDA_VISIBLE_DEVICES names exists",
       .remedy =
           "List the MIG instances with `nvidia-smi -L` and name existing ones, or create the instance (`nvidia-smi mig -cgi <profile> -C`)",
       .source = "docs/sources.md#cuda_visible_devices",
       .explanation =
           "CUDA_VISIBLE_DEVICES may name MIG instances as MIG-<GPU-UUID>/<gi>/<ci>. An instance that does not exist is an invalid entry: CUDA ignores it and every entry after it.",
       .evidence =
           "proc/driver/nvidia/capabilities/gpu<minor>/mig/gi<gi>/ci<ci>/access, which the driver creates for every compute instance.",
       .cases = {fires("topo-mig-unknown", "0000:18:00.0"), silent("topo-mig-uuid")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& mig : c.facts.topology.mig_entries) {
           if (mig.exists != false) {
             continue;
           }
           hits.push_back(
               {fmt::format(
                    "CUDA_VISIBLE_DEVICES entry \"{}\" names a MIG instance that does not exist on {}: CUDA ignores it and every entry after it",
                    quote_evidence(mig.entry, 120),
                    mig.bus_id ? c.job.label(*mig.bus_id) : std::string("its GPU")),
                {"/" + mig.path + ": No such file or directory",
                 "CUDA_VISIBLE_DEVICES=" +
                     quote_evidence(c.facts.env.get("CUDA_VISIBLE_DEVICES").value_or(""), 300)},
                mig.bus_id});
         }
         return hits;
       }},
      {.id = "env.device-order-ambiguous",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "GPU indices are unambiguous on a host with mixed GPU models",
       .remedy =
           "Export CUDA_DEVICE_ORDER=PCI_BUS_ID (gpu-preflight's env output does) or name GPUs by UUID in CUDA_VISIBLE_DEVICES",
       .source =
           "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html",
       .explanation =
           "CUDA numbers devices fastest first by default (CUDA_DEVICE_ORDER=FASTEST_FIRST); nvidia-smi and NVML number them by PCI bus id. With one model the two orders usually agree; with mixed models index N in CUDA_VISIBLE_DEVICES or in the job may be another GPU than nvidia-smi's GPU N.",
       .evidence =
           "The GPUs' models, CUDA_DEVICE_ORDER and the integer entries of CUDA_VISIBLE_DEVICES (unset, every GPU is used and only the numbering differs: not reported).",
       .cases = {fires("topo-env-hazards"), silent("topo-mig-uuid")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::map<std::string, int> models;
         for (const auto& g : c.facts.gpus) {
           if (g.model && g.excluded != true) {
             ++models[*g.model];
           }
         }
         const auto order = c.facts.env.get("CUDA_DEVICE_ORDER");
         if (models.size() < 2 || order == std::string("PCI_BUS_ID")) {
           return {};
         }
         // Only indices are ambiguous: unset, every GPU is used (only the numbering differs, and
         // gpu-preflight's own recommendation exports PCI_BUS_ID); UUIDs name GPUs unambiguously.
         // Named: split() returns views into it, and a temporary would die before the loop body
         // runs.
         const std::string visible = c.facts.env.get("CUDA_VISIBLE_DEVICES").value_or("");
         bool indices = false;
         for (auto entry : split(visible, ',')) {
           indices = indices || parse_uint(trim(entry)).has_value();
         }
         if (!indices) {
           return {};
         }
         std::vector<std::string> mix;
         for (const auto& [model, n] : models) {
           mix.push_back(fmt::format("{} x{}", quote_evidence(model, 80), n));
         }
         return {
             {fmt::format(
                  "GPUs of different models ({}) and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA numbers the fastest GPU first, so the indices in CUDA_VISIBLE_DEVICES may pick other GPUs than nvidia-smi's of the same numbers",
                  join(mix)),
              {order ? "CUDA_DEVICE_ORDER=" + quote_evidence(*order, 80)
                     : std::string("CUDA_DEVICE_ORDER is not set (FASTEST_FIRST)"),
               "CUDA_VISIBLE_DEVICES=" + quote_evidence(visible, 300)}}};
       }},
      {.id = "env.cuda-injection",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "No profiler or debugger library is injected into CUDA",
       .remedy = "Unset CUDA_INJECTION64_PATH unless the job is meant to run under that tool",
       .source = "docs/sources.md#job-environment-variables",
       .explanation =
           "CUDA_INJECTION64_PATH makes every CUDA process load the named library at initialisation (how CUPTI-based profilers and debuggers attach). Left set, it slows the job and a stale path breaks CUDA initialisation.",
       .evidence = "CUDA_INJECTION64_PATH in the job environment.",
       .cases = {fires("topo-env-hazards"), silent("topo-mig-uuid")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto v = set_value(c, "CUDA_INJECTION64_PATH");
         if (!v) {
           return {};
         }
         return {
             {"CUDA_INJECTION64_PATH is set: every CUDA process of the job loads that library (a profiler's or debugger's injection), which slows start-up and kernels and breaks CUDA initialisation when the library is stale",
              {"CUDA_INJECTION64_PATH=" + quote_evidence(*v, 300)}}};
       }},
      {.id = "env.launch-blocking",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "CUDA_LAUNCH_BLOCKING is not left on",
       .remedy = "Unset CUDA_LAUNCH_BLOCKING (or set it to 0) outside debugging sessions",
       .source =
           "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html",
       .explanation =
           "CUDA_LAUNCH_BLOCKING=1 makes every kernel launch synchronous, a debugging aid that makes training many times slower when left on.",
       .evidence = "CUDA_LAUNCH_BLOCKING in the job environment.",
       .cases = {fires("topo-env-hazards"), silent("topo-mig-uuid")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto v = set_value(c, "CUDA_LAUNCH_BLOCKING");
         if (!flag_on(v)) {
           return {};
         }
         return {
             {"CUDA_LAUNCH_BLOCKING is on: every kernel launch waits for the GPU to finish, a debugging setting that makes training many times slower",
              {"CUDA_LAUNCH_BLOCKING=" + quote_evidence(*v, 80)}}};
       }},
      {.id = "env.nccl-p2p-disabled",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Whether NCCL peer-to-peer is disabled",
       .remedy =
           "Nothing to do if it works around an ACS/IOMMU problem; otherwise unset NCCL_P2P_DISABLE for faster multi-GPU steps",
       .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
       .explanation =
           "NCCL_P2P_DISABLE=1 makes NCCL copy between GPUs through host memory. It is the usual workaround for ACS/IOMMU hangs; it also explains slower multi-GPU steps.",
       .evidence = "NCCL_P2P_DISABLE in the job environment.",
       .cases = {fires("topo-env-hazards"), silent("topo-mig-uuid")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return nccl_disabled(
             c, "NCCL_P2P_DISABLE",
             "NCCL copies between GPUs through host memory instead of peer-to-peer, which explains slower multi-GPU steps (it is also the usual workaround for ACS/IOMMU hangs)");
       }},
      {.id = "env.nccl-shm-disabled",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Whether NCCL's shared-memory transport is disabled",
       .remedy =
           "Nothing to do if /dev/shm cannot be enlarged; otherwise unset NCCL_SHM_DISABLE and give the job a bigger /dev/shm",
       .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
       .explanation =
           "NCCL_SHM_DISABLE=1 stops NCCL from using shared memory between processes; it falls back to network transports. The workaround for a small /dev/shm; it also explains slower steps.",
       .evidence = "NCCL_SHM_DISABLE in the job environment.",
       .cases = {fires("topo-env-hazards"), silent("topo-mig-uuid")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return nccl_disabled(
             c, "NCCL_SHM_DISABLE",
             "NCCL does not use shared memory between processes and falls back to network transports, which explains slower multi-GPU steps (it is also the workaround for a small /dev/shm)");
       }},
  };
  return rows;
}

} // namespace gpf
