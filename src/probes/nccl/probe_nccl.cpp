// Probe "nccl" (opt-in, --nccl[=PATH]): NCCL's start-up on the GPUs the CUDA stage found usable
// and the job's CUDA_VISIBLE_DEVICES admits, in one child under its own deadline (--nccl-timeout).
// Reads the host only through Host: the job environment (LD_LIBRARY_PATH, VIRTUAL_ENV,
// CONDA_PREFIX, NCCL_*, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER), the directories it names for
// libnccl.so.2, and a snapshot's nccl.json. Without --nccl nothing of NCCL is opened.
#include "gpf/facts/nccl_json.hpp"
#include "gpf/facts/visible_devices.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/probes/progress.hpp"
#include "gpf/util/checker_failure.hpp"
#include "gpf/util/plural.hpp"
#include "gpf/util/text.hpp"

#include "probes/child/interrupt.hpp"
#include "probes/cuda/protocol.hpp"
#include "probes/nccl/nccl_child.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpf {
namespace {

constexpr std::size_t k_nccl_json_cap = 4 << 20;
constexpr std::string_view k_soname = "libnccl.so.2";
constexpr auto k_settle_grace = std::chrono::milliseconds(250);

struct LibraryChoice {
  std::string library; // a path, or the soname for the loader's own search
  std::string from;
};

// The root-relative form of an absolute directory joined with the soname; nullopt for a relative
// directory (the job's working directory is not known here).
std::optional<std::string> in_dir(std::string_view dir) {
  if (dir.empty() || dir.front() != '/') {
    return std::nullopt;
  }
  std::string rel(dir.substr(1));
  while (!rel.empty() && rel.back() == '/') {
    rel.pop_back();
  }
  return rel.empty() ? std::string(k_soname) : fmt::format("{}/{}", rel, k_soname);
}

// Where the job's dlopen("libnccl.so.2") would find it, in the loader's order: LD_LIBRARY_PATH
// first, then the Python environment's nvidia-nccl wheel (which PyTorch loads by its path), then
// the loader's default search (ld.so.cache, /usr/lib...).
LibraryChoice choose_library(const Host& host, const ProbeOptions& options) {
  if (options.nccl && !options.nccl->empty()) {
    return {*options.nccl, "--nccl"};
  }
  const auto abs = [&](const std::string& rel) { return (host.root() / rel).string(); };
  const Environment& env = host.environment();
  if (const auto path = env.get("LD_LIBRARY_PATH")) {
    for (const auto dir : split(*path, ':')) {
      if (const auto rel = in_dir(dir); rel && host.has_file(*rel)) {
        return {abs(*rel), "LD_LIBRARY_PATH"};
      }
    }
  }
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const auto prefix = env.get(var);
    // in_dir joins the soname: lib_dir below takes it off again
    const auto lib = prefix ? in_dir(fmt::format("{}/{}", *prefix, "lib")) : std::nullopt;
    if (!lib) {
      continue;
    }
    const std::string lib_dir = lib->substr(0, lib->size() - k_soname.size() - 1);
    auto entries = host.list_dir(lib_dir);
    if (!entries) {
      continue;
    }
    for (const auto& python : *entries) {
      const auto rel =
          fmt::format("{}/{}/site-packages/nvidia/nccl/lib/{}", lib_dir, python, k_soname);
      if (starts_with(python, "python3") && host.has_file(rel)) {
        return {abs(rel), fmt::format("the Python environment's nvidia-nccl wheel ({})", var)};
      }
    }
  }
  return {std::string(k_soname), "the loader's default search"};
}

bool is_nccl_variable(const std::string& name) {
  return starts_with(name, "NCCL_");
}

// NCCL's defaults: every NCCL_* of the job unset (the child also drops any left in its own
// environment); with --nccl-env job they are the job's. Either way NCCL is asked for its INFO
// lines on stdout (the child captures them).
std::vector<child::EnvOverride> nccl_env(const Environment& env, bool job_env,
                                         const std::string& visible,
                                         const std::optional<std::string>& order) {
  std::vector<child::EnvOverride> out{{"CUDA_VISIBLE_DEVICES", visible},
                                      {"CUDA_DEVICE_ORDER", order}};
  // Set or unset from the job's environment (under --root the snapshot's, not the checker's).
  for (const auto& [name, value] : env.vars()) {
    if (is_nccl_variable(name)) {
      out.emplace_back(name, job_env ? std::optional(value) : std::nullopt);
    }
  }
  out.emplace_back("NCCL_DEBUG", "INFO");
  out.emplace_back("NCCL_DEBUG_FILE", std::nullopt);
  out.emplace_back("NCCL_DEBUG_SUBSYS", std::nullopt);
  return out;
}

std::string failed_summary(const NcclFacts& n) {
  if (!n.load_error.empty()) {
    return fmt::format("{} could not be loaded", n.library);
  }
  const auto bad = std::find_if(n.steps.begin(), n.steps.end(), [](auto& s) { return !s.ok; });
  if (bad == n.steps.end()) {
    return n.child_error.empty() ? "NCCL test did not finish" : n.child_error;
  }
  if (bad->timed_out) {
    return fmt::format("NCCL {} did not finish before the deadline ({:g} s)", bad->name,
                       n.timeout_s);
  }
  return fmt::format("NCCL {} failed: {}", bad->name,
                     bad->error_name.empty() ? bad->error_text : bad->error_name);
}

