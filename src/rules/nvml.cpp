// Rules whose id starts with "nvml.": per-GPU health as the driver reports it through NVML
// (memory errors, recovery action, clocks, links, fabric, modes, processes) and NVML's own
// failures. Evidence quotes what the NVML children reported.
#include "common.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/topology.hpp"
#include "gpu_state.hpp"
#include "nvml_traffic.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpf {

namespace {

constexpr std::string_view k_src_queries =
    "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html";
constexpr std::string_view k_src_mem =
    "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html";
constexpr std::string_view k_src_recovery =
    "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/error-recovery-and-response-flags.html";
constexpr std::string_view k_src_dpr =
    "https://docs.nvidia.com/deploy/dynamic-page-retirement/index.html";
constexpr std::string_view k_src_clocks =
    "https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html";
constexpr std::string_view k_src_fabric =
    "https://docs.nvidia.com/deploy/nvml-api/group__nvmlFabricDefs.html";
constexpr std::string_view k_src_init =
    "https://docs.nvidia.com/deploy/nvml-api/group__nvmlInitializationAndCleanup.html";
constexpr std::string_view k_src_errors =
    "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html";

constexpr unsigned long long k_hw_slowdown = 0x8;
constexpr unsigned long long k_hw_thermal = 0x40;
constexpr unsigned long long k_hw_power_brake = 0x80;
constexpr int k_compute_exclusive_process = 3;
constexpr unsigned k_fabric_not_started = 1;
constexpr unsigned k_fabric_in_progress = 2;
constexpr unsigned k_fabric_completed = 3;

// The NVIDIA driver should be here (loaded module, or WSL2's driver): NVML failures then matter.
// Without it the driver rules already say why nothing works; NVML adds no second failure.
bool nvml_expected(const Facts& f) {
  return f.driver.loaded || f.is_wsl2();
}

std::string reset_command(const std::string& bus_id) {
  return fmt::format("nvidia-smi -r -i {}", bus_id);
}

// One evidence line that stands alone: which GPU, which NVML call, what it returned
// ("0000:18:00.0: nvmlDeviceGetRemappedRows: failureOccurred 1, uncorrectable 3").
std::string nvml_evidence(const std::string& bus_id, std::string_view call,
                          const std::string& value) {
  return fmt::format("{}: {}: {}", bus_id, call, value);
}

std::string code_text(int code, const std::string& text) {
  return text.empty() ? fmt::format("nvmlReturn_t {}", code) : fmt::format("{} ({})", code, text);
}

// The GPUs whose health NVML reported and that NVML actually answered for: NVML init passed.
template <class Fn> std::vector<Hit> each_gpu(const RuleContext& ctx, Fn&& fn) {
  std::vector<Hit> hits;
  const auto& n = ctx.facts.nvml;
  if (!n.ran || !n.init_ok()) {
    return hits;
  }
  for (const auto& g : n.gpus) {
    if (g.bus_id.empty()) {
      continue;
    }
    fn(g, ctx.job.label(g.bus_id), hits);
  }
  return hits;
}

// NVML's compute processes on the GPU, named as every row names a process on a GPU.
std::string nvml_users(const RuleContext& ctx, const std::string& bus_id) {
  std::vector<std::string> parts;
  for (const auto& u : ctx.job.state(bus_id).users) {
    if (u.in_nvml) {
      parts.push_back(gpu_user_text(u));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

} // namespace

std::span<const Rule> nvml_rules() {
  static const Rule rows[] = {
      {.id = "nvml.library-missing",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "NVML (libnvidia-ml.so.1) can be loaded where the NVIDIA driver is",
       .remedy =
           "install the driver's NVML library (package libnvidia-ml1 / the driver's utils package) or pass --libnvml PATH",
       .source = k_src_init,
       .explanation =
           "Without NVML the GPUs' own health (memory errors, recovery action, throttling, links) is unknown; "
           "only the kernel log speaks for it.",
       .evidence =
           "the loader's error for libnvidia-ml.so.1 (only when the kernel driver is loaded)",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-library-missing"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         const auto& n = ctx.facts.nvml;
         if (!n.ran || n.load_error.empty() || !nvml_expected(ctx.facts)) {
           return {};
         }
         return {Hit(fmt::format("{} could not be loaded: GPU health was not asked from the driver",
                                 n.library),
                     {n.load_error})};
       }},
      {.id = "nvml.symbol-missing",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "NVML exports the entry points the health probe needs",
       .remedy = "install an NVML that matches the driver (the same version as the kernel module)",
       .source = k_src_init,
       .explanation = "An NVML without nvmlInit_v2, the count or handle calls cannot name any GPU.",
       .evidence = "the missing symbol names",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-symbol-missing"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         const auto& n = ctx.facts.nvml;
         if (!n.ran || n.missing_symbols.empty() || !nvml_expected(ctx.facts)) {
           return {};
         }
         return {Hit(fmt::format("{} lacks required entry points: {}",
                                 n.library_path.empty() ? n.library : n.library_path,
                                 fmt::join(n.missing_symbols, ", ")),
                     n.missing_symbols)};
       }},
      {.id = "nvml.init-failed",
       .stage = Stage::host,
       .severity = Severity::fail,
       .severity_from = "warn when this user has no permission to ask the driver",
       .title = "NVML initialises",
       .remedy =
           "read the NVML error: reboot after a driver upgrade (version mismatch), load the nvidia module",
       .source = k_src_init,
       .explanation = "nvmlInit failing means no tool can ask the driver about the GPUs; "
                      "a version mismatch also stops CUDA. "
                      "No permission is a warning: this user cannot see the GPUs' health. "
                      "Unknown Error (999) inside a container whose host runs systemd is, per "
                      "NVIDIA's notice (https://github.com/NVIDIA/nvidia-docker/issues/1730), the "
                      "container having lost its device access when systemd reloaded its units: "
                      "only a new container gets it back.",
       .evidence = "the init call and its nvmlReturn_t with NVML's words",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-init-failed"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         const auto& n = ctx.facts.nvml;
         if (!n.ran || !n.init_code || n.init_ok() || !nvml_expected(ctx.facts)) {
           return {};
         }
         const int code = *n.init_code;
         std::string what;
         switch (code) {
         case k_nvml_lib_rm_version_mismatch:
           what =
               "the NVIDIA user-space libraries and the loaded kernel module are different versions (a driver upgrade without a reboot)";
           break;
         case k_nvml_driver_not_loaded:
           what = "NVML finds no NVIDIA kernel driver to talk to";
           break;
         case k_nvml_no_permission:
           what = "this user may not open the NVIDIA device nodes";
           break;
         case k_nvml_gpu_not_found:
           what = "NVML found no supported GPU";
           break;
         default:
           what = "NVML could not initialise";
         }
         // "Unknown Error" in a container: it lost access to the device nodes (the host's systemd
         // re-applied the container's cgroup device rules, e.g. at `systemctl daemon-reload`).
         const auto& svc = ctx.facts.topology.services;
         const bool container = svc.ran && svc.process_table && !svc.host_process_table();
         if (code == k_nvml_unknown && container) {
           what = "in a container this is what losing access to the GPUs' device nodes looks like: "
                  "the host's systemd re-applied the container's cgroup device rules (after a "
                  "`systemctl daemon-reload` or a package update that runs one)";
         }
         Hit hit(fmt::format("{} returned {}: {}", n.init_call, code_text(code, n.init_text), what),
                 {fmt::format("{}() = {}", n.init_call, code_text(code, n.init_text))});
         if (code == k_nvml_no_permission) {
           hit.severity =
               Severity::warn; // not a broken node: this user cannot see the GPUs' health
           hit.remedy =
               "run the check as a user in the group that owns /dev/nvidia* (or as the job's user), or let the site's health check run it as root";
         } else if (code == k_nvml_lib_rm_version_mismatch) {
           hit.remedy =
               "reboot the node (or unload and reload the nvidia modules) so that the kernel module matches the installed user-space driver";
         } else if (code == k_nvml_unknown && container) {
           hit.evidence.push_back(fmt::format(
               "proc/1/comm: {} (this process table is not the host's: a container or pod)",
               svc.init_comm.value_or("?")));
           hit.remedy =
               "Recreate the container (delete it and start a new one, or delete the pod): a restarted process in the same container stays cut off. "
               "To keep it from recurring, on the host create the /dev/char links runc needs (`sudo nvidia-ctk system create-dev-char-symlinks --create-all`, and NVIDIA's udev rule for later boots), "
               "or run the container engine with the cgroupfs cgroup driver; not nvidia-modprobe, group membership or a reboot of the host";
         }
         return {hit};
       }},
      {.id = "nvml.init-hung",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "NVML initialisation returns before the deadline",
       .remedy = "check the kernel log for Xid errors and hung-task reports; reboot the node",
       .source = k_src_init,
       .explanation =
           "A driver that does not answer nvmlInit within the deadline is wedged; CUDA will hang too.",
       .evidence = "the step that was running when the child was killed and for how long",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-init-hung"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         const auto& n = ctx.facts.nvml;
         if (!n.ran || !n.init_hang) {
           return {};
         }
         return {Hit(fmt::format("NVML {} did not return within {:.1f} s; the child was killed",
                                 n.init_hang->step, n.init_hang->after_ms / 1000),
                     {fmt::format("step {} still running after {:.0f} ms (deadline {} s)",
                                  n.init_hang->step, n.init_hang->after_ms, n.timeout_s)})};
       }},
      {.id = "nvml.gpu-hung",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Every NVML query on a GPU returns before the deadline",
       .remedy = "reset the GPU (`nvidia-smi -r -i <bus id>`) or reboot",
       .source = k_src_queries,
       .explanation =
           "An NVML call that never returns on one GPU means that GPU is wedged in the driver; "
           "the others were asked in their own children and still answered.",
       .evidence = "the NVML call the GPU's child was in when the deadline killed it",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-gpu-hung", "0000:3a:00.0"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (g.hang) {
             hits.emplace_back(
                 fmt::format("{}: NVML call {} did not return before the deadline", gpu,
                             g.hang->step),
                 std::vector<std::string>{fmt::format("step {} still running after {:.0f} ms",
                                                      g.hang->step, g.hang->after_ms)},
                 g.bus_id, Effect::gpu_unusable);
             hits.back().remedy = fmt::format(
                 "check the kernel log for Xid errors on {}; reset the GPU (`{}`) or reboot",
                 g.bus_id, reset_command(g.bus_id));
           } else if (!g.child_error.empty()) {
             hits.emplace_back(fmt::format("{}: its NVML child failed: {}", gpu, g.child_error),
                               std::vector<std::string>{g.child_error}, g.bus_id,
                               Effect::gpu_unusable);
           }
         });
       }},
      {.id = "nvml.gpu-unreachable",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "NVML can open every GPU the driver lists",
       .remedy = "reboot; reseat or replace a GPU that is lost again",
       .source = k_src_errors,
       .explanation =
           "NVML_ERROR_GPU_IS_LOST: the GPU has fallen off the bus. "
           "Other handle errors (reset required, interrupt issue, power cables) also keep work off the GPU. "
           "No permission is not reported: that GPU belongs to another container.",
       .evidence = "the handle call by PCI bus id and its nvmlReturn_t",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-gpu-lost", "0000:2a:00.0"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           // NO_PERMISSION: the GPU is not this process's (container, cgroup), not a broken one.
           if (!g.handle_error || g.handle_error->code == k_nvml_no_permission) {
             return;
           }
           const auto& e = *g.handle_error;
           const bool lost = e.code == k_nvml_gpu_is_lost;
           hits.emplace_back(
               fmt::format("{}: {}", gpu,
                           lost ? "NVML reports it lost (fallen off the bus)"
                                : "NVML cannot open it: " + code_text(e.code, e.text)),
               std::vector<std::string>{nvml_evidence(g.bus_id, "nvmlDeviceGetHandleByPciBusId_v2",
                                                      code_text(e.code, e.text))},
               g.bus_id, Effect::gpu_unusable);
           hits.back().remedy =
               lost
                   ? fmt::format(
                         "reboot the node; if {} is lost again, reseat or replace it (check the kernel log for Xid 79)",
                         g.bus_id)
                   : fmt::format("reset the GPU (`{}`) or reboot", reset_command(g.bus_id));
         });
       }},
      {.id = "nvml.row-remap-failure",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "No row remapping has failed",
       .remedy = "drain the GPU, run NVIDIA's field diagnostic and have it replaced (RMA)",
       .source = k_src_mem,
       .explanation =
           "A failed remap means a memory row could not be repaired; NVIDIA treats it as the RMA criterion.",
       .evidence = "nvmlDeviceGetRemappedRows: failureOccurred and the uncorrectable count",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-memory-faults", "0000:2a:00.0"), silent("nvml-health-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (g.remap_failure == true) {
             hits.emplace_back(
                 fmt::format("{}: a row remapping has failed: its memory can no longer be repaired",
                             gpu),
                 std::vector<std::string>{
                     nvml_evidence(g.bus_id, "nvmlDeviceGetRemappedRows",
                                   fmt::format("failureOccurred 1, uncorrectable {}",
                                               g.remapped_uncorrectable.value_or(0)))},
                 g.bus_id, Effect::gpu_unusable);
           }
         });
       }},
      {.id = "nvml.row-remap-pending",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "No row remapping is waiting for a GPU reset",
       .remedy = "reset the GPU when idle (`nvidia-smi -r -i <bus id>`) or reboot",
       .source = k_src_mem,
       .explanation =
           "Pending remaps take effect at the next reset; "
           "NVIDIA says new work can still start meanwhile, so the GPU stays in the recommendation.",
       .evidence = "nvmlDeviceGetRemappedRows: isPending and the counts",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-memory-faults", "0000:18:00.0"), silent("nvml-health-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (g.remap_pending == true && g.remap_failure != true) {
             hits.emplace_back(
                 fmt::format("{}: row remappings are pending; "
                             "they take effect at the next GPU reset (new work can still start)",
                             gpu),
                 std::vector<std::string>{
                     nvml_evidence(g.bus_id, "nvmlDeviceGetRemappedRows",
                                   fmt::format("isPending 1, correctable {}, uncorrectable {}",
                                               g.remapped_correctable.value_or(0),
                                               g.remapped_uncorrectable.value_or(0)))},
                 g.bus_id);
             hits.back().remedy = fmt::format(
                 "when the GPU is idle, reset it (`{}`) or reboot to apply the pending remaps",
                 reset_command(g.bus_id));
           }
         });
       }},
      {.id = "nvml.retired-pages-pending",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "No memory page is pending retirement",
       .remedy = "reset the GPU (`nvidia-smi -r -i <bus id>`) or reboot",
       .source = k_src_dpr,
       .explanation =
           "Before Ampere a double-bit error blocks new contexts until the page is retired, which needs a reset or a driver reload.",
       .evidence = "nvmlDeviceGetRetiredPagesPendingStatus and the retired page counts",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-memory-faults", "0000:3a:00.0"), silent("nvml-health-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (g.retired_pages_pending == true) {
             hits.emplace_back(
                 fmt::format(
                     "{}: memory pages are pending retirement; no new context is safe until they are retired",
                     gpu),
                 std::vector<std::string>{
                     nvml_evidence(g.bus_id, "nvmlDeviceGetRetiredPagesPendingStatus",
                                   fmt::format("pending yes (retired double-bit {}, single-bit {})",
                                               g.retired_pages_dbe.value_or(0),
                                               g.retired_pages_sbe.value_or(0)))},
                 g.bus_id, Effect::gpu_unusable);
             hits.back().remedy =
                 fmt::format("reset the GPU (`{}`) or reboot the node", reset_command(g.bus_id));
           }
         });
       }},
      {.id = "nvml.recovery-action",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "The driver asks for no GPU recovery action",
       .remedy =
           "do what the action says: reset the GPU (`nvidia-smi -r -i <bus id>`), drain peer traffic, or reboot",
       .source = k_src_recovery,
       .explanation =
           "From R565 the driver names the recovery a fault needs (reset, reboot, drain); "
           "until it is done, the GPU should not take new work. "
           "An unknown value is the driver asking for something.",
       .evidence = "field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (230)",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-health-faults", "0000:2a:00.0"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (!g.recovery_action || *g.recovery_action == 0) {
             return;
           }
           const unsigned a = *g.recovery_action;
           std::string what;
           std::string remedy;
           switch (a) {
           case 1:
             what = "GPU reset";
             remedy = fmt::format("stop the GPU's processes and reset it (`{}`)",
                                  reset_command(g.bus_id));
             break;
           case 2:
             what = "node reboot";
             remedy = "reboot the node";
             break;
           case 3:
             what = "drain peer-to-peer traffic";
             remedy =
                 "stop the processes that use peer-to-peer traffic, then check the recovery action again";
             break;
           case 4:
             what = "drain peer-to-peer traffic and reset";
             remedy = fmt::format("stop the GPU's processes, then reset it (`{}`)",
                                  reset_command(g.bus_id));
             break;
           default:
             what = fmt::format("unknown action {}", a);
             remedy = fmt::format(
                 "read the driver's documentation for recovery action {}; reset (`{}`) or reboot",
                 a, reset_command(g.bus_id));
           }
           hits.emplace_back(
               fmt::format("{}: the driver asks for a recovery action: {}", gpu, what),
               std::vector<std::string>{nvml_evidence(
                   g.bus_id, "nvmlDeviceGetFieldValues(NVML_FI_DEV_GET_GPU_RECOVERY_ACTION)",
                   std::to_string(a))},
               g.bus_id, Effect::gpu_unusable);
           hits.back().remedy = remedy;
         });
       }},
      {.id = "nvml.ecc-volatile-uncorrectable",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from =
           "warn on Ampere and later (errors are contained to the application that met them)",
       .title = "No uncorrectable ECC error since the driver loaded",
       .remedy =
           "reset the GPU (`nvidia-smi -r -i <bus id>`) or reboot; replace it if the errors return",
       .source = k_src_mem,
       .explanation =
           "Before Ampere a double-bit error blocks new contexts until its page is retired (the GPU is dropped). "
           "From Ampere on errors are contained to the application that met them: a warning, unless the row-remap or recovery-action checks fire.",
       .evidence = "nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE) and the architecture",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-health-faults", "0000:18:00.0"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (!g.ecc_volatile_uncorrected || *g.ecc_volatile_uncorrected == 0) {
             return;
           }
           const bool contained = g.architecture && *g.architecture >= k_nvml_arch_ampere;
           std::vector<std::string> ev{nvml_evidence(
               g.bus_id, "nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE)",
               fmt::format("{} since the driver loaded", *g.ecc_volatile_uncorrected))};
           if (g.architecture) {
             ev.push_back(nvml_evidence(g.bus_id, "nvmlDeviceGetArchitecture",
                                        std::to_string(*g.architecture)));
           }
           if (contained) {
             hits.emplace_back(
                 fmt::format("{}: {} since the driver loaded (contained on this architecture)", gpu,
                             counted(*g.ecc_volatile_uncorrected, "uncorrectable ECC error")),
                 ev, g.bus_id);
             hits.back().severity = Severity::warn;
           } else {
             hits.emplace_back(
                 fmt::format(
                     "{}: {} since the driver loaded: new contexts fail until the page is retired",
                     gpu, counted(*g.ecc_volatile_uncorrected, "uncorrectable ECC error")),
                 ev, g.bus_id, Effect::gpu_unusable);
           }
           hits.back().remedy =
               fmt::format("reset the GPU (`{}`) or reboot; replace it if the errors return",
                           reset_command(g.bus_id));
         });
       }},
      {.id = "nvml.ecc-aggregate-uncorrectable",
       .stage = Stage::gpu,
       .severity = Severity::info,
       .title = "Lifetime uncorrectable ECC errors",
       .remedy = "none needed now; watch the count (it persists across reboots)",
       .source = k_src_mem,
       .explanation =
           "Aggregate counts are history: they say the board has had memory errors, not that it has one now.",
       .evidence = "nvmlDeviceGetTotalEccErrors(UNCORRECTED, AGGREGATE)",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-memory-faults", "0000:5d:00.0"), silent("nvml-health-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (g.ecc_aggregate_uncorrected && *g.ecc_aggregate_uncorrected > 0 &&
               !(g.ecc_volatile_uncorrected && *g.ecc_volatile_uncorrected > 0)) {
             hits.emplace_back(
                 fmt::format("{}: {} over its lifetime", gpu,
                             counted(*g.ecc_aggregate_uncorrected, "uncorrectable ECC error")),
                 std::vector<std::string>{
                     nvml_evidence(g.bus_id, "nvmlDeviceGetTotalEccErrors(UNCORRECTED, AGGREGATE)",
                                   std::to_string(*g.ecc_aggregate_uncorrected))},
                 g.bus_id);
           }
         });
       }},
      {.id = "nvml.hw-slowdown",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "No hardware slowdown, thermal slowdown or power brake holds the clocks down",
       .remedy =
           "check the GPU's cooling (airflow, fans, inlet temperature) and power supply / cabling",
       .source = k_src_clocks,
       .explanation =
           "These reasons cut the clocks by half or more: the GPU works but slowly. "
           "Idle, application clocks and software power cap are normal and not reported.",
       .evidence =
           "nvmlDeviceGetCurrentClocksEventReasons bits 0x8, 0x40, 0x80 and the temperature",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-health-faults", "0000:3a:00.0"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (!g.clock_event_reasons) {
             return;
           }
           const unsigned long long r = *g.clock_event_reasons;
           std::vector<std::string> reasons;
           if (r & k_hw_slowdown) {
             reasons.emplace_back("hardware slowdown");
           }
           if (r & k_hw_thermal) {
             reasons.emplace_back("hardware thermal slowdown");
           }
           if (r & k_hw_power_brake) {
             reasons.emplace_back("hardware power brake");
           }
           if (reasons.empty()) {
             return;
           }
           std::vector<std::string> ev{nvml_evidence(
               g.bus_id, "nvmlDeviceGetCurrentClocksEventReasons", fmt::format("0x{:x}", r))};
           if (g.temperature_c) {
             ev.push_back(nvml_evidence(
                 g.bus_id, "nvmlDeviceGetTemperature(GPU)",
                 g.slowdown_temperature_c ? fmt::format("{} °C (slowdown threshold {} °C)",
                                                        *g.temperature_c, *g.slowdown_temperature_c)
                                          : fmt::format("{} °C", *g.temperature_c)));
           }
           hits.emplace_back(fmt::format("{}: clocks held down by {} (half speed or less)", gpu,
                                         fmt::join(reasons, ", ")),
                             ev, g.bus_id);
         });
       }},
      // One judgement with pcie.link-downtrained (LinkWidth::downtrained, the same GPUs, stage,
      // severity and effect): this row reports a GPU's own link only where sysfs did not read it.
      {.id = "nvml.pcie-width-degraded",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "The PCIe link runs at the GPU's maximum width",
       .remedy =
           "reseat the GPU or its riser; check the slot's wiring (lspci -vv: LnkSta against LnkCap)",
       .source = k_src_queries,
       .explanation =
           "A narrower link than the slot and GPU allow (x8 of x16) points at a lane or riser fault. "
           "sysfs reads the same link (pcie.link-downtrained, which also walks the links above); "
           "a GPU's link is reported here only when sysfs did not read it. The GPU stays usable.",
       .evidence = "nvmlDeviceGetCurrPcieLinkWidth against nvmlDeviceGetMaxPcieLinkWidth",
       .caused_by = "pcie.link-downtrained",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-link-faults", "0000:18:00.0"), silent("nvml-compute-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& bus : job_gpus(ctx)) {
           const auto* lead = leading(ctx.job.state(bus).link_width);
           if (!lead || lead->source != "nvml" || !lead->value.downtrained()) {
             continue;
           }
           const auto& w = lead->value;
           hits.emplace_back(
               fmt::format("{}: PCIe link trained at x{} of x{}", ctx.job.label(bus), w.width,
                           w.max_width),
               std::vector<std::string>{nvml_evidence(
                   bus, "nvmlDeviceGetCurrPcieLinkWidth / nvmlDeviceGetMaxPcieLinkWidth",
                   fmt::format("x{} of x{}", w.width, w.max_width))},
               bus);
         }
         return hits;
       }},
      {.id = "nvml.pcie-gen-below-max",
       .stage = Stage::gpu,
       .severity = Severity::info,
       .title = "The PCIe link generation (information)",
       .remedy = "none at idle; re-check under load if transfers are slow",
       .source = k_src_queries,
       .explanation =
           "GPUs lower their link speed when idle, so a lower generation at preflight time is normal.",
       .evidence = "nvmlDeviceGetCurrPcieLinkGeneration against nvmlDeviceGetMaxPcieLinkGeneration",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-link-faults", "0000:3a:00.0"), silent("nvml-compute-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (g.pcie_gen && g.pcie_gen_max && *g.pcie_gen < *g.pcie_gen_max) {
             hits.emplace_back(
                 fmt::format("{}: PCIe link at generation {} of {} (normal while idle)", gpu,
                             *g.pcie_gen, *g.pcie_gen_max),
                 std::vector<std::string>{nvml_evidence(
                     g.bus_id,
                     "nvmlDeviceGetCurrPcieLinkGeneration / nvmlDeviceGetMaxPcieLinkGeneration",
                     fmt::format("{} of {}", *g.pcie_gen, *g.pcie_gen_max))},
                 g.bus_id);
           }
         });
       }},
      {.id = "nvml.nvlink-down",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "Every NVLink of a GPU with NVLink is up",
       .remedy =
           "check the NVLink bridge or baseboard; reset the GPU or reboot, and run NVIDIA's diagnostics",
       .source = k_src_queries,
       .explanation =
           "A link down while the others are up costs peer bandwidth; NCCL may fall back to slower paths.",
       .evidence = "nvmlDeviceGetNvLinkState per link",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-link-faults", "0000:2a:00.0"), silent("nvml-compute-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           const auto& l = g.nvlink_active;
           const bool some_up = std::find(l.begin(), l.end(), true) != l.end();
           std::vector<std::string> down;
           for (std::size_t i = 0; i < l.size(); ++i) {
             if (!l[i]) {
               down.push_back(std::to_string(i));
             }
           }
           if (some_up && !down.empty()) {
             hits.emplace_back(
                 fmt::format("{}: NVLink {} down while its other links are up", gpu,
                             fmt::join(down, ", ")),
                 std::vector<std::string>{nvml_evidence(
                     g.bus_id, "nvmlDeviceGetNvLinkState",
                     fmt::format("{} of {} links active; inactive: {}", l.size() - down.size(),
                                 l.size(), fmt::join(down, ", ")))},
                 g.bus_id);
           }
         });
       }},
      {.id = "nvml.fabric-incomplete",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "NVSwitch GPUs are registered with the NVLink fabric",
       .remedy =
           "start nvidia-fabricmanager (same version as the driver) and check its log, then re-run",
       .source = k_src_fabric,
       .explanation =
           "On NVSwitch systems a GPU not yet in the fabric (or whose registration failed) makes CUDA fail with cudaErrorSystemNotReady (802). "
           "Where a GB200/GB300 node has no NVSwitch of its own (an NVL compute tray), the host Fabric Manager is not used (https://github.com/Azure/AgentBaker/pull/8839): "
           "the remedy then names the switch trays' fabric management and the IMEX service and channel (https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/imexchannels.html) instead.",
       .evidence =
           "nvmlDeviceGetGpuFabricInfo: state and status; the fabric manager process and package",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-link-faults", "0000:5d:00.0"), silent("nvml-compute-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [&ctx](const NvmlGpu& g, const std::string& gpu,
                                     std::vector<Hit>& hits) {
           if (!g.fabric_state || *g.fabric_state == 0) {
             return; // not an NVSwitch fabric GPU
           }
           const unsigned s = *g.fabric_state;
           std::string what;
           if (s == k_fabric_not_started) {
             what = "not registered with the NVLink fabric";
           } else if (s == k_fabric_in_progress) {
             what = "NVLink fabric registration still in progress";
           } else if (s == k_fabric_completed && g.fabric_status && *g.fabric_status != 0) {
             what = fmt::format("NVLink fabric registration failed (status {})", *g.fabric_status);
           } else if (s == k_fabric_completed) {
             return;
           } else {
             what = fmt::format("unknown NVLink fabric state {}", s);
           }
           std::vector<std::string> ev{
               nvml_evidence(g.bus_id, "nvmlDeviceGetGpuFabricInfo",
                             fmt::format("state {}, status {}", s, g.fabric_status.value_or(0)))};
           const auto& svc = ctx.facts.topology.services;
           if (svc.ran && svc.process_table) {
             // In a container or pod an empty process list proves nothing about the host's
             if (!svc.fabric_manager.empty()) {
               ev.push_back(fmt::format("nv-fabricmanager running (pid {})",
                                        svc.fabric_manager.front().pid));
             } else if (svc.host_process_table()) {
               ev.push_back("nv-fabricmanager: no such process running");
             } else {
               ev.push_back(
                   "nv-fabricmanager: not visible from here (this process table is not the "
                   "host's: a container or pod); check it on the host");
             }
           }
           if (svc.fabric_manager_version) {
             ev.push_back("fabric manager package: " + svc.fabric_manager_version_source);
           }
           Hit hit{fmt::format("{}: {}: CUDA fails with cudaErrorSystemNotReady (802)", gpu, what),
                   ev, g.bus_id, Effect::gpu_unusable};
           // A GB200/GB300 NVL compute tray has NVLink but no NVSwitch of its own: the host
           // Fabric Manager does not run there (starting it fails).
           if (auto tray = nvl_compute_tray(ctx.facts)) {
             hit.evidence.push_back(std::move(*tray));
             hit.remedy =
                 "Do not start nvidia-fabricmanager on this node (it has no NVSwitch: a "
                 "GB200/GB300 NVL compute tray). Check that the NVLink switch trays' fabric "
                 "management has this tray's GPUs in its partition, that the IMEX service "
                 "(nvidia-imex) runs here with the domain's node list, and that an IMEX channel "
                 "exists (/dev/nvidia-caps-imex-channels/channel0); then re-run";
           }
           hits.push_back(std::move(hit));
         });
       }},
      // One judgement with gpu.compute-mode-prohibited (compute_prohibited_hits): this row
      // reports the GPUs whose compute mode only NVML read (--no-cuda, a CUDA probe that did not
      // reach the attribute). Never both for one GPU; caused_by ranks the CUDA reading first.
      {.id = "nvml.compute-prohibited",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "No GPU is in compute mode PROHIBITED",
       .remedy = "Set Default mode as root: `nvidia-smi -i <bus id> -c DEFAULT`",
       .source = k_compute_modes_source,
       .explanation =
           "In Prohibited mode no process may create a context on the GPU: the job cannot use it, "
           "so it is left out of the recommendation. The CUDA attribute (gpu.compute-mode-prohibited) "
           "is the same setting; a GPU is reported once, here when only NVML read it.",
       .evidence = "nvmlDeviceGetComputeMode",
       .caused_by = "gpu.compute-mode-prohibited",
       // NVML's readings are in the job view only when its init succeeded.
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-compute-faults", "0000:5d:00.0"), silent("nvml-link-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return compute_prohibited_hits(ctx, "nvml");
       }},
      {.id = "nvml.exclusive-process-busy",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "No EXCLUSIVE_PROCESS GPU is already taken",
       .remedy = "wait for or stop the process holding the GPU, or leave the GPU out",
       .source = k_src_queries,
       .explanation =
           "In EXCLUSIVE_PROCESS mode one process owns the GPU; the job's context creation would fail.",
       .evidence = "nvmlDeviceGetComputeMode and nvmlDeviceGetComputeRunningProcesses_v2",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-compute-faults", "0000:18:00.0"), silent("nvml-link-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(
             ctx, [&ctx](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
               if (g.compute_mode != k_compute_exclusive_process) {
                 return;
               }
               const auto list = nvml_users(ctx, g.bus_id);
               if (!list.empty()) {
                 hits.emplace_back(
                     fmt::format("{}: EXCLUSIVE_PROCESS mode and already taken by {}", gpu, list),
                     std::vector<std::string>{
                         g.bus_id + ": nvmlDeviceGetComputeMode = 3 (EXCLUSIVE_PROCESS)",
                         g.bus_id + ": nvmlDeviceGetComputeRunningProcesses: " + list},
                     g.bus_id, Effect::gpu_unusable);
               }
             });
       }},
      {.id = "nvml.processes-present",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .severity_from = "info unless the node is expected to be idle (--expect-idle) or a process "
                        "holds GPU memory",
       .title = "No other compute process is on the GPUs",
       .remedy =
           "check who runs them (`ps -p <pid>`); a stale process from an earlier job should be stopped",
       .source = k_src_queries,
       .explanation =
           "Another process shares the GPU's memory and time: the job may run out of memory or slowly. "
           "A busy GPU is in use, not broken, so it stays in the recommendation. This row names the "
           "processes only NVML lists (in another PID namespace); one that proc also shows holding "
           "the GPU is process.holds-gpu's, with NVML's memory figure, so a process is named once. "
           "Both rows judge alike: a warning where a process holds GPU memory or the node is meant "
           "to be idle (--expect-idle), information otherwise.",
       .evidence = "nvmlDeviceGetComputeRunningProcesses_v2: pid and used memory",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-compute-faults", "0000:3a:00.0"), silent("nvml-link-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(
             ctx, [&ctx](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
               if (g.compute_mode == k_compute_exclusive_process) {
                 return; // nvml.exclusive-process-busy: the GPU is unusable, not shared
               }
               std::vector<std::string> names;
               std::vector<unsigned> pids;
               bool holds_memory = false;
               for (const auto& u : ctx.job.state(g.bus_id).users) {
                 if (u.in_nvml && !u.in_proc) {
                   names.push_back(gpu_user_text(u));
                   pids.push_back(u.pid);
                   holds_memory = holds_memory || u.holds_memory();
                 }
               }
               if (names.empty()) {
                 return;
               }
               const auto list = fmt::format("{}", fmt::join(names, ", "));
               hits.emplace_back(fmt::format("{}: already in use by {}", gpu, list),
                                 std::vector<std::string>{nvml_evidence(
                                     g.bus_id, "nvmlDeviceGetComputeRunningProcesses_v2", list)},
                                 g.bus_id);
               hits.back().severity = gpu_user_severity(ctx, holds_memory);
               hits.back().effect = gpu_user_effect(ctx);
               // the pids are of the host's PID namespace, where this checker cannot see them
               hits.back().remedy = fmt::format(
                   "check who runs pid {} on the host (`ps -p {}`); a stale process from an "
                   "earlier job should be stopped, or choose other GPUs for the job",
                   fmt::join(pids, ", "), fmt::join(pids, ","));
             });
       }},
      {.id = "nvml.mig-pending",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "No MIG mode change is waiting for a GPU reset",
       .remedy = "reset the GPU (`nvidia-smi -r -i <bus id>`) to apply it, or revert the change",
       .source = k_src_queries,
       .explanation =
           "A pending MIG mode takes effect at the next reset; until then the GPU runs in its current mode.",
       .evidence = "nvmlDeviceGetMigMode: current and pending",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-health-faults", "0000:5d:00.0"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (g.mig_current && g.mig_pending && *g.mig_current != *g.mig_pending) {
             hits.emplace_back(
                 fmt::format(
                     "{}: MIG mode change pending ({} -> {}); it applies at the next GPU reset",
                     gpu, *g.mig_current ? "enabled" : "disabled",
                     *g.mig_pending ? "enabled" : "disabled"),
                 std::vector<std::string>{nvml_evidence(
                     g.bus_id, "nvmlDeviceGetMigMode",
                     fmt::format("current {}, pending {}", *g.mig_current, *g.mig_pending))},
                 g.bus_id);
             hits.back().remedy =
                 fmt::format("reset the GPU (`{}`) to apply the MIG change, or revert it",
                             reset_command(g.bus_id));
           }
         });
       }},
      {.id = "nvml.persistence-off",
       .stage = Stage::gpu,
       .severity = Severity::info,
       .title = "Persistence mode (information)",
       .remedy = "run nvidia-persistenced so the driver keeps the GPUs initialised between jobs",
       .source = k_src_queries,
       .explanation =
           "Without persistence the driver tears a GPU down when its last client exits, so every job's first CUDA call pays the GPU's initialisation again.",
       .evidence = "nvmlDeviceGetPersistenceMode and the CUDA probe's context-creation time",
       // The sibling of persistence.not-running (the process table): no daemon is what usually
       // leaves the mode off. Both are information, so neither changes the verdict.
       .caused_by = "persistence.not-running",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-compute-faults", "0000:2a:00.0"), silent("nvml-link-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(
             ctx, [&ctx](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
               if (g.persistence_mode == false) {
                 std::vector<std::string> ev{
                     nvml_evidence(g.bus_id, "nvmlDeviceGetPersistenceMode", "disabled")};
                 if (const auto* d = ctx.facts.cuda.device_by_bus(g.bus_id)) {
                   for (const auto& s : d->steps) {
                     if (s.name == "primary_context" && s.ok) {
                       ev.push_back(fmt::format("{}: CUDA primary context took {:.0f} ms", g.bus_id,
                                                s.duration_ms));
                     }
                   }
                 }
                 hits.emplace_back(
                     fmt::format(
                         "{}: persistence mode off: every first CUDA start re-initialises the GPU",
                         gpu),
                     ev, g.bus_id);
               }
             });
       }},
      {.id = "nvml.errors-during-check",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "No link or memory error counter rose during the checker's own traffic",
       .remedy = "re-run the check; if the counter rises again, reset the GPU or reboot and run "
                 "NVIDIA's diagnostics (`dcgmi diag -r 3`) on it",
       .source = k_src_queries,
       .explanation =
           "The NVML child reads each GPU's error counters just before the CUDA stage's copies, "
           "bandwidth and active steps and again after them: NVLink replays, recoveries and CRC "
           "errors per link (https://docs.nvidia.com/deploy/nvml-api/group__NvLink.html), PCIe "
           "replays, volatile corrected ECC errors, the SRAM error threshold flag and a pending "
           "row remap. A counter our own traffic raised points at that link or that GPU's memory: "
           "it still works, so the GPU stays in the recommendation. A GPU another process uses "
           "is not judged (its errors may be that process's), nor one the CUDA stage did not "
           "reach.",
       .evidence = "each counter that rose: the NVML call, its value before and after",
       .reads = {ProbeId::nvml, ProbeId::cuda},
       .cases = {fires("nvml-traffic-faults", "0000:01:00.0"), silent("cuda-4gpu")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [&ctx](const NvmlGpu& g, const std::string& gpu,
                                     std::vector<Hit>& hits) {
           const auto* t = judged_window(ctx, g);
           const auto rises = t ? counter_rises(t->before, *t->after) : std::vector<CounterRise>{};
           if (rises.empty()) {
             return;
           }
           std::vector<std::string> what;
           std::vector<std::string> ev;
           for (const auto& r : rises) {
             what.push_back(r.link ? fmt::format("NVLink {} {}", *r.link, r.what) : r.what);
             ev.push_back(nvml_evidence(g.bus_id, r.call,
                                        fmt::format("{} before, {} after", r.before, r.after)));
           }
           hits.emplace_back(
               fmt::format("{}: {} rose during the checker's own traffic", gpu, join_some(what)),
               ev, g.bus_id);
         });
       }},
      {.id = "nvml.ecc-uncorrectable-during-check",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "No uncorrectable ECC error during the checker's own traffic",
       .remedy = "reset the GPU (`nvidia-smi -r -i <bus id>`), run NVIDIA's diagnostics on it and "
                 "replace it if the errors return",
       .source = k_src_mem,
       .explanation =
           "The volatile uncorrectable ECC count rose between the NVML child's reads before and "
           "after the CUDA stage: the GPU's memory failed under the checker's own copies and "
           "memory patterns, so a job's data would meet the same. The GPU is left out of the "
           "recommendation. A GPU another process uses is not judged.",
       .evidence = "nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE) before and after",
       .reads = {ProbeId::nvml, ProbeId::cuda},
       .cases = {fires("nvml-traffic-faults", "0000:02:00.0"), silent("cuda-4gpu")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [&ctx](const NvmlGpu& g, const std::string& gpu,
                                     std::vector<Hit>& hits) {
           const auto* t = judged_window(ctx, g);
           if (!t || !t->before.ecc_volatile_uncorrected || !t->after->ecc_volatile_uncorrected ||
               *t->after->ecc_volatile_uncorrected <= *t->before.ecc_volatile_uncorrected) {
             return;
           }
           const auto b = *t->before.ecc_volatile_uncorrected;
           const auto a = *t->after->ecc_volatile_uncorrected;
           hits.emplace_back(fmt::format("{}: {} during the checker's own traffic", gpu,
                                         counted(a - b, "uncorrectable ECC error")),
                             std::vector<std::string>{nvml_evidence(
                                 g.bus_id, "nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE)",
                                 fmt::format("{} before, {} after", b, a))},
                             g.bus_id, Effect::gpu_unusable);
           hits.back().remedy = fmt::format(
               "reset the GPU (`{}`), run NVIDIA's diagnostics on it and replace it if the "
               "errors return",
               reset_command(g.bus_id));
         });
       }},
      {.id = "nvml.clock-below-peers",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "No GPU's SM clock under the checker's load is far below its same-model peers'",
       .remedy = "read the clock-event reasons: check the GPU's cooling and power (cabling, "
                 "supply), its power limit (`nvidia-smi -q -d POWER`) and application clocks",
       .source = k_src_clocks,
       .explanation =
           "While the CUDA stage runs, the NVML child samples each GPU's SM clock, power and "
           "clock-event reasons. A GPU whose highest SM clock stays under 75% of the median of "
           "at least two other GPUs of its model on this node, all loaded by the active step, is "
           "held down: the job's slowest rank sets everyone's pace. The finding names the reasons "
           "NVML gave during the samples. The GPU stays in the recommendation.",
       .evidence = "the GPU's highest sampled SM clock and power, its peers' median, the "
                   "clock-event reasons seen",
       .reads = {ProbeId::nvml, ProbeId::cuda},
       .cases = {fires("nvml-traffic-faults", "0000:03:00.0"), silent("cuda-4gpu")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& low : clocks_below_peers(ctx)) {
           const auto& g = *low.gpu;
           const auto& d = g.traffic->during;
           std::vector<std::string> ev{
               nvml_evidence(g.bus_id, "nvmlDeviceGetClockInfo(SM)",
                             fmt::format("at most {} MHz in {}; median of {} other {} {:.0f} MHz",
                                         low.mhz, counted(d.count, "sample"), low.peers,
                                         g.name.value_or("?"), low.peers_median)),
               nvml_evidence(g.bus_id, "nvmlDeviceGetCurrentClocksEventReasons",
                             fmt::format("0x{:x} ({})", d.clock_event_reasons,
                                         clock_reason_names(d.clock_event_reasons)))};
           if (d.power_max_mw) {
             ev.push_back(nvml_evidence(g.bus_id, "nvmlDeviceGetPowerUsage",
                                        fmt::format("at most {:.0f} W", *d.power_max_mw / 1000.0)));
           }
           hits.emplace_back(
               fmt::format("{}: SM clock at most {} MHz under load, {:.0f}% of its peers' {:.0f} "
                           "MHz; NVML's reasons: {}",
                           ctx.job.label(g.bus_id), low.mhz, 100 * low.mhz / low.peers_median,
                           low.peers_median, clock_reason_names(d.clock_event_reasons)),
               ev, g.bus_id);
         }
         return hits;
       }},
      {.id = "nvml.inforom-corrupted",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "The GPU's InfoROM is valid",
       .remedy = "run NVIDIA's field diagnostic and have the board's InfoROM repaired or the "
                 "board replaced",
       .source = k_src_queries,
       .explanation =
           "nvmlDeviceValidateInforom reads the InfoROM from flash and verifies its checksums. "
           "The InfoROM keeps the board's ECC counts, retired pages and configuration: when it "
           "is corrupted those records cannot be trusted. The GPU still runs, so it stays in the "
           "recommendation.",
       .evidence = "nvmlDeviceValidateInforom's NVML_ERROR_CORRUPTED_INFOROM (14)",
       .reads = {ProbeId::nvml},
       .cases = {fires("nvml-traffic-faults", "0000:04:00.0"), silent("nvml-memory-faults")},
       .check = [](const RuleContext& ctx) -> std::vector<Hit> {
         return each_gpu(ctx, [](const NvmlGpu& g, const std::string& gpu, std::vector<Hit>& hits) {
           if (g.inforom_valid == false) {
             hits.emplace_back(
                 fmt::format("{}: NVML reports its InfoROM corrupted", gpu),
                 std::vector<std::string>{nvml_evidence(g.bus_id, "nvmlDeviceValidateInforom",
                                                        "14 (Corrupted infoROM)")},
                 g.bus_id);
           }
         });
       }},
  };
  return rows;
}

} // namespace gpf
