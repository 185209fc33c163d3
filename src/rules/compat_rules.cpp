// The compatibility rows: the job's CUDA vs the driver, vs each GPU's architecture; the driver
// flavour and branch vs each GPU; the kernel vs the driver branch; driver end of life; kernel
// module vs user-space library versions. The numbers come from the matrix (data/*.json); facts
// and sources: ../shared/reference/nvidia-facts.md §1, §2, §6, §8, §9.
#include "gpf/rules/compat_view.hpp"
#include "gpf/rules/matrix.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

namespace gpf {
namespace {

constexpr std::string_view k_src_cuda_driver =
    "nvidia-facts.md §1a-1b: CUDA Toolkit 13.2 release notes §2.2, Tables 2 and 3 "
    "(https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html); data/cuda_toolkit_driver.json, "
    "data/cuda_minor_compat.json";
constexpr std::string_view k_src_forward =
    "nvidia-facts.md §1b, §1d, §9: CUDA Compatibility guide, forward compatibility "
    "(https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html)";
constexpr std::string_view k_src_archs =
    "nvidia-facts.md §2a: Kitware CMake CMakeCUDAArchitecturesAll.cmake; CUDA 13.2 release notes §2.6.2 "
    "(https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html); data/cuda_architectures.json, "
    "data/gpu_models.json (https://developer.nvidia.com/cuda-gpus)";
constexpr std::string_view k_src_flavour =
    "nvidia-facts.md §2b: open-gpu-kernel-modules README \"Compatible GPUs\"; Driver Installation Guide "
    "\"Kernel Modules\" (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html); "
    "data/driver_architectures.json";
constexpr std::string_view k_src_kernel_floor =
    "nvidia-facts.md §2c: open-gpu-kernel-modules README \"Supported Linux Kernel Versions\" per tag and "
    "kernel-open/common/inc/nv-linux.h; data/driver_kernel_floors.json";
constexpr std::string_view k_src_eol =
    "nvidia-facts.md §1c: data-center driver support matrix "
    "(https://docs.nvidia.com/datacenter/tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html); "
    "data/driver_branches.json";
constexpr std::string_view k_src_mismatch =
    "nvidia-facts.md §6e (sys/module/*/version), §9 (API mismatch in osapi.c; NVML_ERROR_LIB_RM_VERSION_MISMATCH; "
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH 803); glibc ld.so search order (LD_LIBRARY_PATH, /etc/ld.so.cache, defaults)";

const Matrix& matrix() { return Matrix::get(); }

std::string expected_evidence(const ExpectedCuda& e) { return fmt::format("expected CUDA {} ({})", e.text, e.source); }

std::string gpu_label(const GpuArch& g) {
  return fmt::format("GPU {} ({}{})", g.bus_id, g.model.empty() ? "unknown model" : g.model,
                     g.cc ? fmt::format(", compute capability {}{}", g.cc->str(), g.arch.empty() ? "" : ", " + g.arch) : "");
}

// ---- expected CUDA vs driver ------------------------------------------------------------------

struct CudaOnDriver {
  bool judged = false;
  CudaDriverJudgement judgement;
  std::vector<std::string> evidence;
  std::string driver_text; // what the runtime meets
  // Judged from cuDriverGetVersion alone (no kernel module version, e.g. WSL2).
  std::optional<Version> reported_only;
};

CudaOnDriver cuda_on_driver(const Facts& facts) {
  CudaOnDriver r;
  const auto& expected = facts.compat.expected_cuda;
  if (!expected) {
    return r;
  }
  const DriverView d = driver_view(facts);
  r.evidence.push_back(expected_evidence(*expected));
  if (d.effective) {
    r.judged = true;
    r.judgement = matrix().judge_cuda_on_driver(expected->version, *d.effective);
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
    r.judgement.status = *d.cuda_reported >= want                           ? CudaDriverStatus::ok
                         : d.cuda_reported->major() == want.major() && want.major() >= 11 ? CudaDriverStatus::minor_version_compat
                                                                                          : CudaDriverStatus::too_old;
  }
  if (d.cuda_reported && d.effective) {
    r.evidence.push_back(fmt::format("cuDriverGetVersion: {}", *facts.cuda.driver_version));
  }
  return r;
}

std::string toolkit_needs(const CudaDriverJudgement& j) {
  return j.toolkit ? fmt::format("CUDA {} needs driver {} or newer", j.toolkit->release, j.toolkit->driver_text) : std::string();
}

std::vector<Hit> cuda_driver_too_old(const RuleContext& c) {
  const auto r = cuda_on_driver(c.facts);
  if (!r.judged || r.judgement.status != CudaDriverStatus::too_old) {
    return {};
  }
  const auto& e = *c.facts.compat.expected_cuda;
  std::string why;
  if (r.reported_only) {
    why = fmt::format("the driver supports CUDA {} only", r.reported_only->str());
  } else if (r.judgement.floor) {
    why = fmt::format("CUDA {}.x needs driver {} or newer even under minor-version compatibility", e.version.major(),
                      r.judgement.floor->floor_text);
  } else {
    why = toolkit_needs(r.judgement) + " (CUDA " + std::to_string(e.version.major()) + " has no minor-version compatibility)";
  }
  return {{fmt::format("The job's CUDA {} cannot run on driver {}: {}. The CUDA runtime refuses to start "
                       "(cudaErrorInsufficientDriver, 35: the driver is older than the runtime)",
                       e.text, r.reported_only ? std::string("(version unknown)") : r.driver_text, why),
           r.evidence}};
}

std::vector<Hit> cuda_minor_version_compat(const RuleContext& c) {
  const auto r = cuda_on_driver(c.facts);
  if (!r.judged || r.judgement.status != CudaDriverStatus::minor_version_compat) {
    return {};
  }
  const auto& e = *c.facts.compat.expected_cuda;
  const std::string needs = r.reported_only ? fmt::format("the driver supports CUDA {}", r.reported_only->str())
                                            : toolkit_needs(r.judgement);
  return {{fmt::format("The job's CUDA {} runs on driver {} only through minor-version compatibility ({}): features "
                       "that need the newer driver fail (cudaErrorCallRequiresNewerDriver) and PTX newer than the driver "
                       "cannot be JIT-compiled, so the job must carry SASS for these GPUs",
                       e.text, r.reported_only ? std::string("(version unknown)") : r.driver_text, needs),
           r.evidence}};
}

std::vector<Hit> cuda_version_not_in_matrix(const RuleContext& c) {
  const auto r = cuda_on_driver(c.facts);
  if (!r.judged || (r.judgement.status != CudaDriverStatus::unknown_release && r.judgement.status != CudaDriverStatus::unknown_major)) {
    return {};
  }
  const auto& e = *c.facts.compat.expected_cuda;
  const std::string what = r.judgement.status == CudaDriverStatus::unknown_release
                               ? fmt::format("its major's minor-version floor ({}) is met, but the release's own driver is "
                                             "not known", r.judgement.floor->floor_text)
                               : "neither the release nor its major is in the table, so nothing was judged";
  return {{fmt::format("CUDA {} is not in the CUDA-to-driver table (CUDA 9.0 to 13.2): {}", e.text, what), r.evidence}};
}

std::vector<Hit> cuda_forward_compat(const RuleContext& c) {
  const DriverView d = driver_view(c.facts);
  if (!d.forward_compat) {
    return {};
  }
  const auto& lib = c.facts.compat.libcuda;
  return {{fmt::format("Forward compatibility: the job loads the cuda-compat libcuda {} on kernel module {}. This is "
                       "expected, not a mismatch; it works on data-center GPUs and select RTX/Jetson parts only (elsewhere "
                       "cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)",
                       lib.version_text, d.kernel_module_text),
           {library_evidence(lib), d.kernel_module_evidence}}};
}

std::vector<Hit> cuda_no_expected_version(const RuleContext& c) {
  const auto& compat = c.facts.compat;
  if (!compat.ran || compat.expected_cuda) {
    return {};
  }
  const DriverView d = driver_view(c.facts);
  std::vector<std::string> evidence = compat.expected_cuda_notes;
  std::string driver_max;
  if (d.cuda_reported) {
    driver_max = fmt::format("the driver reports CUDA {} (cuDriverGetVersion)", d.cuda_reported->str());
    evidence.push_back(fmt::format("cuDriverGetVersion: {}", *c.facts.cuda.driver_version));
  } else if (d.effective) {
    const auto* row = matrix().newest_toolkit_for_driver(*d.effective);
    driver_max = row ? fmt::format("driver {} runs toolkits up to CUDA {} (and, through minor-version compatibility, the "
                                   "rest of CUDA {}.x)",
                                   d.effective_text, row->release, row->cuda.major())
                     : fmt::format("driver {} is older than every toolkit in the table", d.effective_text);
    evidence.push_back(d.kernel_module_evidence);
  } else {
    return {}; // no driver: other rules say so
  }
  evidence.push_back("no --expect-cuda, no CUDA_HOME toolkit, no /usr/local/cuda/version.json");
  return {{fmt::format("The job's CUDA version is not known, so CUDA was not judged against the driver; {}", driver_max),
           std::move(evidence)}};
}

// ---- expected CUDA vs each GPU's architecture --------------------------------------------------

std::vector<Hit> gpu_cuda_arch_unsupported(const RuleContext& c) {
  const auto& expected = c.facts.compat.expected_cuda;
  if (!expected) {
    return {};
  }
  std::vector<Hit> hits;
  for (const auto& g : gpu_archs(c.facts, matrix())) {
    if (!g.cc) {
      continue;
    }
    const auto j = matrix().judge_cuda_targets(expected->version, *g.cc);
    std::string why;
    if (j.status == CudaTargetStatus::dropped) {
      why = fmt::format("CUDA {} no longer targets compute capability {} ({}; last toolkit {})", expected->text,
                        g.cc->str(), j.row->arch, j.row->last_cuda->str());
    } else if (j.status == CudaTargetStatus::not_yet) {
      why = fmt::format("CUDA {} does not yet target compute capability {} ({}; first toolkit {})", expected->text,
                        g.cc->str(), j.row->arch, j.row->first_cuda->str());
    } else {
      continue;
    }
    hits.push_back({fmt::format("{} is unusable for this job: {}. Kernels fail with \"no kernel image is available for "
                                "execution on the device\" (CUDA_ERROR_NO_BINARY_FOR_GPU, 209)",
                                gpu_label(g), why),
                    {expected_evidence(*expected), g.cc_evidence},
                    g.bus_id,
                    Effect::gpu_unusable});
  }
  return hits;
}

// ---- driver flavour and branch vs each GPU ------------------------------------------------------

std::vector<Hit> gpu_open_module_unsupported(const RuleContext& c) {
  if (c.facts.driver.flavour != DriverFlavour::open) {
    return {};
  }
  std::vector<Hit> hits;
  for (const auto& g : gpu_archs(c.facts, matrix())) {
    if (!g.driver_row || g.driver_row->open_module) {
      continue;
    }
    hits.push_back({fmt::format("{} cannot be driven by the open kernel module, which supports Turing and later only "
                                "(it needs the GPU System Processor)",
                                gpu_label(g)),
                    {"/proc/driver/nvidia/version: " + c.facts.driver.version_line, g.cc_evidence},
                    g.bus_id,
                    Effect::gpu_unusable});
  }
  return hits;
}

std::vector<Hit> gpu_needs_open_module(const RuleContext& c) {
  if (c.facts.driver.flavour != DriverFlavour::proprietary) {
    return {};
  }
  std::vector<Hit> hits;
  for (const auto& g : gpu_archs(c.facts, matrix())) {
    const bool needs = (g.driver_row && g.driver_row->needs_open_module) || (g.model_row && g.model_row->needs_open_module);
    if (!needs) {
      continue;
    }
    hits.push_back({fmt::format("{} needs the open kernel module (Grace Hopper and Blackwell data-center GPUs are not "
                                "supported by the proprietary flavour), but the proprietary module is loaded",
                                gpu_label(g)),
                    {"/proc/driver/nvidia/version: " + c.facts.driver.version_line, g.cc_evidence},
                    g.bus_id,
                    Effect::gpu_unusable});
  }
  return hits;
}

std::vector<Hit> gpu_driver_branch_unsupported(const RuleContext& c) {
  const DriverView d = driver_view(c.facts);
  if (!d.kernel_module) {
    return {};
  }
  const auto branch = d.kernel_module->major();
  std::vector<Hit> hits;
  for (const auto& g : gpu_archs(c.facts, matrix())) {
    // 0 = no bound (plain numbers: GCC's maybe-uninitialized misfires on optionals here)
    unsigned long min_branch = g.driver_row && g.driver_row->min_branch ? *g.driver_row->min_branch : 0;
    if (g.model_row && g.model_row->min_branch && *g.model_row->min_branch > min_branch) {
      min_branch = *g.model_row->min_branch;
    }
    const unsigned long last_branch = g.driver_row && g.driver_row->last_branch ? *g.driver_row->last_branch : 0;
    std::string why;
    if (min_branch != 0 && branch < min_branch) {
      why = fmt::format("driver branch R{} predates support for it (R{} or newer needed)", branch, min_branch);
    } else if (last_branch != 0 && branch > last_branch) {
      why = fmt::format("driver branch R{} no longer supports it (R{} was the last branch that did)", branch, last_branch);
    } else {
      continue;
    }
    hits.push_back({fmt::format("{}: {}", gpu_label(g), why), {d.kernel_module_evidence, g.cc_evidence}, g.bus_id, Effect::gpu_unusable});
  }
  return hits;
}

std::vector<Hit> gpu_forward_compat_unsupported(const RuleContext& c) {
  const DriverView d = driver_view(c.facts);
  if (!d.forward_compat) {
    return {};
  }
  std::vector<Hit> hits;
  for (const auto& g : gpu_archs(c.facts, matrix())) {
    if (!g.model_row || g.model_row->segment != "geforce") {
      continue;
    }
    hits.push_back({fmt::format("{} is a GeForce GPU: forward compatibility (the cuda-compat libcuda {}) is not supported "
                                "on it; cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)",
                                gpu_label(g), c.facts.compat.libcuda.version_text),
                    {library_evidence(c.facts.compat.libcuda), g.cc_evidence},
                    g.bus_id,
                    Effect::gpu_unusable});
  }
  return hits;
}

std::vector<Hit> gpu_model_not_in_matrix(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& g : gpu_archs(c.facts, matrix())) {
    if (g.cc) {
      continue;
    }
    hits.push_back({fmt::format("GPU {}: its architecture is unknown (model \"{}\" is not in the model table and the CUDA "
                                "probe gave no compute capability), so the CUDA-architecture and driver-flavour checks "
                                "were not applied to it",
                                g.bus_id, g.model.empty() ? "unknown" : g.model),
                    {g.model.empty() ? fmt::format("/proc/driver/nvidia/gpus/{}/information: no Model line", g.bus_id)
                                     : fmt::format("/proc/driver/nvidia/gpus/{}/information: Model: {}", g.bus_id, g.model)},
                    g.bus_id});
  }
  return hits;
}

