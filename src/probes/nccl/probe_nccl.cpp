// Probe "nccl" (opt-in, --nccl[=PATH]): NCCL's start-up on the GPUs the CUDA stage found usable
// and the job's CUDA_VISIBLE_DEVICES admits, in one child under its own deadline (--nccl-timeout).
// Reads the host only through Host: the job environment (LD_LIBRARY_PATH, VIRTUAL_ENV,
// CONDA_PREFIX, NCCL_*, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER), the directories it names for
// libnccl.so.2, and a snapshot's nccl.json. Without --nccl nothing of NCCL is opened. Nothing of a
// snapshot is executed: under --root NCCL is loaded only from an explicit --nccl=PATH (never a
// library the snapshot's environment leads to), and no snapshot variable that names a file, a
// directory or a plugin reaches the child.
#include "gpf/facts/nccl_json.hpp"
#include "gpf/facts/visible_devices.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/probes/progress.hpp"
#include "gpf/util/checker_failure.hpp"
#include "gpf/util/credentials.hpp"
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
constexpr std::string_view k_redacted = "REDACTED";

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

// An NCCL variable that makes NCCL open, write or load a file: by its name (NCCL_TOPO_FILE,
// NCCL_TOPO_DUMP_FILE, NCCL_GRAPH_FILE, NCCL_NET_PLUGIN, NCCL_TUNER_PLUGIN, NCCL_PROFILER_PLUGIN,
// NCCL_CONF_FILE, ...: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) or a
// value that is a path. Under --root such a value comes from the snapshot and is never passed on.
bool names_file_or_plugin(std::string_view name, std::string_view value) {
  for (const std::string_view word : {"FILE", "PLUGIN", "PATH", "DIR", "PREFIX", "LIB", "SO"}) {
    for (auto at = name.find(word); at != std::string_view::npos; at = name.find(word, at + 1)) {
      const bool starts = at > 0 && name[at - 1] == '_';
      const bool ends = at + word.size() == name.size() || name[at + word.size()] == '_';
      if (starts && ends) {
        return true;
      }
    }
  }
  return value.find('/') != std::string_view::npos;
}

// NAME=value as the facts keep it: a secret's value (its name says TOKEN, PASSWORD, KEY, ...)
// REDACTED, any other value with its credentials removed.
std::string shown_variable(const std::string& name, const std::string& value) {
  return names_a_secret_variable(name) ? name + "=REDACTED"
                                       : without_credentials(fmt::format("{}={}", name, value));
}

// NCCL's defaults: every NCCL_* of the job unset (the child also drops any left in its own
// environment); with --nccl-env job they are the job's. Either way NCCL is asked for its INFO
// lines on stdout (the child captures them).
std::vector<child::EnvOverride> nccl_env(const Environment& env, bool job_env, bool snapshot,
                                         const std::string& visible,
                                         const std::optional<std::string>& order) {
  std::vector<child::EnvOverride> out{{"CUDA_VISIBLE_DEVICES", visible},
                                      {"CUDA_DEVICE_ORDER", order}};
  // Set or unset from the job's environment (under --root the snapshot's, not the checker's, and
  // then never one that names a file or a plugin).
  for (const auto& [name, value] : env.vars()) {
    if (is_nccl_variable(name)) {
      const bool pass = job_env && !(snapshot && names_file_or_plugin(name, value));
      out.emplace_back(name, pass ? std::optional(value) : std::nullopt);
    }
  }
  out.emplace_back("NCCL_DEBUG", "INFO");
  out.emplace_back("NCCL_DEBUG_FILE", std::nullopt);
  out.emplace_back("NCCL_DEBUG_SUBSYS", std::nullopt);
  return out;
}

// What NCCL printed may quote the job's variables ("NCCL_IB_TOKEN set by environment to ..."): the
// value of every variable whose name says it is a secret is REDACTED in the kept lines (values of
// fewer than 4 bytes are no secret and would match everywhere).
void redact_secret_values(const Environment& env, NcclFacts& n) {
  std::vector<std::string> secrets;
  for (const auto& [name, value] : env.vars()) {
    if (is_nccl_variable(name) && names_a_secret_variable(name) && value.size() >= 4) {
      secrets.push_back(value);
    }
  }
  const auto scrub = [&](std::string& text) {
    for (const auto& secret : secrets) {
      for (auto at = text.find(secret); at != std::string::npos;
           at = text.find(secret, at + k_redacted.size())) {
        text.replace(at, secret.size(), k_redacted);
      }
    }
  };
  for (auto* lines : {&n.log, &n.transports}) {
    for (auto& line : *lines) {
      scrub(line);
    }
  }
  for (auto& step : n.steps) {
    scrub(step.error_text);
  }
  scrub(n.child_error);
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
  if (!host.is_live() && options.nccl->empty()) {
    // the CLI refuses this before the check (exit 2); kept here for every other caller
    return status.skip("under --root NCCL is loaded only from an explicit --nccl=PATH, never from "
                       "where the snapshot's environment leads");
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
      n.job_env.push_back(quote_evidence(shown_variable(name, value), 256));
      if (options.nccl_job_env && !host.is_live() && names_file_or_plugin(name, value)) {
        n.env_withheld.push_back(name);
      }
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
       nccl_env(host.environment(), options.nccl_job_env, !host.is_live(),
                fmt::format("{}", fmt::join(names, ",")),
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
  if (const auto& end = group.end(*id); !end.protocol_error.empty()) {
    // the checker's own output cap stopped the child: what it was doing then says nothing of
    // NCCL or the GPUs (it was read as a wrong sum); the check cannot judge NCCL
    throw CheckerFailure(fmt::format(
        "the NCCL child was stopped by the checker's own output cap ({}): NCCL was not judged",
        end.protocol_error));
  }
  nccl::fold_nccl_transcript(group.lines(*id), group.end(*id), n);
  redact_secret_values(host.environment(), n);
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
