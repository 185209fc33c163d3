// Rules whose id starts with "cuda.": CUDA: the job's CUDA version against the driver, and what the
// live CUDA probe saw (library, symbols, cuInit, each GPU, the multi-GPU test).
#include "common.hpp"
#include "gpf/facts/cuda_json.hpp"
#include "gpf/facts/multi_gpu_cut.hpp"
#include "gpf/knowledge/cuda_errors.hpp"
#include "gpf/knowledge/data_age.hpp"
#include "gpf/util/robust.hpp"
#include "gpf/util/tenths.hpp"
#include "gpu_hang.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace gpf {
namespace {

struct CudaOnDriver {
  bool judged = false;
  CudaDriverJudgement judgement;
  std::vector<std::string> evidence;
  std::string driver_text; // what the runtime meets
  // Judged from cuDriverGetVersion alone (no kernel module version, e.g. WSL2).
  std::optional<Version> reported_only;
};

CudaOnDriver cuda_on_driver(const RuleContext& c) {
  const Facts& facts = c.facts;
  CudaOnDriver r;
  const auto& expected = facts.compat.expected_cuda;
  if (!expected) {
    return r;
  }
  const DriverView& d = c.job.driver;
  r.evidence.push_back(expected_evidence(*expected));
  if (d.effective) {
    r.judged = true;
    r.judgement = c.job.matrix->judge_cuda_on_driver(expected->version, *d.effective);
    r.driver_text = d.effective_text;
    r.evidence.push_back(d.kernel_module_evidence);
    if (d.forward_compat) {
      r.evidence.push_back(library_evidence(facts.compat.libcuda));
    }
  } else if (d.cuda_reported) {
    r.judged = true;
    r.reported_only = d.cuda_reported;
    r.evidence.push_back(fmt::format("cuDriverGetVersion: {}", *facts.cuda.driver_version));
    const Version want({expected->version.major(), expected->version.minor()});
    r.judgement.status = *d.cuda_reported >= want ? CudaDriverStatus::ok
                         : d.cuda_reported->major() == want.major() && want.major() >= 11
                             ? CudaDriverStatus::minor_version_compat
                             : CudaDriverStatus::too_old;
  }
  if (d.cuda_reported && d.effective) {
    r.evidence.push_back(fmt::format("cuDriverGetVersion: {}", *facts.cuda.driver_version));
  }
  return r;
}

// One "dlsym(X): not found in <library>" line per missing entry point.
std::vector<std::string> dlsym_evidence(const CudaFacts& cuda,
                                        const std::vector<std::string>& symbols) {
  std::vector<std::string> ev;
  for (const auto& s : symbols) {
    ev.push_back(fmt::format("dlsym({}): not found in {}", s,
                             cuda.library_path.empty() ? cuda.library : cuda.library_path));
  }
  return ev;
}

// "CUDA 13.4 GA needs driver 615.71.09 or newer", marked where data/ holds the row unverified.
std::string toolkit_needs(const Matrix& m, const CudaDriverJudgement& j) {
  if (!j.toolkit) {
    return {};
  }
  return fmt::format("CUDA {} needs driver {} or newer{}", j.toolkit->release,
                     j.toolkit->driver_text,
                     m.verified(j.toolkit->sources)
                         ? ""
                         : " (unverified: the driver released with it, NVIDIA's minimum for it "
                           "was not read)");
}

constexpr std::size_t k_max_evidence_lines = 8;

constexpr int k_stub_library = 34;

constexpr int k_driver_mismatch = 803;

constexpr int k_compat_not_supported = 804;

// The NVIDIA driver should be here: loaded kernel module, or WSL2's driver in Windows.
bool driver_present(const Facts& f) {
  return f.driver.loaded || f.is_wsl2();
}

std::string ms_text(double ms) {
  return ms >= 1000 ? fmt::format("{:.2f} s", ms / 1000) : fmt::format("{:.1f} ms", ms);
}

// "cuInit failed after 1.0 ms: CUDA_ERROR_UNKNOWN (999): unknown error (CUDA: an internal error
// CUDA does not name)": the CUresult by CUDA's name when the driver gave none ("CUresult 805" from
// an older driver) and always with its meaning; or how long a hung step had run.
std::string step_error(const CudaStep& s) {
  if (s.timed_out) {
    return fmt::format("{} did not finish within {}; the child was killed at the deadline", s.name,
                       ms_text(s.duration_ms));
  }
  const CudaError* known = s.error_code ? find_cuda_error(*s.error_code) : nullptr;
  const bool unnamed = s.error_name.empty() || starts_with(s.error_name, "CUresult ");
  std::string out =
      fmt::format("{} failed after {}: {}", s.name, ms_text(s.duration_ms),
                  known && unnamed && !known->driver.empty() ? known->driver : s.error_name);
  if (s.error_code) {
    out += fmt::format(" ({})", *s.error_code);
  }
  if (!s.error_text.empty()) {
    out += ": " + s.error_text;
  }
  if (known != nullptr) {
    out += fmt::format(" (CUDA: {})", known->meaning);
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

// CUDA_ERROR_OUT_OF_MEMORY (2) at context creation is "in use" only while some process may hold
// the memory: not when no process holds the GPU's node (gpu-processes ran) and NVML, which ran,
// lists no process on it. Then the GPU is out of memory by itself: a failure.
bool oom_without_holder(const Facts& f, const CudaDevice& d) {
  const auto bad =
      std::find_if(d.steps.begin(), d.steps.end(), [](const CudaStep& s) { return !s.ok; });
  if (!d.in_use || bad == d.steps.end() || bad->error_code != 2 || !d.holders.empty() ||
      !f.topology.gpu_processes.ran || !f.nvml.ran) {
    return false;
  }
  const NvmlGpu* n = f.nvml.gpu_by_bus(d.bus_id);
  return n != nullptr && n->processes && n->processes->empty();
}

std::string device_label(const CudaDevice& d) {
  return fmt::format("CUDA device {} ({}{})", d.index, d.bus_id, d.uuid ? ", " + *d.uuid : "");
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

// GPUs that failed RmInitAdapter since the driver last loaded, with the first such line each.
// One of them can make cuInit fail for every GPU of the host (docs/sources.md, "One GPU that
// cannot initialise").
std::vector<std::pair<std::string, std::string>> gpus_stuck_in_init(const LogFacts& log) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [bus, events] : log.gpu_events) {
    for (const auto& e : events) {
      if ((e.kind == LogEventKind::rm_init_failed || e.kind == LogEventKind::rm_init_minor) &&
          !e.before_driver_load && !e.lines.empty()) {
        out.emplace_back(bus, e.lines.front());
        break;
      }
    }
  }
  return out;
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

// cuda.init-failed's finding; when one GPU the driver could not bring up sits beside GPUs it
// could, that GPU is named as the cause and taken out at the driver level.
std::vector<Hit> init_failed_hits(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  if (start_failure(cuda) != StartFailure::failed) {
    return {};
  }
  Hit hit{"CUDA failed to initialise: no GPU can be used", start_evidence(cuda)};
  const auto stuck = gpus_stuck_in_init(c.facts.log);
  std::vector<std::string> others;
  for (const auto& g : c.facts.gpus) {
    if (std::none_of(stuck.begin(), stuck.end(),
                     [&](const auto& s) { return s.first == g.bus_id; })) {
      others.push_back(g.bus_id);
    }
  }
  if (stuck.empty() || others.empty()) {
    return {hit};
  }
  std::vector<std::string> names;
  for (const auto& [bus, line] : stuck) {
    names.push_back(bus);
    hit.evidence.push_back("kernel log: " + quote_evidence(line, 300));
  }
  hit.evidence.push_back(fmt::format("the driver lists {} other {}: {}", others.size(),
                                     plural(others.size(), "GPU"), join_some(others)));
  hit.message = fmt::format(
      "CUDA failed to initialise for every GPU, most likely because of {} {} that the driver "
      "could not initialise (RmInitAdapter failed in this boot): one such GPU can make cuInit fail "
      "for the whole host, and CUDA_VISIBLE_DEVICES does not help",
      plural(names.size(), "GPU"), join_some(names));
  hit.remedy = fmt::format(
      "Take {0} out at the driver level so that the {1} work: as root, unbind it now "
      "(`echo {2} | sudo tee /sys/bus/pci/drivers/nvidia/unbind`{3}), or exclude it from the next "
      "driver load by its UUID (`options nvidia NVreg_ExcludedGpus=GPU-…` in /etc/modprobe.d/; the "
      "UUID is on the GPU's label or in `nvidia-smi -q` of a boot where it worked). Then repair or "
      "replace it: the kernel log's finding on it names the stage that failed",
      join_some(names), counted(others.size(), "other GPU"), names.front(),
      names.size() > 1 ? ", each in turn" : "");
  return {hit};
}

std::string cuda_list(const CudaFacts& cuda) {
  std::vector<std::string> buses;
  for (const auto& d : cuda.devices) {
    buses.push_back(d.bus_id);
  }
  return fmt::format("CUDA enumerated {}{}{}", counted(cuda.devices.size(), "device"),
                     buses.empty() ? "" : ": ", fmt::join(buses, ", "));
}

std::string peer_text(const CudaPeerResult& p) {
  if (p.timed_out) {
    return fmt::format("peer copy CUDA {} -> CUDA {} did not finish within {}; "
                       "the child was killed at the deadline",
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

// The pairs of GPUs (CUDA indices) whose copies failed, or every pair the child covered when it
// hung before any copy.
std::vector<std::pair<int, int>> multi_pairs(const CudaFacts& cuda) {
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
  return pairs;
}

MultiCauses multi_causes(const Facts& f) {
  const auto& cuda = f.cuda;
  MultiCauses out;
  for (const auto& [from, to] : multi_pairs(cuda)) {
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
  if (!cuda.multi_gpu_ran || cuda.multi_gpu_ok != false || multi_hung(cuda) != hung ||
      multi_gpu_cut_in_init(cuda)) {
    return {}; // cut short in its own cuInit: cuda.multi-gpu-not-completed, not a P2P finding
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
  std::string message =
      hung
          ? "The multi-GPU test hung: start-up across GPUs is at risk of hanging (peer-to-peer copies)"
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
  hit.headline = hung ? "the multi-GPU test hung" : "the multi-GPU test failed";
  GpuHang h;
  h.transport = "peer-to-peer copies (cuMemcpyPeer)";
  for (const auto& [from, to] : multi_pairs(cuda)) {
    const CudaDevice* a = device_at(cuda, from);
    const CudaDevice* b = device_at(cuda, to);
    if (a && b) {
      h.pairs.emplace_back(a->bus_id, b->bus_id);
    }
  }
  judge_gpu_hang(c, h, hit);
  return {hit};
}

// The bandwidth judgement (docs/cuda-probe.md#bandwidth): a figure stands out low when it lies more
// than k_bw_mads scaled MADs (summarize's robust spread) below the median of its class AND at
// least k_bw_min_gap of that median below it. No figure is judged against a number of its own:
// only against the node's GPUs (or pairs) of the same kind. A class needs k_bw_min_class members:
// of two differing figures neither can be called the odd one.
constexpr double k_bw_mads = 3.0;
constexpr double k_bw_min_gap = 0.25; // a halved link (x16 -> x8, one generation down) is 50%
constexpr double k_bw_spread_floor = 0.02;
constexpr std::size_t k_bw_min_class = 3;

struct BwFigure {
  std::string cls; // the class: what must be equal for two figures to be compared
  double value = 0;
  std::size_t item = 0; // the caller's index
};

struct BwLow {
  std::size_t item = 0;
  double value = 0;
  RobustSpread spread;
  std::size_t class_size = 0;
  std::string cls;
};

struct BwJudged {
  std::vector<BwLow> low;
  std::vector<std::size_t> alone; // items in a class too small to judge
};

BwJudged judge_bandwidth(const std::vector<BwFigure>& figures) {
  std::map<std::string, std::vector<const BwFigure*>> classes;
  for (const auto& f : figures) {
    if (f.value > 0 && std::isfinite(f.value)) {
      classes[f.cls].push_back(&f);
    }
  }
  BwJudged out;
  for (const auto& [cls, members] : classes) {
    if (members.size() < k_bw_min_class) {
      for (const auto* m : members) {
        out.alone.push_back(m->item);
      }
      continue;
    }
    std::vector<double> values;
    for (const auto* m : members) {
      values.push_back(m->value);
    }
    const RobustSpread r = robust_spread(values, k_bw_spread_floor);
    for (const auto* m : members) {
      if (r.deviations(m->value) < -k_bw_mads && m->value < (1 - k_bw_min_gap) * r.median) {
        out.low.push_back({m->item, m->value, r, members.size(), cls});
      }
    }
  }
  return out;
}

std::string gbps_text(double v) {
  return fmt::format("{:.1f} GB/s", v);
}

std::string link_text(unsigned width, unsigned speed_tenths) {
  return fmt::format("x{} {} GT/s", width, tenths_text(speed_tenths));
}

// A GPU's class for its host copies: its model and what its own PCIe link can do (the capability,
// so that a GPU whose link trained narrower or slower is judged among the GPUs it should match).
std::string host_class(const Facts& f, const CudaDevice& d) {
  std::string link = "PCIe link unknown";
  const GpuPciPath* path = find_gpu_path(f.topology, d.bus_id);
  const NvmlGpu* n = f.nvml.gpu_by_bus(d.bus_id);
  if (path && path->link.max_width && path->link.max_speed) {
    link = fmt::format("PCIe {} capable", link_text(*path->link.max_width, *path->link.max_speed));
  } else if (n && n->pcie_width_max && n->pcie_gen_max) {
    link = fmt::format("PCIe x{} Gen{} capable", *n->pcie_width_max, *n->pcie_gen_max);
  }
  return fmt::format("{}, {}", d.name.value_or("unknown model"), link);
}

bool has_nvlink(const Facts& f, const std::string& bus) {
  const NvmlGpu* n = f.nvml.gpu_by_bus(bus);
  return n && std::find(n->nvlink_active.begin(), n->nvlink_active.end(), true) !=
                  n->nvlink_active.end();
}

// A pair's path class from the topology facts: NVLink (both GPUs have active links, as NVML
// reports them), the same PCIe switch, the same host bridge, or across host bridges (root
// complexes); peer access refused means copies staged through host memory.
std::string pair_path(const Facts& f, const std::string& a, const std::string& b, bool access) {
  if (!access) {
    return "no peer access (staged through host memory)";
  }
  if (has_nvlink(f, a) && has_nvlink(f, b)) {
    return "NVLink";
  }
  const GpuPciPath* pa = find_gpu_path(f.topology, a);
  const GpuPciPath* pb = find_gpu_path(f.topology, b);
  if (!pa || !pb || pa->path.empty() || pb->path.empty()) {
    return "PCIe path unknown";
  }
  if (pa->root != pb->root) {
    return "PCIe across host bridges";
  }
  return shared_bridge(f.topology, a, b).empty() ? "PCIe through the host bridge"
                                                 : "PCIe behind one switch";
}

// What the PCIe facts show on the paths of `gpus` that slows copies: a link that trained below
// what both its ends support, a link shared with other GPUs, the IOMMU translating DMA.
std::vector<std::string> bandwidth_causes(const Facts& f, const std::vector<std::string>& gpus,
                                          const std::vector<std::string>& all_gpus) {
  std::vector<std::string> causes;
  const auto add = [&](std::string c) {
    if (std::find(causes.begin(), causes.end(), c) == causes.end()) {
      causes.push_back(std::move(c));
    }
  };
  for (const auto& hop : pcie_hops(f.topology, gpus)) {
    const auto w = hop.width();
    const auto cw = hop.could_width();
    const auto sp = hop.speed();
    const auto csp = hop.could_speed();
    if (w && cw && sp && csp && (*w < *cw || *sp < *csp)) {
      add(fmt::format("the PCIe link {} runs at {} of {}", hop.name(), link_text(*w, *sp),
                      link_text(*cw, *csp)));
    } else if (w && cw && *w < *cw) {
      add(fmt::format("the PCIe link {} runs at x{} of x{}", hop.name(), *w, *cw));
    }
  }
  for (const auto& hop : pcie_hops(f.topology, all_gpus)) {
    const bool ours = std::any_of(gpus.begin(), gpus.end(), [&](const std::string& g) {
      return std::find(hop.gpus.begin(), hop.gpus.end(), g) != hop.gpus.end();
    });
    if (ours && hop.gpus.size() > gpus.size()) {
      add(fmt::format("the PCIe link {} is shared by {} GPUs ({}), whose copies ran side by side",
                      hop.name(), hop.gpus.size(), fmt::join(hop.gpus, ", ")));
    }
  }
  for (const auto& g : gpus) {
    if (iommu_translates(f.topology, g) == true) {
      add(fmt::format("the IOMMU translates the DMA of {}", g));
    }
  }
  return causes;
}

std::string causes_text(const Facts& f, const std::vector<std::string>& causes) {
  if (!causes.empty()) {
    return fmt::format("{}", fmt::join(causes, "; "));
  }
  return f.topology.pcie.ran ? "no cause in the PCIe facts (a link that downtrains under load, a "
                               "retimer, or throttling: watch `lspci -vv` LnkSta during a copy)"
                             : "not known, the PCIe topology was not read";
}

std::vector<std::string> measured_buses(const CudaFacts& cuda) {
  std::vector<std::string> buses;
  for (const auto& d : cuda.devices) {
    if (d.h2d_gbps || d.d2h_gbps) {
      buses.push_back(d.bus_id);
    }
  }
  return buses;
}

std::string copies_text(const CudaFacts& cuda, std::size_t bytes) {
  return fmt::format("best of {} copies of {} MiB", cuda.bandwidth.repeats, bytes >> 20);
}

// One direction of the host copies: a warning per GPU that stands out low in its class.
std::vector<Hit> host_bandwidth_hits(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  std::vector<Hit> hits;
  const auto all = measured_buses(cuda);
  for (const bool h2d : {true, false}) {
    std::vector<BwFigure> figures;
    for (std::size_t i = 0; i < cuda.devices.size(); ++i) {
      const auto& d = cuda.devices[i];
      if (const auto v = h2d ? d.h2d_gbps : d.d2h_gbps; v && d.usable) {
        figures.push_back({host_class(c.facts, d), *v, i});
      }
    }
    const char* dir = h2d ? "host-to-device" : "device-to-host";
    for (const auto& low : judge_bandwidth(figures).low) {
      const auto& d = cuda.devices[low.item];
      const auto causes = bandwidth_causes(c.facts, {d.bus_id}, all);
      std::vector<std::string> ev{
          fmt::format("{}: {} {} ({})", device_label(d), dir, gbps_text(low.value),
                      copies_text(cuda, cuda.bandwidth.bytes)),
          fmt::format("expected {}: the median of {} GPUs of its class ({}); scaled MAD {}",
                      gbps_text(low.spread.median), low.class_size, low.cls,
                      gbps_text(k_mad_scale * low.spread.mad))};
      for (const auto& other : figures) {
        if (other.cls == low.cls && ev.size() < k_max_evidence_lines) {
          ev.push_back(fmt::format("{} {} {}", cuda.devices[other.item].bus_id, dir,
                                   gbps_text(other.value)));
        }
      }
      Hit hit{fmt::format("{} copies {} at {}, {:.0f}% of the {} expected from the GPUs of its "
                          "class; likely cause: {}",
                          c.job.label(d.bus_id), dir, gbps_text(low.value),
                          100 * low.value / low.spread.median, gbps_text(low.spread.median),
                          causes_text(c.facts, causes)),
              std::move(ev), d.bus_id};
      hit.remedy = fmt::format(
          "Check {}'s PCIe path: `lspci -vv -s {}` (LnkSta against LnkCap, on the GPU and the "
          "bridges above it), reseat the GPU or its riser if the link trained low, and compare "
          "after a reboot; the job keeps the GPU but a data-parallel job runs at its pace",
          d.bus_id, d.bus_id);
      hits.push_back(std::move(hit));
    }
  }
  return hits;
}

std::vector<Hit> peer_bandwidth_hits(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  std::vector<BwFigure> figures;
  for (std::size_t i = 0; i < cuda.peers.size(); ++i) {
    const auto& p = cuda.peers[i];
    const CudaDevice* a = device_at(cuda, p.from);
    const CudaDevice* b = device_at(cuda, p.to);
    if (p.ok && p.gbps && a && b) {
      figures.push_back({fmt::format("{} -> {}, {}", a->name.value_or("unknown model"),
                                     b->name.value_or("unknown model"),
                                     pair_path(c.facts, a->bus_id, b->bus_id, p.can_access)),
                         *p.gbps, i});
    }
  }
  std::vector<Hit> hits;
  const auto all = measured_buses(cuda);
  for (const auto& low : judge_bandwidth(figures).low) {
    const auto& p = cuda.peers[low.item];
    const CudaDevice& a = *device_at(cuda, p.from);
    const CudaDevice& b = *device_at(cuda, p.to);
    auto causes = p2p_causes(c.facts, a.bus_id, b.bus_id);
    for (auto& cause : bandwidth_causes(c.facts, {a.bus_id, b.bus_id}, all)) {
      causes.push_back(std::move(cause));
    }
    std::vector<std::string> ev{
        fmt::format("peer copy CUDA {} -> CUDA {} ({} -> {}): {} ({})", p.from, p.to, a.bus_id,
                    b.bus_id, gbps_text(low.value), copies_text(cuda, cuda.bandwidth.peer_bytes)),
        fmt::format("expected {}: the median of {} GPU pairs of its class ({}); scaled MAD {}",
                    gbps_text(low.spread.median), low.class_size, low.cls,
                    gbps_text(k_mad_scale * low.spread.mad))};
    for (const PciBridge* bridge : acs_redirects_between(c.facts.topology, a.bus_id, b.bus_id)) {
      if (ev.size() < k_max_evidence_lines) {
        ev.push_back(acs_evidence(*bridge));
      }
    }
    Hit hit{fmt::format("Peer copies from {} to {} run at {}, {:.0f}% of the {} expected from the "
                        "GPU pairs of their class; likely cause: {}",
                        c.job.label(a.bus_id), c.job.label(b.bus_id), gbps_text(low.value),
                        100 * low.value / low.spread.median, gbps_text(low.spread.median),
                        causes_text(c.facts, causes)),
            std::move(ev), a.bus_id};
    hit.remedy = fmt::format(
        "Check the path between {} and {}: `nvidia-smi topo -m` and `nvidia-smi topo -p2p r`, "
        "ACS on the bridges between them (`lspci -vvv`: ACSCtl ReqRedir-/CmpltRedir-), the "
        "IOMMU (`iommu=pt`) and both GPUs' links (`lspci -vv`: LnkSta against LnkCap); NCCL "
        "rings through this pair run at its pace",
        a.bus_id, b.bus_id);
    hits.push_back(std::move(hit));
  }
  return hits;
}

// The figures, one line for the report's reader: what was measured, what could not be judged
// (a class too small) and what was not measured (a busy GPU, no pinned memory).
std::vector<Hit> bandwidth_figures(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  std::vector<std::string> gpus;
  std::vector<std::string> not_measured;
  std::vector<BwFigure> figures;
  for (std::size_t i = 0; i < cuda.devices.size(); ++i) {
    const auto& d = cuda.devices[i];
    if (d.h2d_gbps || d.d2h_gbps) {
      gpus.push_back(fmt::format("CUDA {} {}/{}", d.index,
                                 d.h2d_gbps ? fmt::format("{:.1f}", *d.h2d_gbps) : "-",
                                 d.d2h_gbps ? fmt::format("{:.1f}", *d.d2h_gbps) : "-"));
      if (d.h2d_gbps && d.usable) {
        figures.push_back({host_class(c.facts, d), *d.h2d_gbps, i});
      }
    } else if (!d.bandwidth_not_checked.empty()) {
      not_measured.push_back(fmt::format("CUDA {} ({})", d.index, d.bandwidth_not_checked));
    }
  }
  std::vector<double> peers;
  std::vector<std::string> pairs_not_measured;
  for (const auto& p : cuda.peers) {
    if (p.gbps) {
      peers.push_back(*p.gbps);
    } else if (!p.bandwidth_not_checked.empty()) {
      pairs_not_measured.push_back(
          fmt::format("CUDA {} -> {} ({})", p.from, p.to, p.bandwidth_not_checked));
    }
  }
  if (gpus.empty() && peers.empty() && not_measured.empty() && pairs_not_measured.empty()) {
    return {};
  }
  std::vector<std::string> ev;
  if (!gpus.empty()) {
    ev.push_back(fmt::format("host-to-device/device-to-host GB/s ({}): {}",
                             copies_text(cuda, cuda.bandwidth.bytes), fmt::join(gpus, ", ")));
  }
  if (!peers.empty()) {
    std::sort(peers.begin(), peers.end());
    ev.push_back(fmt::format("peer copies ({}): {} pairs, {:.1f} to {:.1f} GB/s, median {:.1f}",
                             copies_text(cuda, cuda.bandwidth.peer_bytes), peers.size(),
                             peers.front(), peers.back(), median_of(peers)));
  }
  std::vector<std::string> alone;
  for (const std::size_t i : judge_bandwidth(figures).alone) {
    alone.push_back(fmt::format("CUDA {}", cuda.devices[i].index));
  }
  if (!alone.empty()) {
    ev.push_back(fmt::format("reported, not judged (fewer than {} GPUs of their class): {}",
                             k_bw_min_class, fmt::join(alone, ", ")));
  }
  if (!not_measured.empty()) {
    ev.push_back(fmt::format("not checked: {}", fmt::join(not_measured, "; ")));
  }
  if (!pairs_not_measured.empty()) {
    ev.push_back(fmt::format("pairs not measured: {}", fmt::join(pairs_not_measured, "; ")));
  }
  return {Hit{fmt::format("Copy bandwidth measured on {} and {}{}{}", counted(gpus.size(), "GPU"),
                          counted(peers.size(), "GPU pair"),
                          not_measured.empty() ? std::string()
                                               : fmt::format("; {} not checked",
                                                             counted(not_measured.size(), "GPU")),
                          pairs_not_measured.empty()
                              ? std::string()
                              : fmt::format("; {} not measured",
                                            counted(pairs_not_measured.size(), "GPU pair"))),
              std::move(ev)}};
}

// ---- The active step (docs/cuda-probe.md#active-step) ----------------------------------------

constexpr std::string_view k_active_limits =
    "a seconds-long check finds hard faults (stuck bits, address faults, a unit that computes "
    "wrong, a kernel that never finishes); it cannot catch rare intermittent corruption, which "
    "needs long or repeated scans";

std::string active_remedy(const CudaDevice& d) {
  return fmt::format(
      "Drain the node or run the job without this GPU (the recommendation leaves it out); reset it "
      "(`nvidia-smi -r -i {0}`) and run NVIDIA's long diagnostic to confirm (`dcgmi diag -r 3 -i "
      "{0}`, or level 4 for the memory test); replace it if the fault stays",
      d.bus_id);
}

std::string model_of(const CudaDevice& d) {
  return d.name.value_or("unknown model");
}

// The compute checksums judged per model: a GPU is wrong when its integer words differ from the
// host's, or when a strict majority of its model's GPUs agree on another checksum. Models whose
// GPUs disagree with no majority are listed in no_majority (none dropped on that ground).
struct ComputeJudged {
  struct Wrong {
    std::size_t device;
    std::vector<std::string> evidence;
  };
  std::vector<Wrong> wrong;
  std::vector<std::pair<std::string, std::vector<std::string>>> no_majority; // model, evidence
};

ComputeJudged judge_compute(const CudaFacts& cuda) {
  ComputeJudged out;
  std::map<std::string, std::vector<std::size_t>> models;
  for (std::size_t i = 0; i < cuda.devices.size(); ++i) {
    const auto& d = cuda.devices[i];
    if (d.active.ran && !d.active.checksum.empty()) {
      models[model_of(d)].push_back(i);
    }
  }
  for (const auto& [model, members] : models) {
    std::map<std::string, std::vector<int>> by_sum;
    for (const std::size_t i : members) {
      by_sum[cuda.devices[i].active.checksum].push_back(cuda.devices[i].index);
    }
    std::optional<std::string> majority;
    for (const auto& [sum, who] : by_sum) {
      if (2 * who.size() > members.size()) {
        majority = sum;
      }
    }
    std::vector<std::string> groups;
    for (const auto& [sum, who] : by_sum) {
      groups.push_back(fmt::format("{} on CUDA {}", sum, fmt::join(who, ", ")));
    }
    const std::string group_text = fmt::format("checksums of the {} GPUs of model {}: {}",
                                               members.size(), model, fmt::join(groups, "; "));
    if (by_sum.size() > 1 && !majority) {
      out.no_majority.emplace_back(model, std::vector<std::string>{group_text});
    }
    for (const std::size_t i : members) {
      const auto& a = cuda.devices[i].active;
      std::vector<std::string> ev;
      if (a.integer_mismatches > 0) {
        ev.push_back(fmt::format("integer words against the host's own computation: {} wrong, "
                                 "first {}",
                                 a.integer_mismatches, a.integer_error));
      }
      if (majority && a.checksum != *majority) {
        ev.push_back(fmt::format("checksum {} where {} of the {} GPUs of its model got {}",
                                 a.checksum, by_sum.at(*majority).size(), members.size(),
                                 *majority));
      }
      if (!ev.empty()) {
        if (members.size() > 1) {
          ev.push_back(group_text);
        } else {
          ev.push_back(fmt::format("the only GPU of model {} on this node: judged against the "
                                   "host's integer reference only",
                                   model));
        }
        out.wrong.push_back({i, std::move(ev)});
      }
    }
  }
  return out;
}

std::string active_figures(const CudaDevice& d) {
  const auto& a = d.active;
  std::vector<std::string> parts;
  if (a.first_kernel_ms) {
    parts.push_back(fmt::format("first kernel {}", ms_text(*a.first_kernel_ms)));
  }
  if (!a.checksum.empty()) {
    parts.push_back(fmt::format("checksum {}", a.checksum));
  }
  if (!a.patterns.empty()) {
    parts.push_back(fmt::format("{} MiB x {} in {}", a.memory_bytes >> 20,
                                counted(a.patterns.size(), "pattern"), ms_text(a.memory_ms)));
  }
  return fmt::format("CUDA {}: {}", d.index, fmt::join(parts, ", "));
}

} // namespace

std::span<const Rule> cuda_rules() {
  static const Rule rows[] = {
      {.id = "cuda.driver-too-old",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The driver is new enough for the job's CUDA version",
       .remedy =
           "Upgrade the driver to at least the version named in the finding, or run a build of the framework made with an older CUDA (e.g. a cu118/cu121 wheel); "
           "on data-center GPUs the cuda-compat package (forward compatibility) is another way",
       .source = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
       .explanation =
           "Every CUDA toolkit release ships with a driver (the release notes' Table 3). "
           "A job built with that toolkit runs on that driver or newer. "
           "From CUDA 11 on, minor-version compatibility lowers the bar to one floor per major (11.x: 450.80.02, 12.x: 525.60.13, 13.x: 580.65.06); "
           "below it the CUDA runtime refuses to initialise with cudaErrorInsufficientDriver. "
           "Before CUDA 11 there is no such floor: the toolkit's own driver is the minimum.",
       .evidence =
           "The job's CUDA version (--expect-cuda, else $CUDA_HOME/version.json, else /usr/local/cuda/version.json), the kernel module's version (/proc/driver/nvidia/version) or, with forward compatibility, the cuda-compat libcuda's version; "
           "cuDriverGetVersion when only the CUDA probe knows the driver (WSL2).",
       .reads = {ProbeId::compat},
       .cases = {fires("compat-cuda121-driver470"), silent("compat-cuda124-driver535")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto r = cuda_on_driver(c);
         if (!r.judged || r.judgement.status != CudaDriverStatus::too_old) {
           return {};
         }
         const auto& e = *c.facts.compat.expected_cuda;
         std::string why;
         if (r.reported_only) {
           why = fmt::format("the driver supports CUDA {} only", r.reported_only->str());
         } else if (r.judgement.floor) {
           why = fmt::format(
               "CUDA {}.x needs driver {} or newer even under minor-version compatibility",
               e.version.major(), r.judgement.floor->floor_text);
         } else {
           why = toolkit_needs(*c.job.matrix, r.judgement) + " (CUDA " +
                 std::to_string(e.version.major()) + " has no minor-version compatibility)";
         }
         Hit hit{
             fmt::format(
                 "The job's CUDA {} cannot run on driver {}: {}. "
                 "The CUDA runtime refuses to start (cudaErrorInsufficientDriver, 35: the driver is older than the runtime)",
                 e.text, r.reported_only ? std::string("(version unknown)") : r.driver_text, why),
             r.evidence};
         // the version to install, not "the version named in the finding"
         if (r.judgement.floor && !r.reported_only) {
           hit.remedy = fmt::format(
               "Upgrade the driver to at least {} (CUDA {}.x's floor), or run a build of the framework made with an older CUDA (e.g. a cu118/cu121 wheel); "
               "on data-center GPUs the cuda-compat package (forward compatibility) is another way",
               r.judgement.floor->floor_text, e.version.major());
         }
         return {std::move(hit)};
       }},
      {.id = "cuda.minor-version-compat",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title =
           "The driver is at least the job's toolkit driver (not only its minor-version floor)",
       .remedy =
           "Upgrade the driver to the toolkit's own driver named in the finding, or make sure the job ships SASS for these GPUs and uses no feature of the newer toolkit that needs the newer driver",
       .source = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
       .explanation =
           "Between the major's minor-version floor and the toolkit's own driver the job starts under minor-version compatibility: APIs that need the newer driver return cudaErrorCallRequiresNewerDriver, and PTX newer than the driver cannot be JIT-compiled, so kernels shipped only as PTX fail. "
           "Framework wheels usually carry SASS for common GPUs, so training often works; "
           "the warning says it is not guaranteed.",
       .evidence = "The job's CUDA version and the driver version, as for cuda.driver-too-old.",
       .reads = {ProbeId::compat},
       .cases = {fires("compat-cuda134-driver580"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto r = cuda_on_driver(c);
         if (!r.judged || r.judgement.status != CudaDriverStatus::minor_version_compat) {
           return {};
         }
         const auto& e = *c.facts.compat.expected_cuda;
         const std::string needs =
             r.reported_only ? fmt::format("the driver supports CUDA {}", r.reported_only->str())
                             : toolkit_needs(*c.job.matrix, r.judgement);
         return {
             {fmt::format(
                  "The job's CUDA {} runs on driver {} only through minor-version compatibility ({}): features that need the newer driver fail (cudaErrorCallRequiresNewerDriver) and PTX newer than the driver cannot be JIT-compiled, so the job must carry SASS for these GPUs",
                  e.text, r.reported_only ? std::string("(version unknown)") : r.driver_text,
                  needs),
              r.evidence}};
       }},
      {.id = "cuda.forward-compat",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Whether forward compatibility (cuda-compat) is in use",
       .remedy =
           "Nothing to do on data-center GPUs; "
           "on others remove the cuda-compat directory from the library path and upgrade the driver instead",
       .source = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
       .explanation =
           "The cuda-compat package puts a newer libcuda (in a compat/ directory) in front of an older kernel module so that a newer CUDA runs on an older driver branch. "
           "The library and the kernel module then differ on purpose: this is not a driver/library mismatch. "
           "It is supported on data-center GPUs, select NGC-ready RTX parts and Jetson only.",
       .evidence =
           "The libcuda.so.1 the loader picks (its path has a compat/ component) and its version against the kernel module's.",
       .reads = {ProbeId::compat, ProbeId::driver},
       .cases = {fires("compat-forward-compat"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const DriverView& d = c.job.driver;
         if (!d.forward_compat) {
           return {};
         }
         const auto& lib = c.facts.compat.libcuda;
         return {
             {fmt::format(
                  "Forward compatibility: the job loads the cuda-compat libcuda {} on kernel module {}. "
                  "This is expected, not a mismatch; "
                  "it works on data-center GPUs and select RTX/Jetson parts only (elsewhere cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)",
                  lib.version_text, d.kernel_module_text),
              {library_evidence(lib), d.kernel_module_evidence}}};
       }},
      {.id = "cuda.version-not-in-matrix",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info for an unknown release of a known major whose minor-version floor "
                        "is met, unless the release is newer than the data",
       .title = "The job's CUDA version is in the CUDA-to-driver table",
       .remedy =
           "Check the job's CUDA version (a typo?) or compare it with the CUDA release notes by hand; "
           "update data/ when NVIDIA publishes a new release",
       .source = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
       .explanation =
           "The table covers every toolkit release from 9.0 to 13.4 (there was no 12.7; the 13.3 and 13.4 rows are marked unverified in data/); "
           "CUDA 13.5 is known to exist but its minimum driver is not in the data. "
           "A version newer than every release the data knows is said to be so (\"not judged: newer than the data\"), a warning, never guessed. "
           "For an unknown release of a known major only the major's minor-version floor can be checked; "
           "for an unknown major nothing is judged, which is a warning: the version the job needs "
           "(often typed by hand with --expect-cuda) is a typo or newer than every driver the "
           "table knows, and the check must not pass as if it had been verified.",
       .evidence =
           "The job's CUDA version against data/cuda_toolkit_driver.json and data/cuda_minor_compat.json.",
       .cases = {fires("compat-newer-than-data"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto r = cuda_on_driver(c);
         if (!r.judged || (r.judgement.status != CudaDriverStatus::unknown_release &&
                           r.judgement.status != CudaDriverStatus::unknown_major)) {
           return {};
         }
         const auto& e = *c.facts.compat.expected_cuda;
         const auto& rows = c.job.matrix->toolkit_rows();
         const auto newest_row = std::max_element(
             rows.begin(), rows.end(),
             [](const CudaDriverRow& a, const CudaDriverRow& b) { return a.cuda < b.cuda; });
         const std::string table =
             newest_row == rows.end()
                 ? std::string("the CUDA-to-driver table")
                 : fmt::format("the CUDA-to-driver table (CUDA 9.0 to {}.{})",
                               newest_row->cuda.major(), newest_row->cuda.minor());
         const std::string floor_met =
             r.judgement.status == CudaDriverStatus::unknown_release
                 ? fmt::format("its major's minor-version floor ({}) is met",
                               r.judgement.floor->floor_text)
                 : std::string();
         auto evidence = r.evidence;
         if (cuda_newer_than_data(e.version)) {
           // newer than anything the data knows: say so, whatever the floor says
           const auto& age = data_age();
           evidence.push_back(fmt::format("newest CUDA release the data knows: {} (data of {}; {})",
                                          age.newest_cuda.str(), age.as_of,
                                          age.newest_cuda_source));
           return {{fmt::format("CUDA {}: {}{}", e.text,
                                newer_than_data(fmt::format("the job's CUDA {}", e.text),
                                                fmt::format("CUDA {}", age.newest_cuda.str())),
                                floor_met.empty()
                                    ? std::string()
                                    : fmt::format(" ({}; nothing more is known)", floor_met)),
                    std::move(evidence)}};
         }
         const std::string what =
             r.judgement.status == CudaDriverStatus::unknown_release
                 ? fmt::format("{}, but the release's own driver is not known", floor_met)
                 : "neither the release nor its major is in the table, so nothing was judged";
         Hit hit{fmt::format("CUDA {} is not in {}: {}", e.text, table, what), std::move(evidence)};
         if (r.judgement.status == CudaDriverStatus::unknown_release) {
           hit.severity = Severity::info;
         }
         return {hit};
       }},
      {.id = "cuda.no-expected-version",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "The job's CUDA version is known, so CUDA can be judged",
       .remedy =
           "Pass --expect-cuda with the CUDA version the job's framework was built with (e.g. `python -c 'import torch; "
           "print(torch.version.cuda)'`)",
       .source = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
       .explanation =
           "Frameworks bundle their own CUDA runtime, so the toolkit installed on the host (if any) need not be what the job uses. "
           "Without the job's CUDA version only the driver's own maximum is reported.",
       .evidence =
           "--expect-cuda, $CUDA_HOME/version.json or version.txt, /usr/local/cuda/version.json or version.txt; "
           "the driver's version or cuDriverGetVersion.",
       .cases = {fires("driver-version-file-absent"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& compat = c.facts.compat;
         if (!compat.ran || compat.expected_cuda) {
           return {};
         }
         const DriverView& d = c.job.driver;
         std::vector<std::string> evidence = compat.expected_cuda_notes;
         std::string driver_max;
         if (d.cuda_reported) {
           driver_max = fmt::format("the driver reports CUDA {} (cuDriverGetVersion)",
                                    d.cuda_reported->str());
           evidence.push_back(fmt::format("cuDriverGetVersion: {}", *c.facts.cuda.driver_version));
         } else if (d.effective) {
           const auto* row = c.job.matrix->newest_toolkit_for_driver(*d.effective);
           driver_max =
               row ? fmt::format(
                         "driver {} runs toolkits up to CUDA {} (and, through minor-version compatibility, the rest of CUDA {}.x)",
                         d.effective_text, row->release, row->cuda.major())
                   : fmt::format("driver {} is older than every toolkit in the table",
                                 d.effective_text);
           evidence.push_back(d.kernel_module_evidence);
         } else {
           return {}; // no driver: other rules say so
         }
         evidence.push_back(
             "no --expect-cuda, no CUDA_HOME toolkit, no /usr/local/cuda/version.json");
         return {
             {fmt::format(
                  "The job's CUDA version is not known, so CUDA was not judged against the driver; {}",
                  driver_max),
              std::move(evidence)}};
       }},
      {.id = "cuda.library-missing",
       .stage = Stage::host,
       .severity = Severity::fail,
       .severity_from =
           "info when the NVIDIA driver is not loaded either (a host without NVIDIA GPUs)",
       .title = "libcuda.so.1 (the driver's CUDA library) loads",
       .remedy =
           "Install the NVIDIA driver's user-space libraries matching the kernel module (libcuda.so.1, e.g. the libnvidia-compute-<version> package); "
           "in a container, start it with the NVIDIA runtime (--gpus all / --runtime=nvidia); "
           "--libcuda PATH names the library explicitly",
       .source = "docs/sources.md#driver-and-library-version-mismatch",
       .explanation =
           "libcuda.so.1 is the driver's CUDA library. It comes with the driver (not with the "
           "CUDA toolkit), and every CUDA program loads it through the dynamic loader at "
           "start-up. If the loader cannot find it, PyTorch and every other framework report no "
           "GPU. Usual causes: the driver's user-space packages are not installed (a "
           "module-only installation), or a container was started without the NVIDIA runtime. "
           "Confirm by hand: `ldconfig -p | grep libcuda.so.1`. A host-level failure: no GPU is "
           "recommended (info on a host with no NVIDIA driver at all).",
       .evidence =
           "dlopen of libcuda.so.1 (or --libcuda PATH) in the CUDA probe's child and its "
           "dlerror text; whether the NVIDIA driver is there (proc/driver/nvidia, or WSL2's "
           "/dev/dxg).",
       .cases = {fires("cuda-library-missing"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& cuda = c.facts.cuda;
         if (start_failure(cuda) != StartFailure::load) {
           return {};
         }
         Hit hit{fmt::format("{} cannot be loaded, so CUDA cannot start", cuda.library),
                 {"dlopen: " + cuda.load_error}};
         if (!driver_present(c.facts)) {
           hit.message = fmt::format(
               "{} was not found; the NVIDIA driver is not loaded either, so there is no CUDA to start",
               cuda.library);
           hit.severity = Severity::info;
           hit.remedy =
               "Nothing to do on a host without NVIDIA GPUs; "
               "otherwise install and load the NVIDIA driver first (see driver.not-loaded), which also installs libcuda.so.1";
         }
         return {hit};
       }},
      {.id = "cuda.stub-library",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The libcuda that loads is the driver's, not the toolkit's stub",
       .remedy =
           "Remove the CUDA toolkit's stubs directory (…/lib64/stubs) from LD_LIBRARY_PATH and from the loader's configuration (/etc/ld.so.conf.d, then ldconfig): the stub is for linking only; "
           "the driver's libcuda.so.1 must be found first",
       .source = "docs/sources.md#driver-and-library-version-mismatch",
       .explanation =
           "The CUDA toolkit ships a stub libcuda.so in its lib64/stubs directory, for linking "
           "on machines without a driver. It implements nothing: cuInit returns "
           "CUDA_ERROR_STUB_LIBRARY (34). When the stubs directory comes first on "
           "LD_LIBRARY_PATH or in the loader's configuration, a job loads the stub and sees no "
           "GPU. Confirm by hand: `ldconfig -p | grep libcuda` and `echo \"$LD_LIBRARY_PATH\" | "
           "tr : '\\n' | grep stubs`. A host-level failure: no GPU is recommended.",
       .evidence = "The CUresult of the enumeration child's first failed step (cuInit: "
                   "CUDA_ERROR_STUB_LIBRARY, 34) or a loaded libcuda whose file (dlinfo "
                   "RTLD_DI_LINKMAP) lies under /stubs/; LD_LIBRARY_PATH of the job environment.",
       .reads = {ProbeId::cuda},
       .cases = {fires("cuda-stub"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& cuda = c.facts.cuda;
         const bool stub_path = contains(cuda.library_path, "/stubs/");
         if (start_failure(cuda) != StartFailure::stub && !(cuda.ran && stub_path)) {
           return {};
         }
         auto ev = start_evidence(cuda);
         if (auto ld = c.facts.env.get("LD_LIBRARY_PATH")) {
           ev.push_back("LD_LIBRARY_PATH=" + *ld);
         }
         return {
             {"The CUDA toolkit's stub libcuda shadows the driver's: every CUDA call returns CUDA_ERROR_STUB_LIBRARY",
              std::move(ev)}};
       }},
      {.id = "cuda.driver-mismatch",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "libcuda and the kernel module come from the same driver",
       .remedy =
           "Make libcuda match the kernel module: reboot (or reload the nvidia modules) after a driver upgrade, remove a stale libcuda.so.1 from LD_LIBRARY_PATH or the container image; "
           "for 804, remove the cuda-compat directory from the library path on GPUs without forward-compatibility support",
       .source = "docs/sources.md#driver-and-library-version-mismatch",
       .explanation =
           "libcuda and the kernel module must come from the same driver release. After an "
           "upgrade without a reboot, or with an old libcuda.so.1 baked into a container image, "
           "cuInit fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803); "
           "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804) means a cuda-compat "
           "forward-compatibility library is used on a GPU that does not support it. Confirm by "
           "hand: compare `cat /proc/driver/nvidia/version` with the version in the name of the "
           "file libcuda.so.1 points to (`ls -l /usr/lib/x86_64-linux-gnu/libcuda.so.1`). A "
           "host-level failure: no GPU is recommended.",
       .evidence =
           "The CUresult of the enumeration child's first failed step (cuInit: "
           "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803, or "
           "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804), the libcuda file loaded, "
           "cuDriverGetVersion, and the kernel module's version (proc/driver/nvidia/version, "
           "else sys/module/nvidia/version).",
       .reads = {ProbeId::cuda, ProbeId::driver},
       .cases = {fires("cuda-driver-mismatch"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
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
         return {
             {compat
                  ? "A forward-compatibility libcuda (cuda-compat) is loaded on a GPU that does not support forward compatibility: cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"
                  : "libcuda and the NVIDIA kernel module come from different driver versions: cuInit fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
              std::move(ev)}};
       }},
      {.id = "cuda.required-symbol-missing",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "libcuda exports every entry point the probe needs",
       .remedy =
           "The library is not a usable NVIDIA driver libcuda (too old, or another library under the same name): point --libcuda or LD_LIBRARY_PATH at the driver's libcuda.so.1, or upgrade the driver",
       .source = "docs/sources.md#cuda-driver-api",
       .explanation =
           "The probe resolves the driver API functions a CUDA program needs at start-up "
           "(cuInit, device enumeration, contexts, memory). A library that lacks one is not the "
           "libcuda of a supported driver (a very old driver, or another library under the same "
           "name), and frameworks would fail on it the same way. Confirm by hand: `nm -D "
           "/usr/lib/x86_64-linux-gnu/libcuda.so.1 | grep -w cuInit`, and the version in the "
           "library's file name. A host-level failure: no GPU is recommended.",
       .evidence =
           "dlsym in the loaded libcuda of each entry point the probe requires (the required "
           "rows of src/probes/cuda/driver_api.cpp: cuInit, device enumeration, primary "
           "contexts, memory allocation and copies).",
       .cases = {fires("cuda-symbol-missing"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& cuda = c.facts.cuda;
         if (!cuda.ran || cuda.missing_symbols.empty()) {
           return {};
         }
         std::vector<std::string> ev = dlsym_evidence(cuda, cuda.missing_symbols);
         return {{fmt::format("libcuda lacks entry points the probe needs: {}",
                              fmt::join(cuda.missing_symbols, ", ")),
                  std::move(ev)}};
       }},
      {.id = "cuda.optional-symbol-missing",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "libcuda exports the optional entry points",
       .remedy =
           "Nothing to do for the job; "
           "upgrade the driver to get the skipped measurements (UUIDs, error names, the multi-GPU test)",
       .source = "docs/sources.md#cuda-driver-api",
       .explanation =
           "Entry points the probe uses when they exist (GPU UUIDs, error names, peer access) "
           "are missing from this libcuda, so some measurements were skipped; typically an "
           "older driver. A job is not affected. Confirm by hand: `nm -D "
           "/usr/lib/x86_64-linux-gnu/libcuda.so.1 | grep cuDeviceGetUuid`. Info: this finding "
           "changes neither the verdict nor the recommendation; a skipped multi-GPU test is "
           "judged by the rules that need it.",
       .evidence = "dlsym in the loaded libcuda of each optional entry point (the optional rows of "
                   "src/probes/cuda/driver_api.cpp: cuDriverGetVersion, cuDeviceGetUuid(_v2), "
                   "cuDeviceGetAttribute, peer access and copies, pinned memory, events, "
                   "cuGetErrorName).",
       .cases = {fires("cuda-2gpu-no-peer"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& cuda = c.facts.cuda;
         if (!cuda.ran || cuda.missing_optional_symbols.empty()) {
           return {};
         }
         std::vector<std::string> ev = dlsym_evidence(cuda, cuda.missing_optional_symbols);
         return {
             {fmt::format(
                  "libcuda lacks optional entry points ({}); the measurements that need them were skipped",
                  fmt::join(cuda.missing_optional_symbols, ", ")),
              std::move(ev)}};
       }},
      {.id = "cuda.init-failed",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "cuInit and CUDA's device enumeration succeed",
       .remedy =
           "Act on the error in the evidence: CUDA_ERROR_NO_DEVICE (100): no GPU is visible (driver, container device access, CUDA_VISIBLE_DEVICES); "
           "CUDA_ERROR_UNKNOWN (999): often /dev/nvidia-uvm is missing (`nvidia-modprobe -u -c=0`) or a GPU is in a bad state (check dmesg for Xid errors); "
           "CUDA_ERROR_SYSTEM_NOT_READY (802) on NVSwitch systems: start nvidia-fabricmanager; "
           "a GPU that failed RmInitAdapter beside working ones: take it out at the driver level (unbind, NVreg_ExcludedGpus)",
       .source = "docs/sources.md#cuda-driver-api",
       .explanation =
           "The probe runs cuInit and the device enumeration in a child process, as a training "
           "framework does on its first CUDA call; an error here is what the job would get. The "
           "code in the evidence points at the cause: 100 (no device visible: driver, container "
           "devices, CUDA_VISIBLE_DEVICES), 999 (unknown: often /dev/nvidia-uvm missing or a "
           "GPU in a bad state), 802 (system not ready: an NVSwitch system without Fabric "
           "Manager), 803/804 (driver and library mismatch). One GPU that the driver failed to "
           "initialise (RmInitAdapter in this boot) can make cuInit fail for every GPU, and "
           "CUDA_VISIBLE_DEVICES, applied after cuInit, does not help: the finding then names "
           "that GPU and the remedy takes it out at the driver level. Confirm by hand: `python3 -c "
           "'import torch; print(torch.cuda.device_count())'` and `dmesg | tail -50`. A "
           "host-level failure: no GPU is recommended.",
       .evidence =
           "The enumeration child's first failed step (cuInit, cuDeviceGetCount, or a device's "
           "cuDeviceGet / cuDeviceGetPCIBusId) with its CUresult, cuGetErrorName and "
           "cuGetErrorString, or how the child died; the libcuda file loaded. The current "
           "boot's `RmInitAdapter failed!` / `rm_init_adapter failed` kernel-log lines since "
           "the last driver load, against the GPUs in proc/driver/nvidia/gpus/, name a GPU "
           "that can fail cuInit for all.",
       .cases = {fires("cause-one-gpu-breaks-cuinit"), silent("cause-iommu-fault-p2p")},
       .check = init_failed_hits},
      {.id = "cuda.init-hung",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "cuInit and enumeration finish before the deadline",
       .remedy =
           "A GPU or the driver is wedged: check dmesg for Xid and RmInitAdapter errors, stop processes stuck on the GPU, reset the GPU (`nvidia-smi -r`) or reboot; "
           "if initialisation is merely slow, run nvidia-persistenced and raise --cuda-timeout",
       .source = "docs/cuda-probe.md#schedule-and-deadlines",
       .explanation =
           "cuInit or the enumeration did not return before the deadline (--timeout, 30 s by "
           "default), and the child was killed. A job would hang the same way on its first CUDA "
           "call, holding its allocation without an error. Causes: a wedged GPU or driver (an "
           "Xid, a GPU off the bus), a process stuck in the driver, or a large node "
           "initialising every GPU without nvidia-persistenced. Confirm by hand: `timeout 60 "
           "nvidia-smi` (a hang confirms it) and `dmesg | grep -i -e xid -e nvrm`. A host-level "
           "failure: no GPU is recommended.",
       .evidence =
           "The enumeration child's step that had not finished (dlopen, cuInit, "
           "cuDeviceGetCount, a device query) when --cuda-timeout killed it, and the libcuda "
           "file loaded.",
       .cases = {fires("cuda-init-hung"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& cuda = c.facts.cuda;
         if (start_failure(cuda) != StartFailure::hung) {
           return {};
         }
         auto ev = start_evidence(cuda);
         ev.push_back(timeout_evidence(cuda));
         return {
             {"CUDA initialisation hung: the enumeration child did not finish before the deadline",
              std::move(ev)}};
       }},
      {.id = "cuda.gpu-failed",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Each GPU passes CUDA start-up in its own process",
       .remedy =
           "Run the job without this GPU (the recommendation leaves it out); "
           "check dmesg for Xid errors on its bus id, reset it (`nvidia-smi -r -i <bus id>`) or reboot, and replace it if it keeps failing",
       .source = "docs/cuda-probe.md",
       .explanation =
           "Each GPU is started on its own, in its own child process (a context, a memory "
           "allocation and a copy), so that one bad GPU does not hide the others. This GPU "
           "failed where the others passed: a job that puts a rank on it would crash at "
           "start-up. The error in the evidence names the cause, such as an uncorrectable ECC "
           "state, a GPU in exclusive use by another process, or an earlier Xid. Confirm by "
           "hand, with the GPU's index: `CUDA_VISIBLE_DEVICES=3 python3 -c 'import torch; "
           "torch.zeros(1, device=\"cuda\")'` and `nvidia-smi -q -i 3`. The GPU is left out of "
           "the recommendation.",
       .evidence =
           "The steps of each GPU's own CUDA child (CUDA_VISIBLE_DEVICES=<its UUID or index>): "
           "dlopen, cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain, cuMemAlloc, cuMemsetD8 and "
           "a cuMemcpyHtoD/cuMemcpyDtoH round trip checked byte for byte, the timed copies "
           "when asked for, then cuMemFree and cuDevicePrimaryCtxRelease; the first failed "
           "step's CUresult. CUDA_ERROR_OUT_OF_MEMORY counts only when no process holds the "
           "GPU's /dev/nvidiaN (proc/<pid>/fd) and NVML lists none on it.",
       .cases = {fires("cuda-gpu-faults", "0000:04:00.0"), silent("cuda-gpu-in-use")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& d : c.facts.cuda.devices) {
           const CudaStep* bad = first_bad(d.steps);
           if (!c.facts.cuda.enumerated() || d.usable ||
               (d.in_use && !oom_without_holder(c.facts, d)) || (bad && bad->timed_out)) {
             continue; // a GPU held by another process is cuda.gpu-in-use, not broken
           }
           if (!bad && (d.active.memory_bad() || d.active.integer_mismatches > 0)) {
             continue; // cuda.gpu-memory-error, cuda.gpu-compute-wrong
           }
           if (!bad) {
             hits.push_back(
                 {fmt::format("{} was not tested: its child never reported", c.job.label(d.bus_id)),
                  {device_label(d) + ": no steps recorded"},
                  d.bus_id,
                  Effect::gpu_unusable});
             continue;
           }
           hits.push_back(gpu_hit(d, *bad,
                                  fmt::format("{} failed CUDA start-up at step {}: {}",
                                              c.job.label(d.bus_id), bad->name, bad->error_name)));
         }
         return hits;
       }},
      // Taken, not broken: no effect, so the GPU is not dropped and never counts against
      // --min-gpus.
      {.id = "cuda.gpu-in-use",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "No GPU is held by another process (busy is not broken)",
       .remedy =
           "Nothing is wrong with the GPU: wait until the processes in the evidence finish, or start the job on other GPUs; "
           "in exclusive-process compute mode a GPU serves one process at a time (`nvidia-smi -q -d COMPUTE`). "
           "Periodic health checks should pass --skip-busy so that they never touch a job's GPUs",
       .source = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",
       .explanation =
           "CUDA answers CUDA_ERROR_DEVICE_UNAVAILABLE (46) when an exclusive-process GPU already has its process, and CUDA_ERROR_OUT_OF_MEMORY (2) when another process holds its memory: the GPU works but is taken. "
           "It stays in the recommendation and never counts against --min-gpus.",
       .evidence =
           "the failing step and its CUresult, the processes holding the GPU's device node (/proc/<pid>/fd), the compute mode",
       .reads = {ProbeId::cuda},
       .cases = {fires("cuda-gpu-in-use", "0000:5d:00.0"), silent("cuda-gpu-faults")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& d : c.facts.cuda.devices) {
           const CudaStep* bad = first_bad(d.steps);
           if (!c.facts.cuda.enumerated() || !d.in_use || !bad || oom_without_holder(c.facts, d)) {
             continue; // out of memory with no holder anywhere: cuda.gpu-failed
           }
           std::vector<std::string> ev{fmt::format("{}: {}", device_label(d), step_error(*bad))};
           ev.push_back(
               d.holders.empty()
                   ? std::string("processes holding it: not known (the process table shows none)")
                   : fmt::format("processes holding it: {}", fmt::join(d.holders, ", ")));
           if (d.compute_mode) {
             ev.push_back(
                 fmt::format("compute mode {} (0 default, 2 prohibited, 3 exclusive-process)",
                             *d.compute_mode));
           }
           hits.push_back({fmt::format("{} is in use by another process: {} at step {}",
                                       c.job.label(d.bus_id), bad->error_name, bad->name),
                           std::move(ev), d.bus_id});
         }
         return hits;
       }},
      {.id = "cuda.gpu-hung",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Each GPU finishes CUDA start-up before the deadline",
       .remedy =
           "Run the job without this GPU (the recommendation leaves it out); "
           "a hang at start-up usually means the GPU is wedged: check dmesg for Xid errors, reset it (`nvidia-smi -r -i <bus id>`) or reboot",
       .source = "docs/cuda-probe.md",
       .explanation =
           "This GPU's own start-up child (context, allocation, copy) did not finish before the "
           "deadline and was killed, while the others finished. A job rank placed on it would "
           "hang, and with it every collective of the job. Usually the GPU is wedged after an "
           "error; sometimes a process holds it. Confirm by hand, with the GPU's index: "
           "`timeout 60 nvidia-smi -q -i 3` and `dmesg | grep -i xid`. The GPU is left out of "
           "the recommendation.",
       .evidence =
           "The step each GPU's own CUDA child had begun and not finished (dlopen, cuInit, "
           "cuDeviceGet, cuDevicePrimaryCtxRetain, cuMemAlloc, cuMemsetD8, the copy round "
           "trip, the timed copies, release) when its deadline within --cuda-timeout killed "
           "it.",
       .cases = {fires("cuda-replay-gpu-hung", "0000:02:00.0"), silent("cuda-replay-garbage")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& d : c.facts.cuda.devices) {
           const CudaStep* bad = first_bad(d.steps);
           if (!c.facts.cuda.enumerated() || d.usable || !bad || !bad->timed_out) {
             continue;
           }
           const bool kernel = bad->name == "first_kernel" || bad->name == "memory_test";
           hits.push_back(gpu_hit(
               d, *bad,
               kernel ? fmt::format("{} hung in a test kernel of the active step ({}): a kernel "
                                    "that never finishes",
                                    c.job.label(d.bus_id), bad->name)
                      : fmt::format("{} hung in CUDA start-up at step {}", c.job.label(d.bus_id),
                                    bad->name)));
         }
         return hits;
       }},
      // Slow: more than 5x the median of the other GPUs and over a second.
      {.id = "cuda.gpu-slow-init",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "No GPU initialises far slower than the others (> 5x median, > 1 s)",
       .remedy =
           "Run nvidia-persistenced so GPUs stay initialised between jobs; "
           "if only this GPU is slow, check dmesg for errors on its bus id and its PCIe link (`lspci -vv`: LnkSta speed and width)",
       .source = "docs/sources.md#persistence",
       .explanation =
           "This GPU took more than five times the median start-up time of the others, and over "
           "a second. Either the GPUs are not kept initialised (no nvidia-persistenced, so each "
           "new process pays the driver's start-up), or this GPU has a problem of its own: a "
           "degraded PCIe link, pending errors, throttling. In data-parallel training the "
           "slowest rank sets everyone's pace, and long start-ups trip launcher timeouts. "
           "Confirm by hand: `systemctl status nvidia-persistenced` and `lspci -vv -d 10de: | "
           "grep LnkSta`. Warn: the GPU stays in the recommendation.",
       .evidence =
           "Each usable GPU's cuInit + primary_context (cuDevicePrimaryCtxRetain) time in its "
           "own CUDA child, against the median of the other usable GPUs' times.",
       .cases = {fires("cuda-gpu-faults", "0000:03:00.0"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<const CudaDevice*> measured;
         for (const auto& d : c.facts.cuda.devices) {
           if (d.usable && d.init_ms) {
             measured.push_back(&d);
           }
         }
         std::vector<Hit> hits;
         if (measured.size() < 2) {
           return hits;
         }
         std::vector<double> sorted;
         for (const auto* d : measured) {
           sorted.push_back(*d->init_ms);
         }
         std::sort(sorted.begin(), sorted.end());
         for (const auto* d : measured) {
           const double mine = *d->init_ms;
           const double typical = median_without(sorted, mine);
           if (mine > 1000 && mine > 5 * typical) {
             hits.push_back(
                 {fmt::format("{} took {} to initialise, {:.0f}x the other GPUs",
                              c.job.label(d->bus_id), ms_text(mine),
                              typical > 0 ? mine / typical : 0.0),
                  {fmt::format("{}: cuInit + primary_context {}; median of the other GPUs {}",
                               device_label(*d), ms_text(mine), ms_text(typical)),
                   steps_text(d->steps)},
                  d->bus_id});
           }
         }
         return hits;
       }},
      {.id = "cuda.gpu-not-enumerated",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "CUDA enumerates every GPU the driver lists",
       .remedy =
           "Check that the job can reach the GPU (container device list, cgroup device rules, MIG mode) and dmesg for errors on its bus id; "
           "the recommendation leaves it out",
       .source = "docs/sources.md#driver-files-under-proc-and-sys",
       .explanation =
           "The driver lists this GPU but CUDA's enumeration in the probe did not return it, so "
           "a job cannot use it either. Typical causes: a container or cgroup exposing only "
           "some GPUs, a GPU in MIG mode without instances the job may use, or a GPU that "
           "failed after the driver loaded. Confirm by hand: compare `nvidia-smi -L` with "
           "`python3 -c 'import torch; print(torch.cuda.device_count())'`. The GPU is left out "
           "of the recommendation.",
       .evidence = "The GPUs in proc/driver/nvidia/gpus/ not marked `GPU Excluded: Yes` in their "
                   "information file, against the PCI bus ids CUDA's enumeration child got without "
                   "CUDA_VISIBLE_DEVICES (cuDeviceGetCount, cuDeviceGet, cuDeviceGetPCIBusId).",
       .cases = {fires("cuda-not-enumerated", "0000:04:00.0"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
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
               {fmt::format("{} is listed by the driver but CUDA does not enumerate it",
                            c.job.label(gpu.bus_id)),
                {fmt::format("/proc/driver/nvidia/gpus/{}: listed by the driver", gpu.bus_id),
                 cuda_list(cuda)},
                gpu.bus_id,
                Effect::gpu_unusable});
         }
         return hits;
       }},
      {.id = "cuda.device-not-listed-by-driver",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "Every CUDA device is one of the driver's GPUs",
       .remedy = "Compare `nvidia-smi -L` with the CUDA devices in the evidence; "
                 "a snapshot without that GPU's /proc/driver/nvidia/gpus entry is incomplete",
       .source = "docs/sources.md#cuda-driver-api",
       .explanation =
           "CUDA enumerated a device whose PCI bus id is not among the GPUs in "
           "/proc/driver/nvidia/gpus. The two views of the machine disagree, so indices "
           "computed from the driver's list may not be the ones the job sees. Live, this points "
           "at an inconsistent driver state; on a snapshot, at an incomplete capture. Confirm "
           "by hand: `nvidia-smi -L` against `ls /proc/driver/nvidia/gpus`. Warn: --strict "
           "makes the check not ready.",
       .evidence =
           "The PCI bus id of each device of CUDA's enumeration child (cuDeviceGetPCIBusId) "
           "against the GPU directories of proc/driver/nvidia/gpus/; judged only with the "
           "driver loaded and not on WSL2.",
       .cases = {fires("cuda-not-listed-by-driver", "0000:05:00.0"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
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
               {fmt::format(
                    "{} is not among the driver's GPUs: the driver-side checks did not cover it",
                    device_label(d)),
                {fmt::format("{}: bus id {}", device_label(d), d.bus_id),
                 fmt::format("/proc/driver/nvidia/gpus: {}",
                             driver_buses.empty()
                                 ? "(none)"
                                 : fmt::format("{}", fmt::join(driver_buses, ", ")))},
                d.bus_id});
         }
         return hits;
       }},
      {.id = "cuda.host-bandwidth-low",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "No GPU copies to or from host memory far slower than the node's GPUs of its kind",
       .remedy = "Check the GPU's PCIe path (`lspci -vv`: LnkSta against LnkCap); reseat it if "
                 "its link trained low",
       .source = "docs/cuda-probe.md#bandwidth",
       .explanation =
           "Each GPU's child times copies between pinned host memory and the GPU (CUDA events, "
           "the best of a few copies of 128 MiB each way). A GPU is compared with the other GPUs "
           "of this node of the same model and PCIe capability, never with a number of its own: "
           "it is flagged when its figure lies more than 3 scaled median absolute deviations "
           "and more than 25% below their median. A class of fewer than three GPUs is reported, "
           "not judged. The likely cause comes from the PCIe facts: a link that trained "
           "narrower or slower than both ends support, a switch uplink shared with other GPUs, "
           "or the IOMMU translating the GPU's DMA. Data-parallel training runs at the pace of "
           "its slowest rank, with no error anywhere. Confirm by hand: `nvidia-smi -q -d "
           "PERFORMANCE` and `lspci -vv -s BUS` (LnkSta) while copying. Warn: the GPU stays in "
           "the recommendation.",
       .evidence = "the GPU's figure, its class's median and spread, the class's figures and the "
                   "PCIe facts behind the likely cause",
       .cases = {fires("cuda-host-copy-slow", "0000:03:00.0"), silent("cuda-4gpu-passed")},
       .check = host_bandwidth_hits},
      {.id = "cuda.peer-bandwidth-low",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "No GPU pair copies far slower than the node's pairs on the same kind of path",
       .remedy = "Check ACS and the IOMMU on the path between the two GPUs, and both GPUs' links",
       .source = "docs/cuda-probe.md#bandwidth",
       .explanation =
           "The multi-GPU child times peer copies between every ordered pair of GPUs (CUDA "
           "events, the best of a few copies of 64 MiB). A pair is compared with the node's "
           "pairs of the same models on the same kind of path (NVLink, behind one PCIe switch, "
           "through the host bridge, across host bridges, or staged through host memory when "
           "peer access is refused): it is flagged when its figure lies more than 3 scaled "
           "median absolute deviations and more than 25% below their median. The likely cause "
           "comes from the topology facts: ACS redirecting peer traffic to the root complex, "
           "the IOMMU translating it, a link trained low or shared. NCCL rings and trees through "
           "the pair run at its pace. Confirm by hand: `nvidia-smi topo -p2p r` and nvbandwidth "
           "or `p2pBandwidthLatencyTest`. Warn: the GPUs stay in the recommendation.",
       .evidence = "the pair's figure, its class's median and spread, and the bridges and links "
                   "between the two GPUs",
       .cases = {fires("cuda-peer-slow", "0000:02:00.0"), silent("cuda-4gpu-passed")},
       .check = peer_bandwidth_hits},
      // Info: the figures themselves, judged or not.
      {.id = "cuda.bandwidth-measured",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Copy bandwidth figures of the node's GPUs",
       .remedy = "Nothing to do; cuda.host-bandwidth-low and cuda.peer-bandwidth-low judge them",
       .source = "docs/cuda-probe.md#bandwidth",
       .explanation =
           "The figures of the bandwidth step: each GPU's host-to-device and device-to-host "
           "copies from pinned memory and the peer copies between GPU pairs, in GB/s. A GPU in "
           "a class of fewer than three (by model and PCIe capability) is reported here and not "
           "judged; a GPU another process holds is not measured and is listed as not checked.",
       .evidence =
           "The timed copies (CUDA events, the best of the repeats): each GPU's own child "
           "copies between pinned host memory (cuMemAllocHost) and the GPU (cuMemcpyHtoDAsync, "
           "cuMemcpyDtoHAsync), the multi-GPU child between each ordered pair "
           "(cuMemcpyPeerAsync); a GPU's class is its model (cuDeviceGetName) and PCIe link "
           "capability (sys/bus/pci/devices/*/max_link_width and max_link_speed, else NVML).",
       .cases = {fires("cuda-4gpu-passed"), silent("cuda-init-hung")},
       .check = bandwidth_figures},
      {.id = "cuda.gpu-memory-error",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Each GPU's memory reads back what was written (the active step's patterns)",
       .remedy = "Drain the node or run the job without this GPU; reset it (`nvidia-smi -r -i "
                 "<bus id>`) and run NVIDIA's long diagnostic to confirm (`dcgmi diag -r 4`); "
                 "replace it if the fault stays",
       .source = "docs/cuda-probe.md#active-step",
       .explanation =
           "Each idle GPU's own child writes patterns over a bounded region of its free memory "
           "(each word its own index and its complement, walking ones and zeros, a seeded "
           "pseudo-random pattern) and verifies them on the GPU. A word that reads back wrong is a "
           "stuck bit, a bad cell or an address fault: a job would load its checkpoint or its "
           "weights into that memory and train on corrupted values with no error anywhere. The "
           "GPU is left out of the recommendation. A seconds-long check finds hard faults; it "
           "cannot catch rare intermittent corruption, which needs long or repeated scans "
           "(NVIDIA's `dcgmi diag -r 4` runs its memory test for minutes).",
       .evidence = "the region tested, the patterns, the count of words that differed and the "
                   "first of them: pattern, offset in the region, device address, expected and "
                   "read word (gpf_fill / gpf_check kernels launched with cuLaunchKernel)",
       .cases = {fires("cuda-gpu-faults", "0000:02:00.0"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& d : c.facts.cuda.devices) {
           const auto& a = d.active;
           if (!c.facts.cuda.enumerated() || !a.memory_bad()) {
             continue;
           }
           std::vector<std::string> ev{
               fmt::format("{}: {} of {} MiB read back wrong over the patterns {}", device_label(d),
                           counted(a.memory_mismatches, "word"), a.memory_bytes >> 20,
                           fmt::join(a.patterns, ", "))};
           for (const auto& e : a.memory_errors) {
             ev.push_back(fmt::format(
                 "pattern {}: offset 0x{:x} (device address 0x{:x}): expected 0x{:08x}, got "
                 "0x{:08x} (bits 0x{:08x} differ)",
                 e.pattern, e.offset, e.address, e.expected, e.got, e.expected ^ e.got));
           }
           ev.emplace_back(k_active_limits);
           Hit hit{fmt::format("{} has a memory fault: {} of its memory read back wrong, first at "
                               "offset 0x{:x}",
                               c.job.label(d.bus_id), counted(a.memory_mismatches, "word"),
                               a.memory_errors.empty() ? 0 : a.memory_errors.front().offset),
                   std::move(ev), d.bus_id, Effect::gpu_unusable};
           hit.remedy = active_remedy(d);
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      {.id = "cuda.gpu-compute-wrong",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Each GPU computes the active step's kernel right (host reference, same-model "
                "GPUs agree)",
       .remedy = "Drain the node or run the job without this GPU; reset it (`nvidia-smi -r -i "
                 "<bus id>`) and run NVIDIA's long diagnostic to confirm (`dcgmi diag -r 3`); "
                 "replace it if the fault stays",
       .source = "docs/cuda-probe.md#active-step",
       .explanation =
           "Each idle GPU runs one deterministic kernel with fixed inputs (integer and "
           "single-precision FMA chains, a 16 x 16 matrix product): every GPU that computes right "
           "writes the same words. Its integer words are checked against the host's own "
           "computation, and the checksum of all words is compared bit for bit with the node's "
           "other GPUs of the same model (no per-model figure anywhere). A GPU is wrong when its "
           "integer words differ from the host's, or when a majority of its model's GPUs agree on "
           "another checksum: a unit that computes wrong corrupts training silently. A GPU alone "
           "of its model is judged by the host reference only; GPUs that disagree with no "
           "majority are cuda.compute-no-majority. A seconds-long check cannot catch rare "
           "intermittent corruption.",
       .evidence = "the GPU's checksum, its model's checksums per GPU, the first integer word "
                   "that differs from the host's (thread, expected, got)",
       .cases = {fires("cuda-compute-wrong", "0000:03:00.0"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         if (!c.facts.cuda.enumerated()) {
           return {};
         }
         std::vector<Hit> hits;
         for (auto& w : judge_compute(c.facts.cuda).wrong) {
           const auto& d = c.facts.cuda.devices[w.device];
           w.evidence.insert(w.evidence.begin(),
                             fmt::format("{}: compute kernel {} threads x {} rounds, checksum {}",
                                         device_label(d), 65536, 256, d.active.checksum));
           w.evidence.emplace_back(k_active_limits);
           Hit hit{fmt::format("{} computes wrong: {}", c.job.label(d.bus_id),
                               d.active.integer_mismatches > 0
                                   ? "its integer results differ from the host's"
                                   : "its checksum differs from its model's other GPUs"),
                   std::move(w.evidence), d.bus_id, Effect::gpu_unusable};
           hit.remedy = active_remedy(d);
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      // Warn, no effect: nothing tells which GPU is right.
      {.id = "cuda.compute-no-majority",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "The node's GPUs of one model agree on the active step's checksum",
       .remedy = "Run NVIDIA's long diagnostic on every GPU of the model (`dcgmi diag -r 3`) to "
                 "find the one that computes wrong; no GPU is left out on this ground alone",
       .source = "docs/cuda-probe.md#active-step",
       .explanation =
           "The GPUs of one model computed the same kernel on the same inputs and got different "
           "checksums, with no majority: the check cannot tell which is right (their integer "
           "words all match the host's, else they would be cuda.gpu-compute-wrong). None is "
           "dropped on this ground alone.",
       .evidence = "the model's checksums and the GPUs that got each",
       .cases = {fires("cuda-compute-no-majority"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         if (!c.facts.cuda.enumerated()) {
           return {};
         }
         std::vector<Hit> hits;
         for (auto& [model, ev] : judge_compute(c.facts.cuda).no_majority) {
           hits.push_back({fmt::format("The GPUs of model {} disagree on the active step's "
                                       "checksum and no majority exists; none is dropped on that "
                                       "ground",
                                       model),
                           std::move(ev)});
         }
         return hits;
       }},
      {.id = "cuda.active-not-checked",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "The active step ran on every idle GPU",
       .remedy = "Nothing is wrong with the GPUs on this ground; the reason says what kept the "
                 "step from running (a driver without the JIT, memory taken, --budget)",
       .source = "docs/cuda-probe.md#active-step",
       .explanation =
           "The active step did not run, or not all of it, on these GPUs: a GPU in use is never "
           "loaded with test kernels, and a failure of the step's own machinery (the driver "
           "refusing the JIT of the embedded PTX, a missing entry point, no memory to test) "
           "leaves the GPU not checked, never judged. The verdict does not change.",
       .evidence = "the reason per GPU: the CUresult of cuModuleLoadData or cuModuleGetFunction, "
                   "the processes holding the GPU, the time or the budget",
       .cases = {fires("cuda-active-jit-error"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& cuda = c.facts.cuda;
         if (!cuda.enumerated() || !cuda.active.run) {
           if (cuda.enumerated() && starts_with(cuda.active.not_checked, "budget")) {
             return {{"The active step did not run: " + cuda.active.not_checked,
                      {"active step: " + cuda.active.not_checked}}};
           }
           return {};
         }
         std::vector<std::string> ev;
         for (const auto& d : cuda.devices) {
           if (d.usable && !d.active.not_checked.empty()) {
             ev.push_back(fmt::format("{}: {}", device_label(d), d.active.not_checked));
           }
         }
         if (ev.empty()) {
           return {};
         }
         return {{fmt::format("The active step did not check {}", counted(ev.size(), "GPU")),
                  std::move(ev)}};
       }},
      {.id = "cuda.active-passed",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Figures of the active step (memory patterns, compute checksum, first kernel)",
       .remedy = "Nothing to do; cuda.gpu-memory-error and cuda.gpu-compute-wrong judge them",
       .source = "docs/cuda-probe.md#active-step",
       .explanation =
           "Each idle GPU passed the active step: its memory patterns read back right and its "
           "compute checksum agreed with the host and its model's GPUs. A seconds-long check "
           "finds hard faults; it cannot catch rare intermittent corruption, which needs long or "
           "repeated scans.",
       .evidence = "per GPU: the first kernel's launch and synchronisation, the checksum, the "
                   "region and patterns tested and their time",
       .cases = {fires("cuda-4gpu-passed"), silent("cuda-init-hung")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& cuda = c.facts.cuda;
         if (!cuda.enumerated()) {
           return {};
         }
         std::vector<std::string> ev;
         for (const auto& d : cuda.devices) {
           if (d.active.ran) {
             ev.push_back(active_figures(d));
           }
         }
         if (ev.empty()) {
           return {};
         }
         const auto n = ev.size();
         ev.emplace_back(k_active_limits);
         return {{fmt::format("Active step ran on {} (memory patterns, compute checksum)",
                              counted(n, "GPU")),
                  std::move(ev)}};
       }},
      {.id = "cuda.multi-gpu-failed",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "Peer-to-peer copies between the usable GPUs work",
       .remedy =
           "Start the job on one GPU; "
           "for several GPUs try NCCL_P2P_DISABLE=1, check PCIe ACS/IOMMU settings, or upgrade the kernel",
       .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
       .explanation =
           "With two or more usable GPUs, the probe enables peer access and copies between "
           "them, as NCCL does before its first all-reduce. A failure means multi-GPU training "
           "would fail or fall back. Known causes: PCIe ACS redirecting peer traffic to the "
           "root complex, an IOMMU in translation mode, and kernels older than 5.5 on some "
           "platforms. Confirm by hand: `nvidia-smi topo -m`, `nvidia-smi topo -p2p r`, and "
           "NCCL's `all_reduce_perf -g 2` from nccl-tests. Warn: the recommendation keeps one "
           "GPU; NCCL_P2P_DISABLE=1 is the usual workaround, at a bandwidth cost.",
       .evidence =
           "The multi-GPU child over the GPUs that passed their own child and that "
           "CUDA_VISIBLE_DEVICES admits: cuDevicePrimaryCtxRetain and cuMemAlloc on each, then "
           "per ordered pair cuDeviceCanAccessPeer, cuCtxEnablePeerAccess, cuMemcpyPeer and a "
           "read-back, each failure with its CUresult. For the failed pairs, the ACS control "
           "of the bridges between them (their config space under sys/bus/pci/devices) and, "
           "outside a VM (cpuinfo hypervisor flag), the IOMMU's DMA translation "
           "(sys/kernel/iommu_groups/*/type, proc/cmdline).",
       .cases = {fires("cuda-peer-error"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return multi_evidence_hits(c, false);
       }},
      {.id = "cuda.multi-gpu-hung",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "Peer-to-peer copies between the usable GPUs finish",
       .remedy =
           "Start the job on one GPU; "
           "for several GPUs try NCCL_P2P_DISABLE=1, check PCIe ACS/IOMMU settings, or upgrade the kernel",
       .source = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
       .explanation =
           "With two or more usable GPUs, the probe enables peer access and copies between "
           "them; here the copies did not finish before the deadline. A multi-GPU job would "
           "hang in its first collective with no error, holding its allocation. Known causes: "
           "PCIe ACS redirecting peer traffic, an IOMMU in translation mode, and kernels older "
           "than 5.5 on some platforms. Confirm by hand: `nvidia-smi topo -m` and `timeout 120 "
           "all_reduce_perf -g 2` from nccl-tests. Warn: the recommendation keeps one GPU; "
           "NCCL_P2P_DISABLE=1 is the usual workaround, at a bandwidth cost.",
       .evidence =
           "The multi-GPU child over the GPUs that passed their own child and that "
           "CUDA_VISIBLE_DEVICES admits: the set-up step (cuDevicePrimaryCtxRetain, "
           "cuMemAlloc) or peer copy (cuDeviceCanAccessPeer, cuCtxEnablePeerAccess, "
           "cuMemcpyPeer) that had not finished when --cuda-timeout killed it, past its own "
           "cuInit. For those GPUs, the ACS control of the bridges between them (their config "
           "space under sys/bus/pci/devices) and, outside a VM (cpuinfo hypervisor flag), the "
           "IOMMU's DMA translation (sys/kernel/iommu_groups/*/type, proc/cmdline).",
       .reads = {ProbeId::cuda},
       .cases = {fires("topo-acs-p2p-hang"), silent("topo-acs-off")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return multi_evidence_hits(c, true);
       }},
      // Info, no effect: the copies were not tried, so nothing is known against them.
      {.id = "cuda.multi-gpu-not-completed",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "The multi-GPU test gets past its own cuInit before the deadline",
       .remedy =
           "Run nvidia-persistenced so that each process's cuInit is fast, or raise --cuda-timeout",
       .source = "docs/cuda-probe.md#schedule-and-deadlines",
       .explanation =
           "Every CUDA process pays cuInit; without nvidia-persistenced it can take seconds. The "
           "multi-GPU child starts after enumeration, so when cuInit alone costs half the deadline "
           "or more it is killed inside its own cuInit, having run for less time than the per-GPU "
           "children needed for theirs. That is a test that did not complete, not a hang between "
           "GPUs: peer-to-peer copies were not checked, and the GPUs stay in the recommendation.",
       .evidence = "how long the multi-GPU child was in cuInit, the slowest per-GPU cuInit, the "
                   "GPUs it covered and --cuda-timeout",
       .cases = {fires("cuda-multi-not-completed"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& cuda = c.facts.cuda;
         const auto cut = multi_gpu_cut_in_init(cuda);
         if (!cut) {
           return {};
         }
         const double more_s = std::ceil((cut->per_gpu_init_ms - cut->in_init_ms) / 1000.0);
         Hit hit{
             fmt::format("Multi-GPU test not completed in time: its cuInit was still running "
                         "at the deadline after {}, while each GPU's own cuInit took up to "
                         "{}; peer-to-peer copies were not checked",
                         ms_text(cut->in_init_ms), ms_text(cut->per_gpu_init_ms)),
             {fmt::format("multi-GPU child: cuInit killed at the deadline after {}",
                          ms_text(cut->in_init_ms)),
              fmt::format("slowest per-GPU cuInit: {}", ms_text(cut->per_gpu_init_ms)),
              fmt::format("GPUs tested together: CUDA {}", fmt::join(cuda.multi_gpu_devices, ", ")),
              timeout_evidence(cuda)}};
         hit.remedy =
             fmt::format("Run nvidia-persistenced so that each process's cuInit is fast, or raise "
                         "--cuda-timeout from {:g} s to at least {:g} s",
                         cuda.timeout_s, cuda.timeout_s + std::max(1.0, more_s));
         return {hit};
       }},
  };
  return rows;
}

} // namespace gpf
