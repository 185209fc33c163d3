// The CUDA probe's rows: loading libcuda, cuInit, each GPU's own start-up, the multi-GPU test and
// the mapping between CUDA's devices and the driver's GPUs. Facts and sources:
// ../shared/reference/nvidia-facts.md (§1d, §9, §10, §11). Evidence quotes what the children
// reported (the driver's error names and texts, step names and their durations).
#include "gpf/probes/cuda_probe.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/topology.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpf {
namespace {

constexpr std::string_view k_src_api =
    "nvidia-facts.md §10a–10b (cuda.h: entry points, CUresult values)";
constexpr std::string_view k_src_probe =
    "gpu-preflight CUDA probe (docs/cuda-probe.md); nvidia-facts.md §10a";
constexpr std::string_view k_src_p2p = "nvidia-facts.md §11 (NCCL troubleshooting: PCIe ACS / "
                                       "IOMMU, NCCL_P2P_DISABLE), §8 (kernel 5.5 heuristic)";
constexpr std::size_t k_max_evidence_lines = 8;

constexpr int k_stub_library = 34;
constexpr int k_driver_mismatch = 803;
constexpr int k_compat_not_supported = 804;

// The NVIDIA driver should be here: loaded kernel module, or WSL2's driver in Windows.
bool driver_expected(const Facts& f) {
  return f.driver.loaded || f.is_wsl2();
}

std::string ms_text(double ms) {
  return ms >= 1000 ? fmt::format("{:.2f} s", ms / 1000) : fmt::format("{:.1f} ms", ms);
}

// "CUDA_ERROR_UNKNOWN (999): cuInit: unknown error", or how long a hung step had run.
std::string step_error(const CudaStep& s) {
  if (s.timed_out) {
    return fmt::format("{} did not finish within {}; the child was killed at the deadline", s.name,
                       ms_text(s.duration_ms));
  }
  std::string out =
      fmt::format("{} failed after {}: {}", s.name, ms_text(s.duration_ms), s.error_name);
  if (s.error_code) {
    out += fmt::format(" ({})", *s.error_code);
  }
  if (!s.error_text.empty()) {
    out += ": " + s.error_text;
  }
  return out;
}

std::string steps_text(const std::vector<CudaStep>& steps) {
  std::vector<std::string> parts;
  for (const auto& s : steps) {
    parts.push_back(s.ok          ? fmt::format("{} {}", s.name, ms_text(s.duration_ms))
                    : s.timed_out ? fmt::format("{} HUNG", s.name)
                                  : fmt::format("{} FAILED", s.name));
  }
  return fmt::format("steps: {}", fmt::join(parts, ", "));
}

const CudaStep* first_bad(const std::vector<CudaStep>& steps) {
  auto it = std::find_if(steps.begin(), steps.end(), [](const CudaStep& s) { return !s.ok; });
  return it == steps.end() ? nullptr : &*it;
}

std::string device_label(const CudaDevice& d) {
  return fmt::format("CUDA device {} ({}{})", d.index, d.bus_id, d.uuid ? ", " + *d.uuid : "");
}

std::string library_evidence(const CudaFacts& c) {
  return fmt::format("libcuda: {}", c.library_path.empty() ? c.library : c.library_path);
}

std::string timeout_evidence(const CudaFacts& c) {
  return fmt::format("--cuda-timeout {:g} s", c.timeout_s);
}

// Why CUDA did not reach enumeration, as one classified failure.
enum class StartFailure { none, load, symbols, stub, mismatch, hung, failed };

StartFailure start_failure(const CudaFacts& c) {
  if (!c.ran || c.enumeration_complete) {
    return StartFailure::none;
  }
  if (!c.load_error.empty()) {
    return StartFailure::load;
  }
  if (!c.missing_symbols.empty()) {
    return StartFailure::symbols;
  }
  const CudaStep* bad = first_bad(c.enumeration_steps);
  if (bad && bad->error_code == k_stub_library) {
    return StartFailure::stub;
  }
  if (bad && (bad->error_code == k_driver_mismatch || bad->error_code == k_compat_not_supported)) {
    return StartFailure::mismatch;
  }
  if ((bad && bad->timed_out) || (!bad && c.deadline_hit)) {
    return StartFailure::hung;
  }
  return StartFailure::failed;
}

std::vector<std::string> start_evidence(const CudaFacts& c) {
  std::vector<std::string> ev;
  if (const CudaStep* bad = first_bad(c.enumeration_steps)) {
    ev.push_back(step_error(*bad));
  } else if (!c.child_error.empty()) {
    ev.push_back("enumeration child: " + c.child_error);
  }
  ev.push_back(library_evidence(c));
  return ev;
}

std::vector<Hit> library_missing(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  if (start_failure(cuda) != StartFailure::load) {
    return {};
  }
  Hit hit{fmt::format("{} cannot be loaded, so CUDA cannot start", cuda.library),
          {"dlopen: " + cuda.load_error}};
  if (!driver_expected(c.facts)) {
    hit.message = fmt::format(
        "{} was not found; the NVIDIA driver is not loaded either, so there is no CUDA to start",
        cuda.library);
    hit.severity = Severity::info;
    hit.remedy = "Nothing to do on a host without NVIDIA GPUs; otherwise install and load the "
                 "NVIDIA driver first "
                 "(see driver.not-loaded), which also installs libcuda.so.1";
  }
  return {hit};
}

std::vector<Hit> stub_library(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  const bool stub_path = contains(cuda.library_path, "/stubs/");
  if (start_failure(cuda) != StartFailure::stub && !(cuda.ran && stub_path)) {
    return {};
  }
  auto ev = start_evidence(cuda);
  if (auto ld = c.facts.env.get("LD_LIBRARY_PATH")) {
    ev.push_back("LD_LIBRARY_PATH=" + *ld);
  }
  return {{"The CUDA toolkit's stub libcuda shadows the driver's: every CUDA call returns "
           "CUDA_ERROR_STUB_LIBRARY",
           std::move(ev)}};
}

std::vector<Hit> driver_mismatch(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  if (start_failure(cuda) != StartFailure::mismatch) {
    return {};
  }
  const CudaStep* bad = first_bad(cuda.enumeration_steps);
  auto ev = start_evidence(cuda);
  if (!c.facts.driver.version_text.empty()) {
    ev.push_back(fmt::format("kernel module: {} (/{})", c.facts.driver.version_text,
                             c.facts.driver.version_source));
  }
  if (cuda.driver_version) {
    ev.push_back(fmt::format("cuDriverGetVersion: {} (CUDA {})", *cuda.driver_version,
                             cuda_version_text(*cuda.driver_version)));
  }
  const bool compat = bad && bad->error_code == k_compat_not_supported;
  return {{compat ? "A forward-compatibility libcuda (cuda-compat) is loaded on a GPU that does "
                    "not support forward "
                    "compatibility: cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"
                  : "libcuda and the NVIDIA kernel module come from different driver versions: "
                    "cuInit fails with "
                    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
           std::move(ev)}};
}

std::vector<Hit> required_symbol_missing(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  if (!cuda.ran || cuda.missing_symbols.empty()) {
    return {};
  }
  std::vector<std::string> ev;
  for (const auto& s : cuda.missing_symbols) {
    ev.push_back(fmt::format("dlsym({}): not found in {}", s,
                             cuda.library_path.empty() ? cuda.library : cuda.library_path));
  }
  return {{fmt::format("libcuda lacks entry points the probe needs: {}",
                       fmt::join(cuda.missing_symbols, ", ")),
           std::move(ev)}};
}

std::vector<Hit> optional_symbol_missing(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  if (!cuda.ran || cuda.missing_optional_symbols.empty()) {
    return {};
  }
  std::vector<std::string> ev;
  for (const auto& s : cuda.missing_optional_symbols) {
    ev.push_back(fmt::format("dlsym({}): not found in {}", s,
                             cuda.library_path.empty() ? cuda.library : cuda.library_path));
  }
  return {
      {fmt::format(
           "libcuda lacks optional entry points ({}); the measurements that need them were skipped",
           fmt::join(cuda.missing_optional_symbols, ", ")),
       std::move(ev)}};
}

std::vector<Hit> init_failed(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  if (start_failure(cuda) != StartFailure::failed) {
    return {};
  }
  return {{"CUDA failed to initialise: no GPU can be used", start_evidence(cuda)}};
}

std::vector<Hit> init_hung(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  if (start_failure(cuda) != StartFailure::hung) {
    return {};
  }
  auto ev = start_evidence(cuda);
  ev.push_back(timeout_evidence(cuda));
  return {{"CUDA initialisation hung: the enumeration child did not finish before the deadline",
           std::move(ev)}};
}

Hit gpu_hit(const CudaDevice& d, const CudaStep& bad, std::string message) {
  Hit hit{std::move(message),
          {fmt::format("{}: {}", device_label(d), step_error(bad)), steps_text(d.steps)},
          d.bus_id,
          Effect::gpu_unusable};
  if (!d.visible_as.empty()) {
    hit.evidence.push_back("child ran with CUDA_VISIBLE_DEVICES=" + d.visible_as);
  }
  return hit;
}

std::vector<Hit> gpu_failed(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& d : c.facts.cuda.devices) {
    const CudaStep* bad = first_bad(d.steps);
    if (!c.facts.cuda.enumerated() || d.usable || d.in_use || (bad && bad->timed_out)) {
      continue; // a GPU held by another process is reported by cuda.gpu-in-use, not as broken
    }
    if (!bad) {
      hits.push_back({fmt::format("GPU {} (CUDA {}) was not tested: its child never reported",
                                  d.bus_id, d.index),
                      {device_label(d) + ": no steps recorded"},
                      d.bus_id,
                      Effect::gpu_unusable});
      continue;
    }
    hits.push_back(gpu_hit(d, *bad,
                           fmt::format("GPU {} (CUDA {}) failed CUDA start-up at step {}: {}",
                                       d.bus_id, d.index, bad->name, bad->error_name)));
  }
  return hits;
}