// ---- kernel ------------------------------------------------------------------------------------

bool kernel_not_judged(const KernelFacts& k) { return k.flavour == KernelFlavour::gvisor || k.flavour == KernelFlavour::wsl2; }

std::vector<Hit> kernel_below_driver_floor(const RuleContext& c) {
  const auto& k = c.facts.kernel;
  const DriverView d = driver_view(c.facts);
  if (!k.version || !d.kernel_module || kernel_not_judged(k)) {
    return {};
  }
  const auto* row = matrix().kernel_floor(d.kernel_module->major());
  if (!row || *k.version >= row->kernel_floor) {
    return {};
  }
  return {{fmt::format("Kernel {} is older than Linux {}, the oldest kernel driver branch R{} supports", k.version->str(),
                       row->kernel_floor_text, d.kernel_module->major()),
           {"uname -r: " + k.release, d.kernel_module_evidence}}};
}

std::vector<Hit> kernel_release_not_judged(const RuleContext& c) {
  const auto& k = c.facts.kernel;
  if (k.flavour == KernelFlavour::gvisor) {
    return {{"The kernel release 4.4.0 is gVisor's fixed, emulated release, not the host's kernel: version-based kernel "
             "checks (the 5.5 multi-GPU heuristic, the driver's kernel floor) were not applied",
             {"uname -r: " + k.release}}};
  }
  if (k.flavour == KernelFlavour::wsl2) {
    return {{"WSL2: the NVIDIA driver runs in Windows and reaches the GPUs through /dev/dxg, so the Linux driver's kernel "
             "floor and the 5.5 multi-GPU heuristic do not apply to this kernel",
             {"uname -r: " + k.release}}};
  }
  return {};
}