std::string summary(const NcclFacts& n) {
  if (!n.ok) {
    return failed_summary(n);
  }
  return fmt::format("NCCL {} on {}: init {:.1f} ms, all-reduce {:.1f} ms ({})", n.version,
                     counted(n.gpus.size(), "GPU"), n.step_ms(k_nccl_init_step).value_or(0),
                     n.step_ms(k_nccl_all_reduce_step).value_or(0),
                     n.env_mode == "job" ? "the job's NCCL_* variables" : "NCCL's defaults");
}

ProbeStatus replay(const Host& host, Facts& facts) {
  ProbeStatus status;
  auto content = host.read_file("nccl.json", k_nccl_json_cap);
  if (!content) {
    return status.fail("nccl.json: " + content.error().message);
  }
  if (content->truncated) {
    return status.fail(fmt::format("nccl.json: larger than {} bytes", k_nccl_json_cap));
  }
  auto parsed = parse_nccl_json(content->data);
  if (!parsed) {
    return status.fail("nccl.json: " + parsed.error().message);
  }
  facts.nccl = std::move(parsed).value();
  facts.nccl.source = "nccl.json";
  if (!facts.nccl.ran) {
    return status.skip("nccl.json records that the NCCL probe did not run");
  }
  status.message = fmt::format("replayed nccl.json: {}", summary(facts.nccl));
  return status;
}

ProbeStatus probe_nccl(const Host& host, const ProbeOptions& options, Facts& facts) {
  ProbeStatus status;
  const bool live = host.is_live() || options.libcuda;
  if (!live && host.exists("nccl.json")) {
    return replay(host, facts);
  }
  if (!options.nccl) {
    return status.skip("off by default; --nccl turns it on");
  }
  if (!live) {
    return status.skip("the snapshot has no nccl.json (a live probe against it needs --libcuda)");
  }
  const CudaFacts& cuda = facts.cuda;
  if (!cuda.ran || cuda.source != "live") {
    return status.skip("needs the live CUDA stage's usable GPUs (it did not run)");
  }
  // The GPUs the job may use together and that passed their own CUDA test, in CUDA order.
  std::vector<GpuRef> refs;
  for (const auto& d : cuda.devices) {
    refs.push_back({d.bus_id, d.uuid});
  }
  const auto admitted =
      parse_visible_devices(host.environment().get("CUDA_VISIBLE_DEVICES"), refs).bus_ids;
  std::vector<const CudaDevice*> gpus;
  for (const auto& d : cuda.devices) {
    if (d.usable && std::find(admitted.begin(), admitted.end(), d.bus_id) != admitted.end()) {
      gpus.push_back(&d);
    }
  }
  if (gpus.empty()) {
    return status.skip("no GPU passed the CUDA stage");
  }
  if (auto over = stage_over_budget(options, options.nccl_timeout_s)) {
    return status.skip(*over);
  }

  NcclFacts& n = facts.nccl;
  n = NcclFacts{};
  n.ran = true;
  n.source = "live";
  const LibraryChoice choice = choose_library(host, options);
  n.library = choice.library;
  n.library_from = choice.from;
  n.env_mode = options.nccl_job_env ? "job" : "defaults";
  for (const auto& [name, value] : host.environment().vars()) {
    if (is_nccl_variable(name)) {
      n.job_env.push_back(quote_evidence(fmt::format("{}={}", name, value), 256));
    }
  }
  n.timeout_s = options.nccl_timeout_s;
  const bool by_uuid = std::all_of(gpus.begin(), gpus.end(), [](const CudaDevice* d) {
    return d->uuid && starts_with(to_lower(*d->uuid), "gpu-");
  });
  std::vector<std::string> names;
  for (const CudaDevice* d : gpus) {
    n.gpus.push_back(d->bus_id);
    names.push_back(by_uuid ? *d->uuid : std::to_string(d->index));
  }

  report_progress(fmt::format("starting NCCL on {}\u2026 (deadline {:g} s)",
                              counted(gpus.size(), "GPU"), options.nccl_timeout_s));
  const auto start = child::Clock::now();
  const auto deadline = start + std::chrono::duration_cast<child::Clock::duration>(
                                    std::chrono::duration<double>(options.nccl_timeout_s));
  const child::InterruptGuard interrupt_guard(
      child::DriverStage::nccl); // restored after the group has settled
  child::ChildGroup group = cuda::make_child_group();
  const std::string libcuda = options.libcuda.value_or("libcuda.so.1");
  const std::string libnccl = n.library;
  const int ranks = static_cast<int>(gpus.size());
  auto id = group.spawn(
      {"nccl",
       nccl_env(host.environment(), options.nccl_job_env, fmt::format("{}", fmt::join(names, ",")),
                host.environment().get("CUDA_DEVICE_ORDER")),
       [libcuda, libnccl, ranks, job_env = options.nccl_job_env](child::LineWriter& out) {
         nccl::nccl_child(libcuda, libnccl, ranks, job_env, out);
       }});
  if (!id) {
    throw CheckerFailure("cannot start the NCCL child: " + id.error().message);
  }
  if (!group.pump_until(deadline, [&] { return group.finished(*id); })) {
    group.kill_at_deadline(*id);
    n.deadline_hit = true;
  }
  nccl::fold_nccl_transcript(group.lines(*id), group.end(*id), n);
  group.settle(k_settle_grace);
  n.wall_ms = std::chrono::duration<double, std::milli>(child::Clock::now() - start).count();
  status.message = summary(n);
  return status;
}

// After cuda (its usable GPUs) and nvml (whose children must not share the GPUs with NCCL's).
const ProbeRegistration k_row{
    {.name = "nccl", .what = "NCCL start-up", .order = 1700, .run = probe_nccl, .after = "cuda"}};

} // namespace
} // namespace gpf
