// Probe "nvml": skip / replay nvml.json / live. Live: one system child plus one child per driver
// GPU (by PCI bus id), all started at once and, in a full check, before the CUDA stage so that
// both stages run side by side; one deadline; a child still running at it is SIGKILLed and the
// step it had begun is named. Reads the host only through Host (nvml.json).
#include "gpf/facts/nvml_json.hpp"
#include "gpf/probes/nvml_probe.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/util/plural.hpp"

#include "gpf/util/checker_failure.hpp"
#include "gpf/util/json_read.hpp"
#include "gpf/util/text.hpp"
#include "probes/child/interrupt.hpp"
#include "probes/child/runner.hpp"
#include "probes/nvml/child_work.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>

namespace gpf {
namespace {
using Json = nlohmann::json;
using child::Clock;

constexpr std::size_t k_nvml_json_cap = 8 << 20;
constexpr auto k_settle_grace = std::chrono::milliseconds(250);

bool is_done_line(std::string_view line) {
  const Json j = Json::parse(line, nullptr, false);
  return JsonIn(j)["e"].lenient<std::string>() == "done";
}

// A GPU child gives up waiting for the CUDA stage this long before the deadline, so that it ends
// on its own (a child killed while waiting is not a hung GPU, but its `after` is lost).
constexpr auto k_wait_margin = std::chrono::milliseconds(500);

struct Live : ProbeStarted {
  std::unique_ptr<child::InterruptGuard> guard; // first: restored after the group has settled
  child::Gate
      cuda_ended; // released by collect(), after the CUDA stage: the GPU children read `after`
  child::ChildGroup group{is_done_line};
  Clock::time_point start;
  Clock::time_point deadline;
  std::size_t system_id = 0; // set by start(), which throws when it cannot fork
  std::vector<std::pair<std::size_t, std::string>> gpu_children; // child, driver bus id
  NvmlFacts facts;
};

bool runs_live(const Host& host, const ProbeOptions& options) {
  return !options.no_nvml && (host.is_live() || options.libnvml);
}

std::unique_ptr<Live> start(const ProbeOptions& options, const Facts& facts) {
  auto live = std::make_unique<Live>();
  live->guard = std::make_unique<child::InterruptGuard>(child::DriverStage::nvml);
  const std::string library = options.libnvml.value_or("libnvidia-ml.so.1");
  live->facts.ran = true;
  live->facts.source = "live";
  live->facts.library = library;
  live->facts.timeout_s = options.cuda_timeout_s;
  live->start = Clock::now();
  live->deadline = live->start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(options.cuda_timeout_s));
  const bool every = facts.gpus.empty();
  auto sys = live->group.spawn({"nvml system", {}, [library, every](child::LineWriter& out) {
                                  nvml::system_child(library, every, out);
                                }});
  if (!sys) {
    // this process's own limits (RLIMIT_NPROC, memory), not the driver's: exit 2
    throw CheckerFailure("cannot start the NVML child: " + sys.error().message);
  }
  live->system_id = *sys;
  const child::Gate* gate = &live->cuda_ended; // the child's copy of the parent's memory
  const auto give_up = live->deadline - k_wait_margin;
  for (const auto& gpu : facts.gpus) {
    const std::string bus = gpu.bus_id;
    auto id = live->group.spawn(
        {"nvml gpu " + bus, {}, [library, bus, gate, give_up](child::LineWriter& out) {
           nvml::gpu_child(library, bus, *gate, give_up, out);
         }});
    if (!id) {
      throw CheckerFailure("cannot start the NVML child for GPU " + bus + ": " +
                           id.error().message);
    }
    live->gpu_children.emplace_back(*id, bus);
  }
  return live;
}

// What one child said, folded.
struct Folded {
  std::string last_step; // the last step begun
  bool done = false;
  std::vector<Json> events;
  std::string garbage;
};

Folded fold(const std::vector<child::TimedLine>& lines) {
  Folded f;
  for (const auto& l : lines) {
    const Json j = Json::parse(l.text, nullptr, false);
    const JsonIn in(j);
    const auto e = in["e"].lenient<std::string>();
    if (!e) {
      if (f.garbage.empty()) {
        f.garbage = "unexpected output: " + quote_evidence(l.text, 200);
      }
      continue;
    }
    if (*e == "begin") {
      f.last_step = in["step"].lenient<std::string>().value_or("");
    } else if (*e == "done") {
      f.done = true;
    } else {
      f.events.push_back(j);
    }
  }
  return f;
}

std::string describe_end(const child::ChildEnd& end) {
  if (!end.protocol_error.empty()) {
    return "was killed for a protocol error: " + end.protocol_error;
  }
  if (end.signal) {
    return fmt::format("killed by signal {}", *end.signal);
  }
  if (end.exit_code) {
    return fmt::format("exited with status {} without finishing", *end.exit_code);
  }
  return "its pipe closed without finishing";
}

void apply_system(const Folded& f, const child::ChildEnd& end, NvmlFacts& n) {
  for (const auto& j : f.events) {
    const std::string e = j["e"].get<std::string>();
    const JsonIn in(j);
    const auto text = [&in](const char* key) {
      return in[key].lenient<std::string>().value_or("");
    };
    if (e == "library") {
      n.library_path = text("path");
    } else if (e == "load_error") {
      n.load_error = text("text");
    } else if (e == "missing") {
      (in["required"].lenient<bool>().value_or(false) ? n.missing_symbols
                                                      : n.missing_optional_symbols)
          .push_back(text("symbol"));
    } else if (e == "system") {
      n.nvml_version = text("nvml_version");
      n.driver_version = text("driver_version");
      n.init_call = text("init_call");
      n.init_code = in["init_code"].lenient<int>();
      n.init_text = text("init_text");
      n.device_count = in["device_count"].lenient<unsigned>();
    } else if (e == "gpu" && j.contains("gpu")) {
      if (auto g = nvml_gpu_from_json(j["gpu"])) {
        n.gpus.push_back(std::move(g).value());
      }
    }
  }
  if (!f.done) {
    if (end.killed_at_deadline) {
      if (f.last_step == "init" || f.last_step == "load" || f.last_step == "nvml_version") {
        n.init_hang = NvmlHang{f.last_step, end.end_ms};
      } else if (starts_with(f.last_step, "handle ") || !n.gpus.empty() || n.init_ok()) {
        // Enumerating by index: the GPU being asked is the one that hung.
        NvmlGpu g;
        g.hang = NvmlHang{f.last_step, end.end_ms};
        if (starts_with(f.last_step, "handle ")) {
          g.index = static_cast<unsigned>(std::atoi(f.last_step.c_str() + 7));
        }
        n.gpus.push_back(std::move(g));
      }
    } else {
      n.child_error = f.garbage.empty() || !end.protocol_error.empty()
                          ? "the NVML system child " + describe_end(end)
                          : f.garbage;
    }
  }
}

NvmlGpu apply_gpu(const Folded& f, const child::ChildEnd& end, const std::string& bus) {
  NvmlGpu g;
  g.bus_id = bus;
  bool have = false;
  std::optional<NvmlTraffic> traffic;
  for (const auto& j : f.events) {
    if (j["e"] == "gpu" && j.contains("gpu")) {
      if (auto parsed = nvml_gpu_from_json(j["gpu"])) {
        g = std::move(parsed).value();
        g.bus_id = bus; // the driver's name for it: the join key
        have = true;
      }
    } else if (j["e"] == "traffic" && j.contains("traffic")) {
      if (auto parsed = nvml_traffic_from_json(j["traffic"])) {
        traffic = std::move(parsed).value();
      }
    }
  }
  g.traffic = std::move(traffic);
  if (!f.done && have && end.killed_at_deadline && f.last_step == "traffic_wait") {
    // Waiting for the CUDA stage, not stuck in NVML: the GPU answered, only `after` is lost.
    g.traffic = NvmlTraffic{};
    g.traffic->not_read = "the deadline passed while the CUDA stage ran";
  } else if (!f.done) {
    if (end.killed_at_deadline) {
      g.hang = NvmlHang{f.last_step, end.end_ms};
    } else {
      g.child_error = f.garbage.empty() || !end.protocol_error.empty()
                          ? "its NVML child " + describe_end(end)
                          : f.garbage;
    }
  } else if (!have && g.child_error.empty()) {
    g.child_error = "its NVML child finished without a result (init failed)";
  }
  return g;
}

NvmlFacts collect(Live& live) {
  // Called after the CUDA stage: the GPU children read the counters its traffic may have raised.
  live.cuda_ended.release();
  NvmlFacts n = std::move(live.facts);
  const auto all_done = [&] {
    if (!live.group.finished(live.system_id)) {
      return false;
    }
    return std::all_of(live.gpu_children.begin(), live.gpu_children.end(),
                       [&](const auto& c) { return live.group.finished(c.first); });
  };
  if (!live.group.pump_until(live.deadline, all_done)) {
    n.deadline_hit = true;
    live.group.kill_at_deadline(live.system_id);
    for (const auto& c : live.gpu_children) {
      live.group.kill_at_deadline(c.first);
    }
  }
  live.group.settle(k_settle_grace);
  // A child the kernel or another process killed says nothing about its GPU: no verdict.
  for (const std::size_t id : [&] {
         std::vector<std::size_t> ids{live.system_id};
         for (const auto& c : live.gpu_children) {
           ids.push_back(c.first);
         }
         return ids;
       }()) {
    if (const auto killed = child::outside_kill_text(live.group.end(id))) {
      throw CheckerFailure(fmt::format("the NVML child ({}) was {} (docs/cuda-probe.md#memory). "
                                       "Or another process killed it. No verdict about the GPU",
                                       live.group.label(id), *killed));
    }
  }
  apply_system(fold(live.group.lines(live.system_id)), live.group.end(live.system_id), n);
  n.isolation = live.group.isolation(live.system_id);
  // A per-GPU child's init failure is the system child's finding; the GPU is then not judged.
  const bool init_failed = n.init_code && *n.init_code != k_nvml_success;
  if (!init_failed && n.load_error.empty() && n.missing_symbols.empty()) {
    for (const auto& [id, bus] : live.gpu_children) {
      n.gpus.push_back(apply_gpu(fold(live.group.lines(id)), live.group.end(id), bus));
    }
  }
  std::sort(n.gpus.begin(), n.gpus.end(),
            [](const NvmlGpu& a, const NvmlGpu& b) { return a.bus_id < b.bus_id; });
  n.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - live.start).count();
  return n;
}