// ---- driver lifecycle --------------------------------------------------------------------------

std::vector<Hit> driver_end_of_life(const RuleContext& c) {
  const DriverView d = driver_view(c.facts);
  if (!d.kernel_module) {
    return {};
  }
  const auto* row = matrix().branch(d.kernel_module->major());
  if (!row) {
    return {};
  }
  const auto& today = c.facts.compat.today;
  if (!row->maintained) {
    return {{fmt::format("Driver branch R{} ({}) is no longer maintained", row->branch, row->designation), {d.kernel_module_evidence}}};
  }
  if (!today || !past_end_of_life(*row, *today)) {
    return {};
  }
  return {{fmt::format("Driver branch R{} ({}) reached its end of life in {}: it receives no more fixes", row->branch,
                       row->designation, row->end_of_life_text),
           {d.kernel_module_evidence,
            fmt::format("today: {:04}-{:02}-{:02}", static_cast<int>(today->year()), static_cast<unsigned>(today->month()),
                        static_cast<unsigned>(today->day()))}}};
}

// ---- kernel module vs user-space library versions ------------------------------------------------

std::vector<Hit> driver_module_version_mismatch(const RuleContext& c) {
  const DriverView d = driver_view(c.facts);
  if (!d.kernel_module) {
    return {};
  }
  std::vector<Hit> hits;
  for (const auto& m : c.facts.compat.modules) {
    if (!m.version || *m.version == *d.kernel_module) {
      continue;
    }
    if (m.name == "nvidia") {
      continue; // the driver's own module: /proc/driver/nvidia/version describes the same module
    }
    hits.push_back({fmt::format("Kernel module {} is version {} but the NVIDIA driver is {}: a partial upgrade or a module "
                                "left loaded from an older install",
                                m.name, m.text, d.kernel_module_text),
                    {fmt::format("{}: {}", m.path, m.text), d.kernel_module_evidence}});
  }
  return hits;
}