// Taken, not broken: no effect on the GPU (it is not dropped, so it never counts against --min-gpus).
std::vector<Hit> gpu_in_use(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& d : c.facts.cuda.devices) {
    const CudaStep* bad = first_bad(d.steps);
    if (!c.facts.cuda.enumerated() || !d.in_use || !bad) {
      continue;
    }
    std::vector<std::string> ev{fmt::format("{}: {}", device_label(d), step_error(*bad))};
    ev.push_back(d.holders.empty() ? std::string("processes holding it: not known (the process table shows none)")
                                   : fmt::format("processes holding it: {}", fmt::join(d.holders, ", ")));
    if (d.compute_mode) {
      ev.push_back(fmt::format("compute mode {} (0 default, 2 prohibited, 3 exclusive-process)", *d.compute_mode));
    }
    hits.push_back({fmt::format("GPU {} (CUDA {}) is in use by another process: {} at step {}", d.bus_id, d.index,
                                bad->error_name, bad->name),
                    std::move(ev), d.bus_id});
  }
  return hits;
}

std::vector<Hit> gpu_hung(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& d : c.facts.cuda.devices) {
    const CudaStep* bad = first_bad(d.steps);
    if (!c.facts.cuda.enumerated() || d.usable || !bad || !bad->timed_out) {
      continue;
    }
    hits.push_back(gpu_hit(d, *bad,
                           fmt::format("GPU {} (CUDA {}) hung in CUDA start-up at step {}",
                                       d.bus_id, d.index, bad->name)));
  }
  return hits;
}