std::string summary(const NvmlFacts& n) {
  if (!n.load_error.empty()) {
    return fmt::format("{} could not be loaded", n.library);
  }
  if (!n.missing_symbols.empty()) {
    return fmt::format("{} lacks {}", n.library, fmt::join(n.missing_symbols, ", "));
  }
  if (n.init_hang) {
    return fmt::format("NVML {} did not return before the deadline", n.init_hang->step);
  }
  if (!n.init_ok()) {
    return n.init_code ? fmt::format("{} returned {} ({})", n.init_call, *n.init_code, n.init_text)
                       : "NVML did not initialise: " + n.child_error;
  }
  const auto answered =
      std::count_if(n.gpus.begin(), n.gpus.end(), [](const NvmlGpu& g) { return g.answered(); });
  return fmt::format("{} asked, {} answered", counted(n.gpus.size(), "GPU"), answered);
}

} // namespace

std::unique_ptr<ProbeStarted> start_nvml(const Host& host, const ProbeOptions& options,
                                         const Facts& facts) {
  if (!runs_live(host, options) || stage_over_budget(options, options.cuda_timeout_s)) {
    return nullptr;
  }
  return start(options, facts);
}

ProbeStatus probe_nvml(const Host& host, const ProbeOptions& options, Facts& facts,
                       std::unique_ptr<ProbeStarted> started) {
  ProbeStatus status;
  if (options.no_nvml) {
    return status.skip("--no-nvml");
  }
  if (!runs_live(host, options)) {
    if (!host.exists("nvml.json")) {
      return status.skip("the snapshot has no nvml.json (a live probe against it needs --libnvml)");
    }
    auto content = host.read_file("nvml.json", k_nvml_json_cap);
    if (!content) {
      return status.fail("nvml.json: " + content.error().message);
    }
    if (content->truncated) {
      return status.fail(fmt::format("nvml.json: larger than {} bytes", k_nvml_json_cap));
    }
    auto parsed = parse_nvml_json(content->data);
    if (!parsed) {
      return status.fail("nvml.json: " + parsed.error().message);
    }
    facts.nvml = std::move(parsed).value();
    facts.nvml.source = "nvml.json";
    if (!facts.nvml.ran) {
      return status.skip("nvml.json records that the NVML probe did not run");
    }
    status.message = "replayed nvml.json: " + summary(facts.nvml);
    return status;
  }
  std::unique_ptr<Live> live;
  if (!started) {
    if (auto over = stage_over_budget(options, options.cuda_timeout_s)) {
      return status.skip(*over);
    }
  }
  if (dynamic_cast<Live*>(started.get())) {
    live.reset(static_cast<Live*>(started.release()));
  } else {
    live = start(options, facts);
  }
  facts.nvml = collect(*live);
  for (const auto& g : facts.nvml.gpus) {
    if (g.processes && g.processes->size() >= nvml::k_max_processes) {
      status.cut.push_back(fmt::format("{}: nvmlDeviceGetComputeRunningProcesses (the first {} "
                                       "processes)",
                                       g.bus_id, nvml::k_max_processes));
    }
  }
  status.message = summary(facts.nvml);
  return status;
}

namespace {
// Its children start just before cuda's, to work beside them; after gpu-processes, which must not
// count them as GPU holders.
const ProbeRegistration k_row{{.name = "nvml",
                               .what = "GPU health (NVML)",
                               .order = 1600,
                               .start = start_nvml,
                               .start_before = "cuda",
                               .finish = probe_nvml,
                               .after = "gpu-processes"}};
} // namespace

} // namespace gpf