std::vector<Hit> driver_library_version_mismatch(const RuleContext& c) {
  const DriverView d = driver_view(c.facts);
  if (!d.kernel_module) {
    return {};
  }
  std::vector<Hit> hits;
  for (const DriverLibrary* lib : {&c.facts.compat.libcuda, &c.facts.compat.libnvidia_ml}) {
    if (!lib->version || lib->in_stubs || *lib->version == *d.kernel_module) {
      continue;
    }
    if (lib == &c.facts.compat.libcuda && d.forward_compat) {
      continue; // cuda-compat: expected to be newer (cuda.forward-compat explains it)
    }
    Hit hit{fmt::format("{} as the loader finds it is version {} but the kernel module is {}: the driver refuses the "
                        "library (\"API mismatch\" in the kernel log; NVML: Driver/library version mismatch; CUDA init "
                        "commonly fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)",
                        lib->soname, lib->version_text, d.kernel_module_text),
            {library_evidence(*lib), d.kernel_module_evidence}};
    if (lib->in_compat) {
      hit.remedy = "The cuda-compat package on the library path is older than the installed driver: remove its directory "
                   "from LD_LIBRARY_PATH / ld.so.conf (a newer driver needs no compat package)";
    }
    hits.push_back(std::move(hit));
  }
  return hits;
}