// cuInit + primary context: the part of a GPU's start-up that includes its initialisation.
double init_ms(const CudaDevice& d) {
  double ms = 0;
  for (const auto& s : d.steps) {
    if (s.name == "cuInit" || s.name == "primary_context") {
      ms += s.duration_ms;
    }
  }
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Slow: more than 5x the median of the other GPUs and over a second.
std::vector<Hit> gpu_slow_init(const RuleContext& c) {
  std::vector<const CudaDevice*> measured;
  for (const auto& d : c.facts.cuda.devices) {
    if (d.usable) {
      measured.push_back(&d);
    }
  }
  std::vector<Hit> hits;
  if (measured.size() < 2) {
    return hits;
  }
  for (const auto* d : measured) {
    std::vector<double> others;
    for (const auto* o : measured) {
      if (o != d) {
        others.push_back(init_ms(*o));
      }
    }
    const double mine = init_ms(*d);
    const double typical = median(others);
    if (mine > 1000 && mine > 5 * typical) {
      hits.push_back(
          {fmt::format("GPU {} (CUDA {}) took {} to initialise, {:.0f}x the other GPUs", d->bus_id,
                       d->index, ms_text(mine), typical > 0 ? mine / typical : 0.0),
           {fmt::format("{}: cuInit + primary_context {}; median of the other GPUs {}",
                        device_label(*d), ms_text(mine), ms_text(typical)),
            steps_text(d->steps)},
           d->bus_id});
    }
  }
  return hits;
}

std::string cuda_list(const CudaFacts& cuda) {
  std::vector<std::string> buses;
  for (const auto& d : cuda.devices) {
    buses.push_back(d.bus_id);
  }
  return fmt::format("CUDA enumerated {} device(s){}{}", cuda.devices.size(),
                     buses.empty() ? "" : ": ", fmt::join(buses, ", "));
}

std::vector<Hit> gpu_not_enumerated(const RuleContext& c) {
  std::vector<Hit> hits;
  const auto& cuda = c.facts.cuda;
  if (!cuda.enumerated()) {
    return hits;
  }
  for (const auto& gpu : c.facts.gpus) {
    if (gpu.excluded == true || cuda.device_by_bus(gpu.bus_id)) {
      continue;
    }
    hits.push_back(
        {fmt::format("GPU {} is listed by the driver but CUDA does not enumerate it", gpu.bus_id),
         {fmt::format("/proc/driver/nvidia/gpus/{}: listed by the driver", gpu.bus_id),
          cuda_list(cuda)},
         gpu.bus_id,
         Effect::gpu_unusable});
  }
  return hits;
}

std::vector<Hit> device_not_listed(const RuleContext& c) {
  std::vector<Hit> hits;
  const auto& cuda = c.facts.cuda;
  if (!cuda.enumerated() || !c.facts.driver.loaded || c.facts.is_wsl2()) {
    return hits;
  }
  for (const auto& d : cuda.devices) {
    if (c.facts.gpu_by_bus(d.bus_id)) {
      continue;
    }
    std::vector<std::string> driver_buses;
    for (const auto& g : c.facts.gpus) {
      driver_buses.push_back(g.bus_id);
    }
    hits.push_back(
        {fmt::format("{} is not among the driver's GPUs: the driver-side checks did not cover it",
                     device_label(d)),
         {fmt::format("{}: bus id {}", device_label(d), d.bus_id),
          fmt::format("/proc/driver/nvidia/gpus: {}",
                      driver_buses.empty() ? "(none)"
                                           : fmt::format("{}", fmt::join(driver_buses, ", ")))},
         d.bus_id});
  }
  return hits;
}

std::string peer_text(const CudaPeerResult& p) {
  if (p.timed_out) {
    return fmt::format("peer copy CUDA {} -> CUDA {} did not finish within {}; the child was "
                       "killed at the deadline",
                       p.from, p.to, ms_text(p.duration_ms));
  }
  const std::string pair = fmt::format("peer copy CUDA {} -> CUDA {} (peer access: {})", p.from,
                                       p.to, p.can_access ? "yes" : "no");
  std::string out =
      fmt::format("{} failed after {}: {}", pair, ms_text(p.duration_ms), p.error_name);
  if (p.error_code) {
    out += fmt::format(" ({})", *p.error_code);
  }
  if (!p.error_text.empty()) {
    out += ": " + p.error_text;
  }
  return out;
}

bool multi_hung(const CudaFacts& cuda) {
  return std::any_of(cuda.peers.begin(), cuda.peers.end(),
                     [](const CudaPeerResult& p) { return p.timed_out; }) ||
         std::any_of(cuda.multi_gpu_steps.begin(), cuda.multi_gpu_steps.end(),
                     [](const CudaStep& s) { return s.timed_out; });
}

std::string multi_remedy(const Facts& f) {
  std::string remedy =
      "Start the job on one GPU (the recommendation keeps the first usable one). To use several "
      "GPUs: try "
      "NCCL_P2P_DISABLE=1 (NCCL then avoids peer-to-peer copies); check PCIe ACS on the bridges "
      "above the GPUs "
      "(`lspci -vvv`: ACSCtl SrcValid+/ReqRedir+/CmpltRedir+ should be off) and the IOMMU "
      "(`iommu=pt`, or VT-d/AMD-Vi "
      "off in the firmware); on a virtual machine, ask for GPUs with peer-to-peer support";
  if (f.kernel.version && *f.kernel.version < Version({5, 5, 0})) {
    remedy += fmt::format(
        "; kernel {} is below 5.5: upgrading it is a known remedy for multi-GPU start-up hangs",
        f.kernel.version->str());
  }
  return remedy;
}

const CudaDevice* device_at(const CudaFacts& cuda, int index) {
  for (const auto& d : cuda.devices) {
    if (d.index == index) {
      return &d;
    }
  }
  return nullptr;
}

// The causes the topology probes found between the GPUs of the failed copies (or, when the whole
// child hung before any copy, between every pair it covered), each named once, with the config
// space of the bridges that redirect peer traffic as evidence.
struct MultiCauses {
  std::vector<std::string> causes;
  std::vector<std::string> evidence;
};
MultiCauses multi_causes(const Facts& f) {
  const auto& cuda = f.cuda;
  std::vector<std::pair<int, int>> pairs;
  for (const auto& p : cuda.peers) {
    if (!p.ok) {
      pairs.emplace_back(p.from, p.to);
    }
  }
  if (pairs.empty()) {
    for (std::size_t i = 0; i < cuda.multi_gpu_devices.size(); ++i) {
      for (std::size_t j = i + 1; j < cuda.multi_gpu_devices.size(); ++j) {
        pairs.emplace_back(cuda.multi_gpu_devices[i], cuda.multi_gpu_devices[j]);
      }
    }
  }
  MultiCauses out;
  for (const auto& [from, to] : pairs) {
    const CudaDevice* a = device_at(cuda, from);
    const CudaDevice* b = device_at(cuda, to);
    if (!a || !b) {
      continue;
    }
    for (auto& cause : p2p_causes(f, a->bus_id, b->bus_id)) {
      if (std::find(out.causes.begin(), out.causes.end(), cause) == out.causes.end()) {
        out.causes.push_back(std::move(cause));
      }
    }
    for (const PciBridge* bridge : acs_redirects_between(f.topology, a->bus_id, b->bus_id)) {
      auto line = acs_evidence(*bridge);
      if (std::find(out.evidence.begin(), out.evidence.end(), line) == out.evidence.end()) {
        out.evidence.push_back(std::move(line));
      }
    }
  }
  return out;
}

std::vector<Hit> multi_evidence_hits(const RuleContext& c, bool hung) {
  const auto& cuda = c.facts.cuda;
  if (!cuda.multi_gpu_ran || cuda.multi_gpu_ok != false || multi_hung(cuda) != hung) {
    return {};
  }
  std::vector<std::string> ev;
  if (const CudaStep* bad = first_bad(cuda.multi_gpu_steps)) {
    ev.push_back("multi-GPU child: " + step_error(*bad));
  }
  for (const auto& p : cuda.peers) {
    if (!p.ok && ev.size() < k_max_evidence_lines) {
      ev.push_back(peer_text(p));
    }
  }
  if (ev.empty()) {
    ev.push_back("multi-GPU child: no peer copy completed");
  }
  std::vector<std::string> names;
  for (int i : cuda.multi_gpu_devices) {
    names.push_back(std::to_string(i));
  }
  ev.push_back(fmt::format("GPUs tested together: CUDA {}", fmt::join(names, ", ")));
  if (hung) {
    ev.push_back(timeout_evidence(cuda));
  }
  std::string message = hung ? "The multi-GPU test hung: start-up across GPUs is at risk of hanging "
                               "(peer-to-peer copies)"
                             : "The multi-GPU test failed: peer-to-peer copies between GPUs do not work";
  const auto found = multi_causes(c.facts);
  if (!found.causes.empty()) {
    message += "; likely cause: " + found.causes.front();
    if (found.causes.size() > 1) {
      message += fmt::format(" (and {} more)", found.causes.size() - 1);
    }
  }
  for (std::size_t i = 0; i < found.evidence.size() && i < k_max_evidence_lines; ++i) {
    ev.push_back(found.evidence[i]);
  }
  Hit hit{std::move(message), std::move(ev)};
  hit.effect = Effect::single_gpu_only;
  hit.remedy = multi_remedy(c.facts);
  return {hit};
}

std::vector<Hit> multi_gpu_failed(const RuleContext& c) {
  return multi_evidence_hits(c, false);
}
std::vector<Hit> multi_gpu_hung(const RuleContext& c) {
  return multi_evidence_hits(c, true);
}

const Rule k_rules[] = {
    {"cuda.library-missing", Severity::fail, Stage::host,
     "libcuda.so.1 (the driver's CUDA library) loads",
     "Install the NVIDIA driver's user-space libraries matching the kernel module (libcuda.so.1, "
     "e.g. the "
     "libnvidia-compute-<version> package); in a container, start it with the NVIDIA runtime "
     "(--gpus all / "
     "--runtime=nvidia); --libcuda PATH names the library explicitly",
     "nvidia-facts.md §9 (libcuda.so.1 -> libcuda.so.<driver version>), §10a", library_missing},
    {"cuda.stub-library", Severity::fail, Stage::host,
     "The libcuda that loads is the driver's, not the toolkit's stub",
     "Remove the CUDA toolkit's stubs directory (…/lib64/stubs) from LD_LIBRARY_PATH and from the "
     "loader's "
     "configuration (/etc/ld.so.conf.d, then ldconfig): the stub is for linking only; the driver's "
     "libcuda.so.1 must "
     "be found first",
     "nvidia-facts.md §9 item 5, §10b (CUDA_ERROR_STUB_LIBRARY = 34)", stub_library},
    {"cuda.driver-mismatch", Severity::fail, Stage::host,
     "libcuda and the kernel module come from the same driver",
     "Make libcuda match the kernel module: reboot (or reload the nvidia modules) after a driver "
     "upgrade, remove a "
     "stale libcuda.so.1 from LD_LIBRARY_PATH or the container image; for 804, remove the "
     "cuda-compat directory from "
     "the library path on GPUs without forward-compatibility support",
     "nvidia-facts.md §9 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803, "
     "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804)",
     driver_mismatch},
    {"cuda.required-symbol-missing", Severity::fail, Stage::host,
     "libcuda exports every entry point the probe needs",
     "The library is not a usable NVIDIA driver libcuda (too old, or another library under the "
     "same name): point "
     "--libcuda or LD_LIBRARY_PATH at the driver's libcuda.so.1, or upgrade the driver",
     k_src_api, required_symbol_missing},
    {"cuda.optional-symbol-missing", Severity::info, Stage::host,
     "libcuda exports the optional entry points",
     "Nothing to do for the job; upgrade the driver to get the skipped measurements (UUIDs, error "
     "names, the "
     "multi-GPU test)",
     k_src_api, optional_symbol_missing},
    {"cuda.init-failed", Severity::fail, Stage::host,
     "cuInit and CUDA's device enumeration succeed",
     "Act on the error in the evidence: CUDA_ERROR_NO_DEVICE (100): no GPU is visible (driver, "
     "container device "
     "access, CUDA_VISIBLE_DEVICES); CUDA_ERROR_UNKNOWN (999): often /dev/nvidia-uvm is missing "
     "(`nvidia-modprobe -u "
     "-c=0`) or a GPU is in a bad state (check dmesg for Xid errors); CUDA_ERROR_SYSTEM_NOT_READY "
     "(802) on NVSwitch "
     "systems: start nvidia-fabricmanager",
     "nvidia-facts.md §10b (CUresult values), §11 (Fabric Manager)", init_failed},
    {"cuda.init-hung", Severity::fail, Stage::host,
     "cuInit and enumeration finish before the deadline",
     "A GPU or the driver is wedged: check dmesg for Xid and RmInitAdapter errors, stop processes "
     "stuck on the GPU, "
     "reset the GPU (`nvidia-smi -r`) or reboot; if initialisation is merely slow, run "
     "nvidia-persistenced and raise "
     "--cuda-timeout",
     "nvidia-facts.md §11 (persistence); gpu-preflight CUDA probe deadline (docs/cuda-probe.md)",
     init_hung},
    {"cuda.gpu-failed", Severity::fail, Stage::gpu,
     "Each GPU passes CUDA start-up in its own process",
     "Run the job without this GPU (the recommendation leaves it out); check dmesg for Xid errors "
     "on its bus id, "
     "reset it (`nvidia-smi -r -i <bus id>`) or reboot, and replace it if it keeps failing",
     k_src_probe, gpu_failed},
    {"cuda.gpu-in-use", Severity::warn, Stage::gpu,
     "No GPU is held by another process (busy is not broken)",
     "Nothing is wrong with the GPU: wait until the processes in the evidence finish, or start the job on other "
     "GPUs; in exclusive-process compute mode a GPU serves one process at a time (`nvidia-smi -q -d COMPUTE`). "
     "Periodic health checks should pass --skip-busy so that they never touch a job's GPUs",
     "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html (CUDA_ERROR_DEVICE_UNAVAILABLE, "
     "CUDA_ERROR_OUT_OF_MEMORY); https://docs.nvidia.com/deploy/nvidia-smi/index.html (compute mode)",
     gpu_in_use},
    {"cuda.gpu-hung", Severity::fail, Stage::gpu,
     "Each GPU finishes CUDA start-up before the deadline",
     "Run the job without this GPU (the recommendation leaves it out); a hang at start-up usually "
     "means the GPU is "
     "wedged: check dmesg for Xid errors, reset it (`nvidia-smi -r -i <bus id>`) or reboot",
     k_src_probe, gpu_hung},
    {"cuda.gpu-slow-init", Severity::warn, Stage::gpu,
     "No GPU initialises far slower than the others (> 5x median, > 1 s)",
     "Run nvidia-persistenced so GPUs stay initialised between jobs; if only this GPU is slow, "
     "check dmesg for errors "
     "on its bus id and its PCIe link (`lspci -vv`: LnkSta speed and width)",
     "nvidia-facts.md §11 (persistence); gpu-preflight CUDA probe timings", gpu_slow_init},
    {"cuda.gpu-not-enumerated", Severity::fail, Stage::gpu,
     "CUDA enumerates every GPU the driver lists",
     "Check that the job can reach the GPU (container device list, cgroup device rules, MIG mode) "
     "and dmesg for "
     "errors on its bus id; the recommendation leaves it out",
     "nvidia-facts.md §6d (gpus/<bus>/information), §10a (cuDeviceGetPCIBusId)",
     gpu_not_enumerated},
    {"cuda.device-not-listed-by-driver", Severity::warn, Stage::gpu,
     "Every CUDA device is one of the driver's GPUs",
     "Compare `nvidia-smi -L` with the CUDA devices in the evidence; a snapshot without that GPU's "
     "/proc/driver/nvidia/gpus entry is incomplete",
     "nvidia-facts.md §6d, §10a (bus id forms)", device_not_listed},
    {"cuda.multi-gpu-failed", Severity::warn, Stage::host,
     "Peer-to-peer copies between the usable GPUs work",
     "Start the job on one GPU; for several GPUs try NCCL_P2P_DISABLE=1, check PCIe ACS/IOMMU "
     "settings, or upgrade "
     "the kernel",
     k_src_p2p, multi_gpu_failed},
    {"cuda.multi-gpu-hung", Severity::warn, Stage::host,
     "Peer-to-peer copies between the usable GPUs finish",
     "Start the job on one GPU; for several GPUs try NCCL_P2P_DISABLE=1, check PCIe ACS/IOMMU "
     "settings, or upgrade "
     "the kernel",
     k_src_p2p, multi_gpu_hung},
};

} // namespace

std::span<const Rule> cuda_rules() {
  return k_rules;
}

} // namespace gpf