std::vector<Hit> driver_libcuda_stub_first(const RuleContext& c) {
  const auto& lib = c.facts.compat.libcuda;
  if (!lib.path || !lib.in_stubs) {
    return {};
  }
  std::vector<std::string> evidence{library_evidence(lib)};
  if (lib.via == "LD_LIBRARY_PATH") {
    evidence.push_back("LD_LIBRARY_PATH=" + c.facts.env.get("LD_LIBRARY_PATH").value_or(""));
  }
  return {{"The first libcuda.so.1 the loader finds is the CUDA toolkit's link-time stub: it shadows the driver's "
           "library and every CUDA call fails (CUDA_ERROR_STUB_LIBRARY, 34)",
           std::move(evidence)}};
}

std::vector<Hit> driver_libraries_not_checked(const RuleContext& c) {
  const auto& compat = c.facts.compat;
  if (!compat.ran || !c.facts.driver.loaded) {
    return {};
  }
  if (compat.snapshot && !compat.libcuda.path && !compat.libnvidia_ml.path) {
    return {{"The snapshot records no NVIDIA driver libraries, so whether they match the kernel module was not checked",
             {"libcuda.so.1, libnvidia-ml.so.1: not in the snapshot (LD_LIBRARY_PATH, etc/ld.so.cache, default directories)"}}};
  }
  std::vector<Hit> hits;
  for (const DriverLibrary* lib : {&compat.libcuda, &compat.libnvidia_ml}) {
    if (lib->path && !lib->version && !lib->in_stubs && !c.facts.is_wsl2()) {
      hits.push_back({fmt::format("{} carries no driver version in its file name, so whether it matches the kernel module "
                                  "was not checked",
                                  lib->soname),
                      {library_evidence(*lib)}});
    }
  }
  return hits;
}

std::vector<Hit> driver_libcuda_not_found(const RuleContext& c) {
  const auto& compat = c.facts.compat;
  if (!compat.ran || compat.snapshot || !c.facts.driver.loaded || c.facts.is_wsl2() || compat.libcuda.path || c.facts.cuda.ran) {
    return {};
  }
  std::vector<std::string> evidence;
  for (const auto& step : compat.libcuda.searched) {
    if (evidence.size() == 8) {
      evidence.push_back("...");
      break;
    }
    evidence.push_back(fmt::format("{} ({}): {}", step.dir, step.via, step.result));
  }
  return {{"The dynamic loader would find no libcuda.so.1 for the job: CUDA cannot start", std::move(evidence)}};
}

const Rule k_rules[] = {
    {"cuda.driver-too-old", Severity::fail, Stage::host, "The driver is new enough for the job's CUDA version",
     "Upgrade the driver to at least the version named in the finding, or run a build of the framework made with an older "
     "CUDA (e.g. a cu118/cu121 wheel); on data-center GPUs the cuda-compat package (forward compatibility) is another way",
     k_src_cuda_driver, cuda_driver_too_old,
     "Every CUDA toolkit release ships with a driver (the release notes' Table 3). A job built with that toolkit runs on "
     "that driver or newer. From CUDA 11 on, minor-version compatibility lowers the bar to one floor per major (11.x: "
     "450.80.02, 12.x: 525.60.13, 13.x: 580.65.06); below it the CUDA runtime refuses to initialise with "
     "cudaErrorInsufficientDriver. Before CUDA 11 there is no such floor: the toolkit's own driver is the minimum.",
     "The job's CUDA version (--expect-cuda, else $CUDA_HOME/version.json, else /usr/local/cuda/version.json), the kernel "
     "module's version (/proc/driver/nvidia/version) or, with forward compatibility, the cuda-compat libcuda's version; "
     "cuDriverGetVersion when only the CUDA probe knows the driver (WSL2)."},
    {"cuda.minor-version-compat", Severity::warn, Stage::host,
     "The driver is at least the job's toolkit driver (not only its minor-version floor)",
     "Upgrade the driver to the toolkit's own driver named in the finding, or make sure the job ships SASS for these GPUs "
     "and uses no feature of the newer toolkit that needs the newer driver",
     k_src_cuda_driver, cuda_minor_version_compat,
     "Between the major's minor-version floor and the toolkit's own driver the job starts under minor-version "
     "compatibility: APIs that need the newer driver return cudaErrorCallRequiresNewerDriver, and PTX newer than the "
     "driver cannot be JIT-compiled, so kernels shipped only as PTX fail. Framework wheels usually carry SASS for common "
     "GPUs, so training often works; the warning says it is not guaranteed.",
     "The job's CUDA version and the driver version, as for cuda.driver-too-old."},
    {"cuda.forward-compat", Severity::info, Stage::host, "Whether forward compatibility (cuda-compat) is in use",
     "Nothing to do on data-center GPUs; on others remove the cuda-compat directory from the library path and upgrade the "
     "driver instead",
     k_src_forward, cuda_forward_compat,
     "The cuda-compat package puts a newer libcuda (in a compat/ directory) in front of an older kernel module so that a "
     "newer CUDA runs on an older driver branch. The library and the kernel module then differ on purpose: this is not a "
     "driver/library mismatch. It is supported on data-center GPUs, select NGC-ready RTX parts and Jetson only.",
     "The libcuda.so.1 the loader picks (its path has a compat/ component) and its version against the kernel module's."},
    {"cuda.version-not-in-matrix", Severity::info, Stage::host, "The job's CUDA version is in the CUDA-to-driver table",
     "Check the job's CUDA version (a typo?) or compare it with the CUDA release notes by hand; update data/ when NVIDIA "
     "publishes a new release",
     k_src_cuda_driver, cuda_version_not_in_matrix,
     "The table covers every toolkit release from 9.0 to 13.2 (there was no 12.7). For an unknown release of a known major "
     "only the major's minor-version floor can be checked; for an unknown major nothing is judged.",
     "The job's CUDA version against data/cuda_toolkit_driver.json and data/cuda_minor_compat.json."},
    {"cuda.no-expected-version", Severity::info, Stage::host, "The job's CUDA version is known, so CUDA can be judged",
     "Pass --expect-cuda with the CUDA version the job's framework was built with (e.g. "
     "`python -c 'import torch; print(torch.version.cuda)'`)",
     k_src_cuda_driver, cuda_no_expected_version,
     "Frameworks bundle their own CUDA runtime, so the toolkit installed on the host (if any) need not be what the job "
     "uses. Without the job's CUDA version only the driver's own maximum is reported.",
     "--expect-cuda, $CUDA_HOME/version.json or version.txt, /usr/local/cuda/version.json or version.txt; the driver's "
     "version or cuDriverGetVersion."},
    {"gpu.cuda-arch-unsupported", Severity::fail, Stage::gpu, "The job's CUDA toolkit targets each GPU's architecture",
     "Use a build of the framework made with a toolkit that targets this GPU (CUDA 12.x for Maxwell, Pascal and Volta; "
     "CUDA 11.8 or newer for Hopper and Ada; 12.8 or newer for Blackwell), or leave the GPU out (CUDA_VISIBLE_DEVICES)",
     k_src_archs, gpu_cuda_arch_unsupported,
     "A toolkit compiles kernels only for the architectures it knows: CUDA 13.0 dropped Maxwell, Pascal and Volta; 12.0 "
     "dropped Kepler 3.5/3.7; new architectures arrive with new toolkits (Hopper 11.8, Blackwell 12.8). A job built with "
     "a toolkit that does not target the GPU has no kernel image for it.",
     "The job's CUDA version and each GPU's compute capability: from the CUDA probe when it ran, else from the GPU's model "
     "name (/proc/driver/nvidia/gpus/*/information) through data/gpu_models.json."},
    {"gpu.open-module-unsupported", Severity::fail, Stage::gpu, "The open kernel module is not driving a pre-Turing GPU",
     "Install the proprietary driver flavour (R580 is the last branch for Maxwell, Pascal and Volta; R470 for Kepler), or "
     "move the job to a Turing or newer GPU",
     k_src_flavour, gpu_open_module_unsupported,
     "The open kernel modules depend on the GPU System Processor (GSP), which first appeared in Turing; they cannot drive "
     "Maxwell, Pascal or Volta GPUs (the kernel log says the GPU \"is not supported by open nvidia.ko\").",
     "The module flavour from /proc/driver/nvidia/version (\"Open Kernel Module\") and each GPU's architecture."},
    {"gpu.needs-open-module", Severity::fail, Stage::gpu, "GPUs that need the open kernel module are not on the proprietary one",
     "Install the open kernel module flavour of the driver (e.g. the nvidia-open / -open packages, or the .run installer's "
     "--kernel-module-type=open)",
     k_src_flavour, gpu_needs_open_module,
     "Grace Hopper and Blackwell data-center GPUs are supported by the open kernel modules only (this fact comes from "
     "secondary sources citing NVIDIA).",
     "The module flavour from /proc/driver/nvidia/version and each GPU's architecture and model."},
    {"gpu.driver-branch-unsupported", Severity::fail, Stage::gpu, "The driver branch supports each GPU's architecture",
     "Install a driver branch that supports the GPU: new enough for new architectures (Hopper/Ada R520, Blackwell R570, "
     "B300 R580), not newer than the last branch for old ones (Kepler R470; Maxwell, Pascal, Volta R580)",
     k_src_flavour, gpu_driver_branch_unsupported,
     "Each architecture arrives in some driver branch and legacy architectures leave after their last branch.",
     "The driver's branch (the first component of its version) and each GPU's architecture and model."},
    {"gpu.forward-compat-unsupported", Severity::fail, Stage::gpu, "Forward compatibility is not used on GeForce GPUs",
     "Remove the cuda-compat directory from the library path and upgrade the driver to one that supports the job's CUDA",
     k_src_forward, gpu_forward_compat_unsupported,
     "Forward compatibility works on data-center GPUs, select NGC-ready RTX parts and Jetson only; on other GPUs cuInit "
     "returns CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804).",
     "Whether the loader's libcuda is a cuda-compat one newer than the kernel module, and each GPU's model segment."},
    {"gpu.model-not-in-matrix", Severity::info, Stage::gpu, "Each GPU's architecture is known",
     "Run with the CUDA probe (it reports the compute capability), or add the model to data/gpu_models.json",
     k_src_archs, gpu_model_not_in_matrix,
     "Without a compute capability the per-architecture checks (CUDA targets, driver flavour, driver branch) cannot be "
     "applied; this says so rather than passing silently.",
     "The CUDA probe's compute capability, else the model name against data/gpu_models.json."},
    {"kernel.below-driver-floor", Severity::fail, Stage::host, "The kernel is at least the oldest one the driver branch supports",
     "Upgrade the kernel (or install an older driver branch that still supports this kernel)",
     k_src_kernel_floor, kernel_below_driver_floor,
     "NVIDIA's README for each driver tag names the oldest supported Linux kernel: 3.10 for the 515 to 550 branches, 4.15 "
     "from 555 on (below 4.15 the 555+ kernel module refuses to build). Distribution kernels such as RHEL 8's 4.18 are "
     "inside the range of every current driver.",
     "uname -r and the driver version."},
    {"kernel.release-not-judged", Severity::info, Stage::host, "Whether the kernel release can be judged by its number",
     "Nothing to do; judge the host kernel where the driver runs instead",
     "gpu-preflight design; nvidia-facts.md §8 (kernel version heuristics) and §2c", kernel_release_not_judged,
     "gVisor reports a fixed, emulated 4.4.0 whatever the host runs, and under WSL2 the NVIDIA driver lives in Windows. "
     "Judging either by the Linux kernel number would call healthy systems old.",
     "uname -r and its recognised flavour."},
    {"driver.end-of-life", Severity::info, Stage::host, "The driver branch is still maintained",
     "Plan an upgrade to a maintained branch (an LTSB such as R580 or R620 for long-lived clusters)",
     k_src_eol, driver_end_of_life,
     "NVIDIA's data-center driver lifecycle table gives each branch an end of life; after it the branch gets no fixes. "
     "A snapshot is judged as of the date it records (its `date` file), never against today's date; without one this is "
     "not checked.",
     "The driver branch, data/driver_branches.json, and today's date (a snapshot's `date` file)."},
    {"driver.module-version-mismatch", Severity::fail, Stage::host, "All NVIDIA kernel modules have the driver's version",
     "Reload the NVIDIA modules (`rmmod nvidia_drm nvidia_modeset nvidia_uvm nvidia; modprobe nvidia`) or reboot after "
     "finishing the driver upgrade",
     k_src_mismatch, driver_module_version_mismatch,
     "nvidia, nvidia_uvm, nvidia_modeset and nvidia_drm come from one driver release and carry the same version; a "
     "different one means a partial upgrade or a module left over from an older install.",
     "/sys/module/{nvidia_uvm,nvidia_modeset,nvidia_drm}/version against the driver's version (/proc/driver/nvidia/version)."},
    {"driver.library-version-mismatch", Severity::fail, Stage::host,
     "The user-space driver libraries the job would load match the kernel module",
     "Reboot (or reload the NVIDIA kernel modules) after a driver upgrade so the kernel module matches the installed "
     "libraries; in a container, let the NVIDIA container toolkit mount the host's libraries instead of baking a driver "
     "into the image",
     k_src_mismatch, driver_library_version_mismatch,
     "The kernel module rejects a user-space component of another version (\"API mismatch\" in the kernel log; NVML reports "
     "Driver/library version mismatch). The usual cause is a driver package upgrade without a reboot, or a container image "
     "with its own driver libraries. A cuda-compat libcuda newer than the module is the exception (forward compatibility).",
     "libcuda.so.1 and libnvidia-ml.so.1 as the dynamic loader would find them for the job (LD_LIBRARY_PATH, "
     "/etc/ld.so.cache, default directories; inside --root), their versions from the file names their links resolve to, "
     "against the kernel module's version."},
    {"driver.libcuda-stub-first", Severity::fail, Stage::host, "The toolkit's stub libcuda does not shadow the driver's",
     "Remove the stubs directory (e.g. /usr/local/cuda/lib64/stubs) from LD_LIBRARY_PATH and ld.so.conf; the stubs exist "
     "for linking only",
     k_src_mismatch, driver_libcuda_stub_first,
     "The CUDA toolkit ships a stub libcuda under lib64/stubs so programs link without a driver. When it is first in the "
     "loader's search path the job loads it instead of the driver's library, and every CUDA call fails.",
     "The first libcuda.so.1 in the loader's search order and whether its path has a stubs/ component."},
    {"driver.libraries-not-checked", Severity::info, Stage::host,
     "The driver libraries could be compared with the kernel module",
     "Include the driver libraries (libcuda.so.*, libnvidia-ml.so.* and their links, etc/ld.so.cache) in the snapshot, or "
     "run on the host itself",
     k_src_mismatch, driver_libraries_not_checked,
     "A snapshot without driver libraries proves nothing about them: the match is reported as not checked, never as a "
     "mismatch or a missing library. The same holds for a library whose file name carries no version.",
     "Whether the loader's search found libcuda.so.1 / libnvidia-ml.so.1 and whether their names carry a version."},
    {"driver.libcuda-not-found", Severity::fail, Stage::host, "The dynamic loader finds a libcuda.so.1 for the job",
     "Install the driver's user-space libraries (the libcuda / nvidia-utils packages of the same version as the kernel "
     "module) or, in a container, start it with the NVIDIA runtime (--gpus all) so they are mounted",
     k_src_mismatch, driver_libcuda_not_found,
     "Every CUDA program loads libcuda.so.1 at run time; without it CUDA cannot start even though the kernel driver is "
     "loaded. Checked on the live host only (and only when the CUDA probe did not run, which reports its own load error).",
     "The loader's search for libcuda.so.1: LD_LIBRARY_PATH, /etc/ld.so.cache, default directories."},
};

} // namespace

std::span<const Rule> compat_rules() { return k_rules; }

} // namespace gpf
