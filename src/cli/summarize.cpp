// `gpu-preflight summarize [PATH...]`: many nodes' JSON reports (files, directories of them, JSON
// lines on stdin) read one document at a time into a small record per node; the newest report of
// a node counts, older ones are listed as superseded. Prints nodes per verdict with their primary
// cause, findings by id with the nodes and GPUs they hit, the spread of driver, kernel, CUDA and
// GPU model, and fleet-relative outliers of the figures in k_figures (docs/fleet.md).
#include "gpf/cli/cli.hpp"
#include "gpf/cli/fleet.hpp"
#include "gpf/facts/cuda_facts.hpp"
#include "gpf/report/text.hpp"
#include "gpf/util/hostlist.hpp"
#include "gpf/util/json_bounded.hpp"
#include "gpf/util/json_read.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/robust.hpp"
#include "gpf/util/text.hpp"
#include "gpf/version_info.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <unistd.h>

namespace gpf {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// One report's text is parsed only up to this size (a real report is tens of KiB); an input is
// read one document at a time, each under the cap, so memory stays bounded for any input.
constexpr std::size_t k_document_cap = 16u << 20;
// Lists in the text output name this many nodes, then "+N more" (the JSON has them all).
constexpr std::size_t k_text_list = 12;
// A finding's hostlist in the text takes at most this many lines: a node not ready is named in
// full in its cause's group, and the JSON has them all.
constexpr std::size_t k_finding_hostlist_lines = 2;
constexpr std::size_t k_node_findings_kept = 256; // per node: the record stays small
constexpr std::size_t k_node_models_kept = 16;
constexpr std::size_t k_node_gpus_kept = 64;    // bus ids per node, for the HTML grid
constexpr std::size_t k_unreadable_shown = 20;  // unreadable inputs named on stderr
constexpr std::size_t k_unreadable_kept = 1000; // and listed in the summary
constexpr double k_outlier_mads = 3.0;
// Nodes needed in a group (same GPU model and driver) before one of them can stand out.
constexpr std::size_t k_outlier_min_group = 3;

// The figures compared between identical nodes; a node's figure is that of its worst GPU.
enum class Figure : std::size_t {
  cuda_startup,
  pcie_width,
  temperature,
  h2d_bandwidth,
  d2h_bandwidth,
  peer_bandwidth,
  sm_clock
};
struct FigureInfo {
  const char* metric; // the JSON name
  const char* what;   // the text's words
  const char* unit;
  bool fixed; // one decimal always (milliseconds); else as few as needed (a median of 35.5 C)
  // The least distance from the median that matters to a job, whatever the fleet's spread: a
  // fraction of the median and an amount in the unit (the larger counts). Identical nodes differ
  // by a few per cent in start-up and bandwidth from run to run; that is no outlier.
  double min_fraction;
  double min_amount;
  // Which side of the median is worse: a node that starts CUDA faster, or runs cooler, than its
  // identical peers is no outlier to act on.
  bool higher_is_worse;
};
constexpr std::array<FigureInfo, 7> k_figures{{
    {"cuda_startup_ms", "CUDA start-up", "ms", true, 0.2, 0, true},
    {"pcie_link_width", "PCIe link width", "lanes", false, 0, 0.5, false},
    {"gpu_temperature_c", "GPU temperature", "C", false, 0, 5, true},
    {"h2d_gbps", "host-to-device bandwidth", "GB/s", true, 0.1, 0, false},
    {"d2h_gbps", "device-to-host bandwidth", "GB/s", true, 0.1, 0, false},
    {"peer_gbps", "peer copy bandwidth", "GB/s", true, 0.1, 0, false},
    {"sm_clock_mhz", "SM clock under load", "MHz", false, 0.1, 0, false},
}};
static_assert(static_cast<std::size_t>(Figure::sm_clock) + 1 == k_figures.size());

const FigureInfo& info(Figure f) {
  return k_figures[static_cast<std::size_t>(f)];
}

// A node's figure and the GPU it comes from.
struct NodeFigure {
  double value = 0;
  std::string gpu;
};

struct NodeFinding {
  std::string id;
  std::string severity;
  std::string gpu; // "" for the node
};

// What summarize keeps of one report: a few KiB at most, whatever the report's size.
struct NodeRecord {
  std::string key;  // the host, or the source for a report without one
  std::string name; // shown: the host, or the file name
  bool hostless = false;
  std::string source;
  std::string checked_at;
  std::optional<std::int64_t> checked_s; // checked_at parsed, seconds since the epoch
  std::uint64_t seq = 0;                 // input order: the later of two equal times wins
  std::string verdict;
  int exit_code = 0;
  std::string primary;     // "id" or "id bus_id"; "" for pass
  std::string primary_id;  // the id alone
  std::string primary_gpu; // its GPU's bus id, "" for the node
  // The part of the node that causes it when that is no GPU ("ACS 0000:17:00.0"), "" when none
  // is named (or the report is older than the member).
  std::string primary_where;
  std::string remedy; // the primary cause's finding's remedy
  // No report: the input was empty or cut short (the check crashed, was killed, timed out).
  bool no_report = false;
  int usable = 0;
  int total = 0;
  std::vector<NodeFinding> findings;
  std::string driver;                // "550.54.14 (open)" or "none"
  std::string driver_version;        // "550.54.14" or ""
  std::string kernel;                // release
  std::string cuda;                  // the driver's CUDA version, "" when not probed
  std::map<std::string, int> models; // GPU model -> count
  std::vector<std::string> gpus;     // bus ids, the first k_node_gpus_kept
  // By Figure: each the node's worst GPU's (the slowest CUDA start-up, the narrowest PCIe link on a
  // GPU's path, the hottest GPU, ...).
  std::array<std::optional<NodeFigure>, k_figures.size()> figures;
  bool stale = false;
  // checked_at is later than summarize's clock plus k_clock_skew_s: a wrong clock, not a time;
  // such a report never supersedes one with a plausible time, and never counts as recent.
  bool future = false;
  bool plausible_time() const { return checked_s && !future; }
  // warn made not ready by the check's --strict (its exit code says so)
  bool strict() const { return verdict == "warn" && exit_code != 0; }

  // Keeps a GPU's value as the node's figure when it is worse than the one kept so far.
  template <class Worse> void keep(Figure f, double value, const std::string& gpu, Worse worse) {
    auto& kept = figures[static_cast<std::size_t>(f)];
    if (!kept || worse(value, kept->value)) {
      kept = NodeFigure{value, gpu};
    }
  }
};

struct Superseded {
  std::string name;
  std::string source;
  std::string checked_at;
  std::string by_source;
  std::string by_checked_at;
};

struct Unreadable {
  std::string source;
  std::string why;
};

std::optional<std::int64_t> parse_rfc3339(std::string_view s) {
  // 2026-12-01T10:15:00Z, optionally with a fraction of seconds; only UTC ("Z") is written.
  std::tm tm{};
  const std::string text(s);
  const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) {
    return std::nullopt;
  }
  if (*end == '.') {
    ++end;
    while (*end >= '0' && *end <= '9') {
      ++end;
    }
  }
  if (std::string_view(end) != "Z" && std::string_view(end) != "+00:00") {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(::timegm(&tm));
}

std::string model_key(const NodeRecord& n) {
  if (n.models.empty()) {
    return "no GPU";
  }
  std::vector<std::string> names;
  for (const auto& [model, count] : n.models) {
    names.push_back(model);
  }
  return fmt::format("{}", fmt::join(names, " + "));
}

// The report's members summarize needs; Error when it is not a gpu-preflight report.
Result<NodeRecord> read_record(const nlohmann::json& doc) {
  const JsonIn in(doc);
  if (!doc.is_object()) {
    return Error{"not a gpu-preflight report (not a JSON object)"};
  }
  std::string tool;
  if (!in["tool"]["name"].get(tool) || tool != k_tool_name) {
    return Error{"not a gpu-preflight report (no tool.name \"gpu-preflight\")"};
  }
  NodeRecord n;
  int schema = 0;
  TRY(in["schema_version"].get(schema));
  if (schema != 1) {
    return Error{fmt::format("schema_version {} is not one this version reads (1)", schema)};
  }
  TRY(in["verdict"].get(n.verdict));
  if (n.verdict != "pass" && n.verdict != "warn" && n.verdict != "fail") {
    return Error{"verdict is missing or not pass, warn or fail"};
  }
  n.exit_code = -1;
  TRY(in["exit_code"].get(n.exit_code));
  if (n.exit_code != 0 && n.exit_code != 1) {
    return Error{"exit_code is missing or not 0 or 1"};
  }
  std::optional<std::string> host;
  TRY(in["host"].get(host));
  if (host && !host->empty()) {
    n.key = n.name = *host;
  } else {
    n.hostless = true;
  }
  TRY(in["checked_at"].get(n.checked_at));
  n.checked_s = parse_rfc3339(n.checked_at);
  TRY(in["usable_gpus"].get(n.usable));
  TRY(in["total_gpus"].get(n.total));
  if (!in["primary_cause"].absent()) {
    std::string id;
    std::optional<std::string> gpu;
    std::optional<std::string> where;
    TRY(in["primary_cause"]["id"].get(id));
    TRY(in["primary_cause"]["gpu"].get(gpu));
    TRY(in["primary_cause"]["where"].get(where));
    n.primary_id = id;
    n.primary_gpu = gpu.value_or("");
    n.primary_where = gpu ? std::string() : quote_evidence(where.value_or(""), 128);
    // as the check's own line names it (cause_label)
    n.primary = gpu ? id + " " + *gpu : where ? id + " " + n.primary_where : id;
  }
  TRY(in["findings"].each([&](const JsonIn& f) -> Result<void> {
    NodeFinding nf;
    TRY(f["id"].get(nf.id));
    TRY(f["severity"].get(nf.severity));
    TRY(f["gpu"].get(nf.gpu));
    if (n.remedy.empty() && nf.id == n.primary_id && nf.gpu == n.primary_gpu) {
      TRY(f["remedy"].get(n.remedy));
      n.remedy = quote_evidence(n.remedy, 1024);
    }
    if (n.findings.size() < k_node_findings_kept) { // a fixed-size record, whatever the report
      nf.id = quote_evidence(nf.id, 128);
      nf.severity = quote_evidence(nf.severity, 16);
      n.findings.push_back(std::move(nf));
    }
    return {};
  }));
  std::map<std::string, unsigned> clock_under_load; // bus id -> MHz
  TRY(in["gpus"].each([&](const JsonIn& g) -> Result<void> {
    std::optional<std::string> model;
    TRY(g["model"].get(model));
    const std::string name = quote_evidence(model.value_or("unknown model"), 128);
    if (n.gpus.size() < k_node_gpus_kept) {
      std::optional<std::string> bus;
      TRY(g["bus_id"].get(bus));
      n.gpus.push_back(quote_evidence(bus.value_or("?"), 64));
    }
    if (n.models.size() < k_node_models_kept || n.models.count(name) != 0) {
      ++n.models[name];
    }
    // NVML's temperature, and its highest SM clock while the CUDA stage ran, where the report has
    // them (the clock counts only where the active step loaded the GPU: below)
    std::optional<unsigned> celsius;
    std::optional<unsigned> mhz;
    TRY(g["health"]["temperature_c"].get(celsius));
    TRY(g["health"]["traffic"]["during"]["sm_clock_max_mhz"].get(mhz));
    if (celsius || mhz) {
      std::string bus;
      TRY(g["bus_id"].get(bus));
      if (celsius) {
        n.keep(Figure::temperature, *celsius, bus, std::greater<>());
      }
      if (mhz) {
        clock_under_load.emplace(bus, *mhz);
      }
    }
    return {};
  }));
  const JsonIn facts = in["facts"];
  std::optional<std::string> version;
  std::string flavour = "unknown";
  TRY(facts["driver"]["version"].get(version));
  TRY(facts["driver"]["flavour"].get(flavour));
  n.driver_version = version.value_or("");
  n.driver = version ? fmt::format("{} ({})", *version, flavour) : std::string("none");
  TRY(facts["kernel"]["release"].get(n.kernel));
  const JsonIn cuda = facts["cuda"];
  std::optional<std::string> cuda_version;
  TRY(cuda["driver_cuda_version"].get(cuda_version));
  n.cuda = cuda_version.value_or("");
  // CUDA start-up of a GPU: the report's startup_ms (CudaDevice::startup_ms, also the Prometheus
  // series gpu_preflight_cuda_startup_seconds); the node's is its slowest GPU's. A report written
  // before that member existed lacks it: its steps are summed by the same definition, so a fleet
  // in mid-upgrade still compares (null is a report saying there is no figure).
  TRY(cuda["devices"].each([&](const JsonIn& d) -> Result<void> {
    std::optional<double> ms;
    if (d.json().is_object() && d.json().contains("startup_ms")) {
      TRY(d["startup_ms"].get(ms));
    } else {
      std::vector<CudaStep> steps;
      TRY(d["steps"].each([&](const JsonIn& s) -> Result<void> {
        CudaStep& step = steps.emplace_back();
        TRY(s["name"].get(step.name));
        TRY(s["ok"].get(step.ok));
        TRY(s["duration_ms"].get(step.duration_ms));
        return {};
      }));
      ms = sum_of_steps(steps, k_cuda_startup_steps);
    }
    std::string bus;
    TRY(d["bus_id"].get(bus));
    if (ms) {
      n.keep(Figure::cuda_startup, *ms, bus, std::greater<>());
    }
    // A clock sampled while the active step ran its kernels is the GPU's under load; without the
    // step (--no-active, not run) the GPU mostly idled, and its clock says nothing.
    bool active = false;
    TRY(d["active"]["ran"].get(active));
    const auto clock = clock_under_load.find(bus);
    if (active && clock != clock_under_load.end() && clock->second > 0) {
      n.keep(Figure::sm_clock, clock->second, bus, std::less<>());
    }
    // Bandwidth: the node's figure is its slowest GPU's (absent in reports without the step).
    for (const auto& [key, figure] : {std::pair("h2d_gbps", Figure::h2d_bandwidth),
                                      std::pair("d2h_gbps", Figure::d2h_bandwidth)}) {
      std::optional<double> gbps;
      TRY(d[key].get(gbps));
      if (gbps && *gbps > 0) {
        n.keep(figure, *gbps, bus, std::less<>());
      }
    }
    return {};
  }));
  // Peer copies: the node's slowest pair, named by the CUDA indices of its GPUs.
  TRY(cuda["multi_gpu"]["peers"].each([&](const JsonIn& p) -> Result<void> {
    std::optional<double> gbps;
    int from = 0;
    int to = 0;
    TRY(p["gbps"].get(gbps));
    TRY(p["from"].get(from));
    TRY(p["to"].get(to));
    if (gbps && *gbps > 0) {
      n.keep(Figure::peer_bandwidth, *gbps, fmt::format("CUDA {} -> CUDA {}", from, to),
             std::less<>());
    }
    return {};
  }));
  // PCIe: the narrowest trained link on each GPU's path, its own or a bridge's above it.
  const JsonIn pcie = facts["topology"]["pcie"];
  std::map<std::string, int> bridge_width;
  TRY(pcie["bridges"].each([&](const JsonIn& b) -> Result<void> {
    std::string bus;
    std::optional<int> width;
    TRY(b["bus_id"].get(bus));
    TRY(b["link"]["width"].get(width));
    if (width) {
      bridge_width[bus] = *width;
    }
    return {};
  }));
  TRY(pcie["gpus"].each([&](const JsonIn& g) -> Result<void> {
    std::string bus;
    std::optional<int> width;
    std::vector<std::string> bridges;
    TRY(g["bus_id"].get(bus));
    TRY(g["link"]["width"].get(width));
    TRY(g["bridges"].get(bridges));
    for (const auto& b : bridges) {
      if (const auto it = bridge_width.find(b); it != bridge_width.end()) {
        width = std::min(width.value_or(it->second), it->second);
      }
    }
    if (width) {
      n.keep(Figure::pcie_width, *width, bus, std::less<>());
    }
    return {};
  }));
  return n;
}

// Whether text is a JSON document cut short (the parser ran out of input, not into a wrong
// character), and the report's top-level "host" when the text got that far.
class CutReport : public nlohmann::json_sax<nlohmann::json> {
public:
  explicit CutReport(std::size_t length) : m_length(length) {}
  bool cut() const { return m_cut; }
  const std::optional<std::string>& host() const { return m_host; }

  bool null() override { return value(); }
  bool boolean(bool /*v*/) override { return value(); }
  bool number_integer(number_integer_t /*v*/) override { return value(); }
  bool number_unsigned(number_unsigned_t /*v*/) override { return value(); }
  bool number_float(number_float_t /*v*/, const string_t& /*s*/) override { return value(); }
  bool string(string_t& v) override {
    if (m_depth == 1 && m_host_next) {
      m_host = v;
    }
    return value();
  }
  bool binary(binary_t& /*v*/) override { return value(); }
  bool start_object(std::size_t /*n*/) override { return open(); }
  bool key(string_t& k) override {
    m_host_next = m_depth == 1 && k == "host";
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*n*/) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*e*/) override {
    m_cut = position >= m_length; // the error is at the end: the text stopped, it was not wrong
    return false;
  }

private:
  bool value() {
    m_host_next = false;
    return true;
  }
  bool open() {
    m_host_next = false;
    ++m_depth;
    return true;
  }
  bool close() {
    --m_depth;
    return true;
  }
  std::size_t m_length;
  std::size_t m_depth = 0;
  bool m_host_next = false;
  bool m_cut = false;
  std::optional<std::string> m_host;
};

// How far ahead of this host's clock a report's checked_at may be (clocks of a fleet drift; NTP
// keeps them within seconds) before it is a future date.
constexpr std::int64_t k_clock_skew_s = 300;

// What read_record() reads of a report (and, for `jq -s` arrays, of each element).
const JsonShape& report_shape() {
  static const JsonShape shape = [] {
    const auto names = [](std::initializer_list<std::pair<const char*, JsonShape>> members) {
      JsonShape s;
      for (const auto& [name, member] : members) {
        s.members.emplace(name, member);
      }
      return s;
    };
    const JsonShape whole;
    const JsonShape width = names({{"width", whole}});
    return names(
        {{"tool", names({{"name", whole}})},
         {"schema_version", whole},
         {"verdict", whole},
         {"exit_code", whole},
         {"host", whole},
         {"checked_at", whole},
         {"usable_gpus", whole},
         {"total_gpus", whole},
         {"primary_cause", names({{"id", whole}, {"gpu", whole}, {"where", whole}})},
         {"findings",
          names({{"id", whole}, {"severity", whole}, {"gpu", whole}, {"remedy", whole}})},
         {"gpus", names({{"model", whole},
                         {"bus_id", whole},
                         {"health", names({{"temperature_c", whole},
                                           {"traffic", names({{"during", names({{"sm_clock_max_mhz",
                                                                                 whole}})}})}})}})},
         {"facts",
          names({{"driver", names({{"version", whole}, {"flavour", whole}})},
                 {"kernel", names({{"release", whole}})},
                 {"cuda",
                  names({{"driver_cuda_version", whole},
                         {"devices",
                          names({{"startup_ms", whole},
                                 {"steps",
                                  names({{"name", whole}, {"ok", whole}, {"duration_ms", whole}})},
                                 {"bus_id", whole},
                                 {"h2d_gbps", whole},
                                 {"d2h_gbps", whole},
                                 {"active", names({{"ran", whole}})}})},
                         {"multi_gpu",
                          names({{"peers",
                                  names({{"gbps", whole}, {"from", whole}, {"to", whole}})}})}})},
                 {"topology",
                  names({{"pcie", names({{"bridges", names({{"bus_id", whole}, {"link", width}})},
                                         {"gpus", names({{"bus_id", whole},
                                                         {"link", width},
                                                         {"bridges", whole}})}})}})}})}});
  }();
  return shape;
}

class Fleet {
public:
  // now_s: this host's clock, against which future dates and ages are judged.
  Fleet(std::optional<std::int64_t> max_age_s, std::int64_t now_s)
      : m_max_age_s(max_age_s), m_now_s(now_s) {}

  // One document's text from source: parsed, checked and kept as its node's record.
  void document(std::string_view text, const std::string& source) {
    ++m_reports;
    if (!json_depth_within(text)) {
      return unreadable(
          source,
          fmt::format("not a gpu-preflight report (JSON nested deeper than {})", k_json_max_depth));
    }
    // Only the members a node's record reads are built (report_shape): a 16 MiB report costs
    // the memory of those, not of its whole facts.
    auto parsed =
        parse_json_bounded(text, k_max_json_elements, k_max_json_members, nullptr, &report_shape());
    if (!parsed) {
      // A report cut short is a node whose check crashed, was killed or timed out: no report,
      // for the host it names, if it got that far.
      const std::string_view body = trim(text);
      CutReport cut(body.size());
      nlohmann::json::sax_parse(body, &cut);
      if (cut.cut() && !body.empty()) {
        return no_report(source, cut.host().value_or(""), "report cut short");
      }
      return unreadable(source, parsed.error().message);
    }
    const nlohmann::json& doc = parsed->doc;
    if (doc.is_array()) { // an array of reports, as `jq -s` writes them
      --m_reports;
      std::size_t i = 0;
      for (const auto& one : doc) {
        ++m_reports;
        add(one, fmt::format("{}[{}]", source, i++));
      }
      return;
    }
    add(doc, source);
  }

  // Counted always; the first k_unreadable_shown named on stderr, the first k_unreadable_kept
  // listed in the summary (a file of millions of bad lines costs neither memory nor a flood).
  void unreadable(const std::string& source, std::string why) {
    ++m_unreadable_count;
    if (m_unreadable_count <= k_unreadable_shown) {
      std::cerr << "gpu-preflight: summarize: " << printable(quote_evidence(source, 256)) << ": "
                << printable(quote_evidence(why, 512)) << "\n";
    }
    if (m_unreadable.size() < k_unreadable_kept) {
      m_unreadable.push_back({quote_evidence(source, 256), quote_evidence(why, 512)});
    }
  }
  void not_a_report() { ++m_reports; }

  // An input that should have been a node's report and is not one (empty, cut short): the node,
  // named by its host when the text names one, else by the file, counts as not ready.
  void no_report(const std::string& source, const std::string& host, const std::string& why) {
    ++m_no_report;
    NodeRecord n;
    n.no_report = true;
    n.verdict = "none";
    n.exit_code = k_exit_not_ready;
    n.primary = n.primary_id = why;
    n.source = source;
    if (!host.empty()) {
      n.key = n.name = quote_evidence(host, 256);
    } else {
      n.hostless = true;
    }
    insert(std::move(n));
  }

  int exit_code() const {
    if (m_unreadable_count > 0 || m_nodes.empty()) {
      return k_exit_error;
    }
    for (const auto& [key, n] : m_nodes) {
      if (!ready(n)) {
        return k_exit_not_ready;
      }
    }
    return k_exit_ready;
  }

  // Nodes grouped by primary cause: the ones failing, warning, without a report or stale; with
  // with_ready also the ready ones, as one group.
  struct CauseGroup {
    std::string id;   // the primary cause's id, "no report", "stale", "ready"
    std::string kind; // fail, warn, none (no report), stale, pass: the group's worst
    std::vector<const NodeRecord*> nodes;
  };
  std::vector<CauseGroup> cause_groups(bool with_ready) const;
  std::string detail(const CauseGroup& g, const NodeRecord& n) const;
  static std::string drain_reason(const CauseGroup& g);

  Json to_json() const;
  std::string to_text(std::size_t width) const;
  std::string to_html() const;
  std::string html_cells(const NodeRecord& n) const;
  void finish() {
    if (m_unreadable_count > k_unreadable_shown) {
      std::cerr << "gpu-preflight: summarize: " << m_unreadable_count - k_unreadable_shown
                << " more unreadable inputs not named here (counted in the summary)\n";
    }
    for (auto& [key, n] : m_nodes) {
      if (m_max_age_s) {
        n.stale = !n.plausible_time() || m_now_s - *n.checked_s > *m_max_age_s;
      }
    }
  }

private:
  static bool ready(const NodeRecord& n) { return n.exit_code == 0 && !n.stale; }

  // Counted always, listed up to k_unreadable_kept.
  void superseded(Superseded s) {
    ++m_superseded_count;
    if (m_superseded.size() < k_unreadable_kept) {
      m_superseded.push_back(std::move(s));
    }
  }

  void add(const nlohmann::json& doc, const std::string& source) {
    auto record = read_record(doc);
    if (!record) {
      return unreadable(source, record.error().message);
    }
    NodeRecord n = std::move(record).value();
    n.source = source;
    n.future = n.checked_s && *n.checked_s > m_now_s + k_clock_skew_s;
    m_future += n.future ? 1 : 0;
    insert(std::move(n));
  }

  // A node's record, superseding or superseded by one of the same key. A no-report record has no
  // time: any report of the node with a plausible time counts before it.
  void insert(NodeRecord n) {
    n.seq = m_seq++;
    if (n.hostless) {
      n.key = "\x01" + n.source; // never a host name
      n.name = fs::path(n.source).filename().string();
      if (n.name.empty()) {
        n.name = n.source;
      }
    }
    auto [it, inserted] = m_nodes.try_emplace(n.key);
    if (!inserted) {
      NodeRecord& old = it->second;
      // the newer check wins; a report without a plausible time (none readable, or in the
      // future) is older than any with one, and among those the later input wins
      const auto older = [](const NodeRecord& a, const NodeRecord& b) {
        const auto time = [](const NodeRecord& r) {
          return r.plausible_time() ? *r.checked_s : std::numeric_limits<std::int64_t>::min();
        };
        return time(a) != time(b) ? time(a) < time(b) : a.seq < b.seq;
      };
      if (older(n, old)) {
        superseded({n.name, n.source, n.checked_at, old.source, old.checked_at});
        return;
      }
      superseded({old.name, old.source, old.checked_at, n.source, n.checked_at});
    }
    it->second = std::move(n);
  }

  struct FindingGroup {
    std::string severity;
    std::set<std::string> nodes;
    std::vector<std::pair<std::string, std::string>> gpus; // node, bus id
  };
  struct Outlier {
    const NodeRecord* node;
    Figure figure;
    double median;
    double mad;
    std::size_t group;
    std::string model;
    std::string driver;
    const NodeFigure& figure_of() const { return *node->figures[static_cast<std::size_t>(figure)]; }
  };

  // How many nodes have each driver, kernel and CUDA version, and each GPU model's GPUs and nodes:
  // one count for both output formats.
  struct Spreads {
    std::map<std::string, int> drivers;
    std::map<std::string, int> kernels;
    std::map<std::string, int> cudas;
    std::map<std::string, int> model_gpus;
    std::map<std::string, int> model_nodes;
  };

  // Findings grouped by id, most severe first, then by how many nodes they hit.
  std::vector<std::pair<std::string, FindingGroup>> finding_groups() const;
  std::vector<Outlier> outliers() const;
  void add_outliers(Figure figure, std::vector<Outlier>& out) const;
  Spreads spreads() const;
  static std::vector<std::pair<std::string, int>> spread(const std::map<std::string, int>& counts);

  std::optional<std::int64_t> m_max_age_s;
  std::int64_t m_now_s;
  std::map<std::string, NodeRecord> m_nodes;
  std::vector<Superseded> m_superseded; // the first k_unreadable_kept
  std::size_t m_superseded_count = 0;
  std::vector<Unreadable> m_unreadable; // the first k_unreadable_kept
  std::size_t m_unreadable_count = 0;
  std::size_t m_reports = 0;
  std::size_t m_future = 0;    // reports dated in the future, kept or superseded
  std::size_t m_no_report = 0; // inputs empty or cut short, kept or superseded
  std::uint64_t m_seq = 0;
};

int severity_rank(std::string_view s) {
  return s == "fail" ? 0 : s == "warn" ? 1 : 2;
}

std::vector<std::pair<std::string, Fleet::FindingGroup>> Fleet::finding_groups() const {
  std::map<std::string, FindingGroup> groups;
  for (const auto& [key, n] : m_nodes) {
    for (const auto& f : n.findings) {
      auto& g = groups[f.id];
      if (g.severity.empty() || severity_rank(f.severity) < severity_rank(g.severity)) {
        g.severity = f.severity;
      }
      g.nodes.insert(n.name);
      if (!f.gpu.empty()) {
        g.gpus.emplace_back(n.name, f.gpu);
      }
    }
  }
  std::vector<std::pair<std::string, FindingGroup>> ordered(groups.begin(), groups.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return severity_rank(a.second.severity) != severity_rank(b.second.severity)
               ? severity_rank(a.second.severity) < severity_rank(b.second.severity)
               : a.second.nodes.size() > b.second.nodes.size();
  });
  return ordered;
}

// A node stands out when one of its figures is more than 3 scaled median absolute deviations from
// the median of the nodes with the same GPU model and driver version (at least 3 such nodes with
// that figure), and at least the figure's least distance that matters (FigureInfo). The spread is
// at least 1% of the median, so that identical replays do not make every difference an outlier.
std::vector<Fleet::Outlier> Fleet::outliers() const {
  std::vector<Outlier> out;
  for (std::size_t f = 0; f < k_figures.size(); ++f) {
    add_outliers(static_cast<Figure>(f), out);
  }
  return out;
}

void Fleet::add_outliers(Figure figure, std::vector<Outlier>& out) const {
  const auto value = [figure](const NodeRecord& n) {
    return n.figures[static_cast<std::size_t>(figure)];
  };
  std::map<std::pair<std::string, std::string>, std::vector<const NodeRecord*>> groups;
  for (const auto& [key, n] : m_nodes) {
    if (value(n)) {
      groups[{model_key(n), n.driver_version}].push_back(&n);
    }
  }
  const auto first = out.size();
  for (const auto& [group_key, nodes] : groups) {
    if (nodes.size() < k_outlier_min_group) {
      continue;
    }
    std::vector<double> values;
    for (const auto* n : nodes) {
      values.push_back(value(*n)->value);
    }
    const RobustSpread r = robust_spread(values, 0.01);
    const double least =
        std::max(info(figure).min_fraction * std::abs(r.median), info(figure).min_amount);
    for (const auto* n : nodes) {
      const double v = value(*n)->value;
      const bool worse = info(figure).higher_is_worse ? v > r.median : v < r.median;
      if (worse && std::abs(r.deviations(v)) > k_outlier_mads && std::abs(v - r.median) >= least) {
        out.push_back(
            {n, figure, r.median, r.mad, nodes.size(), group_key.first, group_key.second});
      }
    }
  }
  // The farthest first, within this figure.
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
            [](const Outlier& a, const Outlier& b) {
              return std::abs(a.figure_of().value - a.median) >
                     std::abs(b.figure_of().value - b.median);
            });
}

std::vector<std::pair<std::string, int>> Fleet::spread(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

Json figure_json(const NodeRecord& n, Figure f) {
  const auto& v = n.figures[static_cast<std::size_t>(f)];
  return v ? Json(v->value) : Json(nullptr);
}

Fleet::Spreads Fleet::spreads() const {
  Spreads s;
  for (const auto& [key, n] : m_nodes) {
    if (n.no_report) {
      continue; // nothing known of its versions
    }
    ++s.drivers[n.driver];
    ++s.kernels[n.kernel.empty() ? "unknown" : n.kernel];
    ++s.cudas[n.cuda.empty() ? "not probed" : n.cuda];
    for (const auto& [model, count] : n.models) {
      s.model_gpus[model] += count;
      ++s.model_nodes[model];
    }
  }
  return s;
}

Json Fleet::to_json() const {
  Json j;
  j["tool"] = Json{{"name", k_tool_name}, {"version", k_tool_version}};
  std::size_t ready_count = 0;
  std::size_t stale = 0;
  for (const auto& [key, n] : m_nodes) {
    ready_count += ready(n) ? 1 : 0;
    stale += n.stale ? 1 : 0;
  }
  j["reports"] = Json{{"read", m_reports},
                      {"nodes", m_nodes.size()},
                      {"superseded", m_superseded_count},
                      {"unreadable", m_unreadable_count},
                      {"no_report", m_no_report},
                      {"stale", stale},
                      {"future_dated", m_future}};
  j["ready_nodes"] = ready_count;
  j["not_ready_nodes"] = m_nodes.size() - ready_count;
  Json nodes = Json::array();
  for (const auto& [key, n] : m_nodes) {
    nodes.push_back(
        Json{{"node", json_text(n.name)},
             {"host", n.hostless ? Json(nullptr) : Json(json_text(n.name))},
             {"source", json_text(n.source)},
             {"checked_at", json_text(n.checked_at)},
             {"verdict", n.no_report ? Json(nullptr) : Json(n.verdict)},
             {"no_report", n.no_report ? Json(n.primary) : Json(nullptr)},
             {"ready", ready(n)},
             {"strict", n.strict()},
             {"stale", n.stale},
             {"future_dated", n.future},
             {"primary_cause",
              n.primary.empty() || n.no_report ? Json(nullptr) : Json(json_text(n.primary))},
             {"usable_gpus", n.usable},
             {"total_gpus", n.total}});
    for (std::size_t f = 0; f < k_figures.size(); ++f) {
      nodes.back()[k_figures[f].metric] = figure_json(n, static_cast<Figure>(f));
    }
  }
  j["nodes"] = std::move(nodes);
  Json findings = Json::array();
  for (const auto& [id, group] : finding_groups()) {
    const FindingGroup* g = &group;
    Json names = Json::array();
    for (const auto& name : g->nodes) {
      names.push_back(json_text(name));
    }
    Json gpus = Json::array();
    for (const auto& [node, bus] : g->gpus) {
      gpus.push_back(Json{{"node", json_text(node)}, {"bus_id", json_text(bus)}});
    }
    findings.push_back(Json{{"id", json_text(id)},
                            {"severity", json_text(g->severity)},
                            {"nodes", std::move(names)},
                            {"gpus", std::move(gpus)}});
  }
  j["findings"] = std::move(findings);
  auto [drivers, kernels, cudas, model_gpus, model_nodes] = spreads();
  const auto counted = [](const std::map<std::string, int>& counts) {
    Json arr = Json::array();
    for (const auto& [value, count] : spread(counts)) {
      arr.push_back(Json{{"value", json_text(value)}, {"nodes", count}});
    }
    return arr;
  };
  Json models = Json::array();
  for (const auto& [model, count] : spread(model_gpus)) {
    models.push_back(
        Json{{"value", json_text(model)}, {"gpus", count}, {"nodes", model_nodes[model]}});
  }
  j["spread"] = Json{{"driver", counted(drivers)},
                     {"kernel", counted(kernels)},
                     {"cuda", counted(cudas)},
                     {"gpu_model", std::move(models)}};
  Json outs = Json::array();
  for (const auto& o : outliers()) {
    outs.push_back(Json{{"node", json_text(o.node->name)},
                        {"metric", info(o.figure).metric},
                        {"value", o.figure_of().value},
                        {"gpu", json_text(o.figure_of().gpu)},
                        {"median", o.median},
                        {"mad", o.mad},
                        {"group_nodes", o.group},
                        {"gpu_model", json_text(o.model)},
                        {"driver", json_text(o.driver)}});
  }
  j["outliers"] = std::move(outs);
  Json sup = Json::array();
  for (const auto& s : m_superseded) {
    sup.push_back(Json{{"node", json_text(s.name)},
                       {"source", json_text(s.source)},
                       {"checked_at", json_text(s.checked_at)},
                       {"superseded_by", json_text(s.by_source)}});
  }
  j["superseded"] = std::move(sup);
  Json bad = Json::array();
  for (const auto& u : m_unreadable) {
    bad.push_back(Json{{"source", json_text(u.source)}, {"error", json_text(u.why)}});
  }
  j["unreadable"] = std::move(bad);
  return j;
}

std::string listed(const std::vector<std::string>& items) {
  std::string s = fmt::format(
      "{}",
      fmt::join(items.begin(),
                items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), k_text_list)),
                ", "));
  if (items.size() > k_text_list) {
    s += fmt::format(", +{} more", items.size() - k_text_list);
  }
  return s;
}

std::string age_text(std::int64_t s) {
  if (s >= 86400) {
    return fmt::format("{}d {}h", s / 86400, (s % 86400) / 3600);
  }
  if (s >= 3600) {
    return fmt::format("{}h {}m", s / 3600, (s % 3600) / 60);
  }
  return fmt::format("{}m", std::max<std::int64_t>(s, 0) / 60);
}

// Names joined as hostlist lines: the first after `lead`, the next indented by 4, each at most
// width columns where a term allows; a continued line ends in a comma.
std::string wrapped_hostlist(const std::string& lead, const std::vector<std::string>& names,
                             std::size_t width) {
  const std::size_t room = width > 10 ? width - 5 : 5; // an indent of 4 and a comma
  std::string out = lead;
  std::size_t col = lead.size();
  bool first = true;
  for (const auto& term : hostlist_terms(names, room)) {
    if (!first) {
      out += ',';
      ++col;
    }
    if (col + term.size() + 1 > width && col > 4) {
      while (!out.empty() && out.back() == ' ') {
        out.pop_back(); // the lead's own space, when the list starts on the next line
      }
      out += "\n    ";
      col = 4;
    }
    out += term;
    col += term.size();
    first = false;
  }
  return out + "\n";
}

// One shell word: as it is when it holds only characters no shell treats specially, else in
// single quotes (host names and ids come from reports).
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_./:=,@%+[]-").find(c) != std::string_view::npos;
  });
  if (plain) {
    return s;
  }
  std::string q = "'";
  for (const char c : s) {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
}

// The `scontrol update` command that drains the nodes with a reason, continued with backslashes.
// A long hostlist continues at the start of the next line, so that it stays one shell word; one
// that has to be quoted (a host name with odd characters) is split into several commands instead.
std::string drain_commands(const std::vector<std::string>& names, const std::string& reason,
                           std::size_t width) {
  const std::string head =
      fmt::format("  scontrol update state=drain \\\n    {} \\\n", shell_word("reason=" + reason));
  const std::string all = fmt::format("nodename={}", hostlist(names));
  if (shell_word(all) == all) {
    std::string out = head;
    std::string line = "    ";
    for (std::size_t at = 0; at < all.size();) {
      const std::size_t comma = all.find(',', at);
      const std::size_t end = comma == std::string::npos ? all.size() : comma + 1;
      if (line.size() + (end - at) + 1 > width && !trim(line).empty()) {
        out += line + "\\\n";
        line.clear();
      }
      line.append(all, at, end - at);
      at = end;
    }
    return out + line + "\n";
  }
  std::string out;
  for (const auto& term : hostlist_terms(names, width > 20 ? width - 8 : 12)) {
    out += fmt::format("{}    {}\n", head, shell_word(fmt::format("nodename={}", term)));
  }
  return out;
}

int kind_rank(std::string_view kind) {
  return kind == "fail" ? 0 : kind == "warn" ? 1 : kind == "none" ? 2 : kind == "stale" ? 3 : 4;
}

std::string kind_word(std::string_view kind) {
  return kind == "fail"    ? "FAIL"
         : kind == "warn"  ? "WARN"
         : kind == "none"  ? "NO REPORT"
         : kind == "stale" ? "STALE"
                           : "READY";
}

// A group's heading: "FAIL devnode.nvidia-uvm-missing", "NO REPORT", "STALE", "READY".
std::string group_title(const Fleet::CauseGroup& g, std::string_view id) {
  return g.kind == "fail" || g.kind == "warn" ? fmt::format("{} {}", kind_word(g.kind), id)
                                              : kind_word(g.kind);
}

std::vector<Fleet::CauseGroup> Fleet::cause_groups(bool with_ready) const {
  std::map<std::pair<std::string, std::string>, CauseGroup> by; // (kind of group, id)
  for (const auto& [key, n] : m_nodes) {
    std::string kind;
    std::string id;
    if (n.no_report) {
      kind = "none";
      id = "no report";
    } else if (n.stale) {
      kind = "stale";
      id = "stale";
    } else if (n.verdict == "pass") {
      if (!with_ready) {
        continue;
      }
      kind = "pass";
      id = "ready";
    } else {
      kind = "cause";
      id = n.primary_id.empty() ? std::string("no primary cause") : n.primary_id;
    }
    CauseGroup& g = by[{kind, id}];
    g.id = id;
    const std::string node_kind = kind == "cause" ? n.verdict : kind;
    if (g.kind.empty() || kind_rank(node_kind) < kind_rank(g.kind)) {
      g.kind = node_kind;
    }
    g.nodes.push_back(&n);
  }
  std::vector<CauseGroup> out;
  for (auto& [key, g] : by) {
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const CauseGroup& a, const CauseGroup& b) {
    return kind_rank(a.kind) != kind_rank(b.kind) ? kind_rank(a.kind) < kind_rank(b.kind)
                                                  : a.nodes.size() > b.nodes.size();
  });
  return out;
}

// What sets a node apart within its cause group: the GPU, WARN in a group that fails, whether
// --strict made it not ready; why there is no report. "" when nothing.
std::string Fleet::detail(const CauseGroup& g, const NodeRecord& n) const {
  if (n.no_report) {
    return printable(n.primary);
  }
  if (n.stale) {
    return {};
  }
  std::vector<std::string> parts;
  if (g.kind != n.verdict) {
    parts.emplace_back(kind_word(n.verdict));
  }
  if (n.verdict == "warn") {
    parts.emplace_back(n.strict() ? "not ready by --strict" : "ready");
  }
  if (!n.primary_gpu.empty()) {
    parts.push_back(fmt::format("GPU {}", printable(n.primary_gpu)));
  }
  if (!n.primary_where.empty()) {
    parts.push_back(printable(n.primary_where));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The reason a group's nodes are drained with: its cause's id, and the part of the node that
// causes it where every node names the same one (the ACS port of identical nodes), so that the
// reason Slurm shows leads to the fix; a node's own part is in its row when they differ.
std::string Fleet::drain_reason(const CauseGroup& g) {
  const std::string& where = g.nodes.front()->primary_where;
  const bool shared = !where.empty() && std::all_of(g.nodes.begin(), g.nodes.end(), [&](auto* n) {
    return n->primary_where == where;
  });
  return shared ? fmt::format("gpu-preflight: {} {}", g.id, where)
                : fmt::format("gpu-preflight: {}", g.id);
}

std::string Fleet::to_text(std::size_t width) const {
  width = std::max<std::size_t>(width, 40);
  const auto wrap = [width](const std::string& text, std::size_t hang = 4) {
    return wrap_text(text, 0, hang, width);
  };
  std::string out;
  std::size_t ready_count = 0;
  for (const auto& [key, n] : m_nodes) {
    ready_count += ready(n) ? 1 : 0;
  }
  std::vector<std::string> notes;
  if (!m_superseded.empty()) {
    notes.push_back(fmt::format("{} superseded", m_superseded_count));
  }
  if (m_no_report > 0) {
    notes.push_back(fmt::format("{} empty or cut short", m_no_report));
  }
  if (m_unreadable_count > 0) {
    notes.push_back(fmt::format("{} unreadable", m_unreadable_count));
  }
  if (m_future > 0) {
    notes.push_back(fmt::format("{} dated in the future", m_future));
  }
  out += wrap(
      fmt::format("gpu-preflight summary: {} node{} from {} report{}{}", m_nodes.size(),
                  m_nodes.size() == 1 ? "" : "s", m_reports, m_reports == 1 ? "" : "s",
                  notes.empty() ? std::string() : fmt::format(" ({})", fmt::join(notes, ", "))));
  out += fmt::format("ready: {} of {}; not ready: {}\n", ready_count, m_nodes.size(),
                     m_nodes.size() - ready_count);

  // Per primary cause: the nodes as a hostlist (rows where they differ), the first remedy once,
  // and the command that drains the ones not ready.
  for (const auto& g : cause_groups(false)) {
    std::map<std::string, std::vector<std::string>> rows; // detail -> node names
    std::vector<std::string> names;
    std::vector<std::string> not_ready;
    std::int64_t oldest = std::numeric_limits<std::int64_t>::max();
    std::int64_t newest = std::numeric_limits<std::int64_t>::min();
    std::size_t undated = 0;
    std::size_t future = 0;
    for (const NodeRecord* n : g.nodes) {
      const std::string name = printable(n->name);
      rows[detail(g, *n)].push_back(name);
      names.push_back(name);
      if (!ready(*n) && !n->hostless) { // a file's name is no node to drain
        not_ready.push_back(name);
      }
      if (n->plausible_time()) {
        oldest = std::min(oldest, *n->checked_s);
        newest = std::max(newest, *n->checked_s);
      } else {
        ++(n->future ? future : undated);
      }
    }
    std::string head = fmt::format("{}: {} node{}", group_title(g, printable(g.id)), g.nodes.size(),
                                   g.nodes.size() == 1 ? "" : "s");
    if (g.kind == "stale") {
      head = fmt::format("STALE (older than --max-age): {} node{}", g.nodes.size(),
                         g.nodes.size() == 1 ? "" : "s");
      if (oldest < newest) {
        head += fmt::format(", checked {} to {} ago", age_text(m_now_s - oldest),
                            age_text(m_now_s - newest));
      } else if (oldest == newest) {
        head += fmt::format(", checked {} ago", age_text(m_now_s - oldest));
      }
      if (future > 0) {
        head += fmt::format(", {} dated in the future", future);
      }
      if (undated > 0) {
        head += fmt::format(", {} without a readable checked_at", undated);
      }
    }
    if (rows.size() == 1 && !rows.begin()->first.empty()) {
      head += " (" + rows.begin()->first + ")";
    }
    out += '\n';
    out += wrap(head, 2);
    if (rows.size() > 1 || not_ready.size() < names.size()) {
      for (const auto& [what, row] : rows) {
        // one row: its difference is in the heading already
        const std::string label = rows.size() == 1 ? std::string("nodes")
                                  : what.empty()   ? std::string("other")
                                                   : what;
        out += wrapped_hostlist(fmt::format("  {}: ", label), row, width);
      }
    }
    const NodeRecord* first = g.nodes.front();
    const std::string remedy =
        g.kind == "none"
            ? std::string("Run the check again; an empty or cut-short report is a check that "
                          "crashed, was killed or timed out (see the job's log)")
        : g.kind == "stale" ? std::string("Run the check again: the reports are older than "
                                          "--max-age, their verdicts old news")
                            : printable(first->remedy);
    if (!remedy.empty()) {
      out += wrap_text("remedy: " + remedy, 2, 4, width).insert(0, "  ");
    }
    // A host that reads as a hostlist expression ("node[1-4]", "a,b") would drain nodes no
    // report is about: it is named, never put in the command.
    std::vector<std::string> expressions;
    std::erase_if(not_ready, [&](const std::string& name) {
      const bool expression = name.find_first_of("[],") != std::string::npos;
      if (expression) {
        expressions.push_back(name);
      }
      return expression;
    });
    if (!not_ready.empty()) {
      out += drain_commands(not_ready, printable(drain_reason(g)), width);
    }
    if (!expressions.empty()) {
      out +=
          wrap_text(fmt::format("not drained: the host name{} {} read{} as a Slurm hostlist "
                                "expression, which would drain other nodes too",
                                expressions.size() == 1 ? "" : "s", printable(listed(expressions)),
                                expressions.size() == 1 ? "s" : ""),
                    2, 4, width)
              .insert(0, "  ");
    }
  }
  std::vector<std::string> future;
  for (const auto& [key, n] : m_nodes) {
    if (n.future) {
      future.push_back(fmt::format("{} (checked_at {}, {} ahead of this clock)", printable(n.name),
                                   printable(n.checked_at), age_text(*n.checked_s - m_now_s)));
    }
  }
  if (!future.empty()) {
    out += '\n';
    out += wrap(fmt::format("FUTURE {}: {}", future.size(), listed(future)));
  }

  const auto groups = finding_groups();
  if (!groups.empty()) {
    out += "\nfindings (id, severity: nodes, GPUs)\n";
    for (const auto& [id, group] : groups) {
      const FindingGroup* g = &group;
      const std::vector<std::string> names(g->nodes.begin(), g->nodes.end());
      std::vector<std::string> shown;
      for (const auto& name : names) {
        shown.push_back(printable(name));
      }
      std::string rows = wrapped_hostlist(
          fmt::format("  {} ({}): {} node{}{}: ", printable(id), printable(g->severity),
                      g->nodes.size(), g->nodes.size() == 1 ? "" : "s",
                      g->gpus.empty() ? std::string()
                                      : fmt::format(", {} GPU{}", g->gpus.size(),
                                                    g->gpus.size() == 1 ? "" : "s")),
          shown, width);
      // a finding on a scattered set of nodes: its first lines
      if (static_cast<std::size_t>(std::count(rows.begin(), rows.end(), '\n')) >
          k_finding_hostlist_lines) {
        std::size_t end = 0;
        for (std::size_t i = 0; i < k_finding_hostlist_lines; ++i) {
          end = rows.find('\n', end) + 1;
        }
        rows.resize(end);
        if (rows.size() >= 2 && rows[rows.size() - 2] == ',') {
          rows.erase(rows.size() - 2, 1);
        }
        rows += "    and more (--format json names every node)\n";
      }
      out += rows;
    }
  }

  auto [drivers, kernels, cudas, model_gpus, model_nodes] = spreads();
  const auto line = [](const std::map<std::string, int>& counts) {
    std::vector<std::string> parts;
    for (const auto& [value, count] : spread(counts)) {
      parts.push_back(fmt::format("{}: {}", printable(value), count));
    }
    return parts.empty() ? std::string("none known") : fmt::format("{}", fmt::join(parts, ", "));
  };
  out += "\nspread (nodes)\n";
  out += wrap_text(fmt::format("driver     {}", line(drivers)), 2, 13, width).insert(0, "  ");
  out += wrap_text(fmt::format("kernel     {}", line(kernels)), 2, 13, width).insert(0, "  ");
  out += wrap_text(fmt::format("CUDA       {}", line(cudas)), 2, 13, width).insert(0, "  ");
  std::vector<std::string> models;
  for (const auto& [model, count] : spread(model_gpus)) {
    models.push_back(fmt::format("{}: {} GPUs on {} node{}", printable(model), count,
                                 model_nodes[model], model_nodes[model] == 1 ? "" : "s"));
  }
  out += wrap_text(fmt::format("GPU model  {}", models.empty()
                                                    ? std::string("none")
                                                    : fmt::format("{}", fmt::join(models, ", "))),
                   2, 13, width)
             .insert(0, "  ");

  const auto outs = outliers();
  out += '\n';
  out += wrap("outliers (the slowest CUDA start-up, narrowest PCIe link, hottest GPU or "
              "slowest copy bandwidth of a node, > 3 scaled MADs from the median of nodes "
              "with the same GPU model and driver)",
              2);
  if (outs.empty()) {
    out += "  none\n";
  }
  for (const auto& o : outs) {
    const auto text = [&o](double v) {
      const auto& f = info(o.figure);
      return f.fixed ? fmt::format("{:.1f} {}", v, f.unit) : fmt::format("{:g} {}", v, f.unit);
    };
    out +=
        wrap(fmt::format("  {} {}: {} {} vs median {} (MAD {}, {} nodes with {}, driver {})",
                         printable(o.node->name), printable(o.figure_of().gpu), info(o.figure).what,
                         text(o.figure_of().value), text(o.median), text(o.mad), o.group,
                         printable(o.model), o.driver.empty() ? "none" : printable(o.driver)));
  }
  if (!m_superseded.empty()) {
    out += "\nsuperseded (a newer report of the node counts)\n";
    std::size_t shown = 0;
    for (const auto& s : m_superseded) {
      if (shown++ == k_text_list) {
        out += fmt::format("  +{} more\n", m_superseded_count - k_text_list);
        break;
      }
      out += wrap(fmt::format("  {}: {} ({}) by {} ({})", printable(s.name), printable(s.source),
                              printable(s.checked_at), printable(s.by_source),
                              printable(s.by_checked_at)));
    }
  }
  if (!m_unreadable.empty()) {
    out += "\nunreadable\n";
    std::size_t shown = 0;
    for (const auto& u : m_unreadable) {
      if (shown++ == k_text_list) {
        break;
      }
      out += wrap(fmt::format("  {}: {}", printable(u.source), printable(u.why)));
    }
    if (m_unreadable_count > k_text_list) {
      out += fmt::format("  +{} more\n", m_unreadable_count - k_text_list);
    }
  }
  return out;
}

// Report text for HTML: control characters shown (printable), then the five characters HTML
// treats specially escaped. Every string from a report goes through here.
std::string html(std::string_view s) {
  const std::string text = printable(s);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

// The colours of the grid's states; the legend, the cells and the headings share them.
constexpr std::string_view k_html_style = R"(
body { font: 14px/1.4 sans-serif; margin: 16px; color: #222222; background: #ffffff; }
h1 { font-size: 20px; margin: 0 0 8px; }
h2 { font-size: 16px; margin: 20px 0 6px; }
.c { display: inline-block; width: 14px; height: 14px; margin: 1px; border-radius: 2px; }
.fail { background: #d62728; } .warn { background: #ff9f1a; } .none { background: #7f7f7f; }
.stale { background: #9467bd; } .pass { background: #2ca02c; }
.grid { display: flex; flex-wrap: wrap; gap: 4px 12px; }
.node { display: flex; align-items: center; white-space: nowrap; }
.node b { font: 12px monospace; font-weight: normal; min-width: 9em; margin-right: 4px; }
table { border-collapse: collapse; margin-top: 8px; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
code, pre { font: 12px monospace; white-space: pre-wrap; word-break: break-all; margin: 0; }
)";

// A GPU's cell: its worst finding, else the node's own cause, else ready; one cell for a node
// without a report or without a GPU listed.
std::string Fleet::html_cells(const NodeRecord& n) const {
  const std::string node = html(n.name);
  if (n.no_report) {
    return fmt::format(R"h(<span class="c none" title="{}: no report ({})"></span>)h", node,
                       html(n.primary));
  }
  if (n.stale) {
    return fmt::format(
        R"h(<span class="c stale" title="{}: stale, checked {}"></span>)h", node,
        html(n.checked_at.empty() ? std::string("at no readable time") : n.checked_at));
  }
  const std::string node_kind = n.verdict == "pass" || !n.primary_gpu.empty() ? "pass" : n.verdict;
  const std::string node_what =
      node_kind == "pass" ? std::string("ready")
                          : fmt::format("{} ({}, the node's)", html(n.primary_id), n.verdict);
  // the GPUs listed, and those a finding names that the list lacks (an excluded GPU)
  std::vector<std::string> buses = n.gpus;
  for (const auto& f : n.findings) {
    if (!f.gpu.empty() && std::find(buses.begin(), buses.end(), f.gpu) == buses.end()) {
      buses.push_back(f.gpu);
    }
  }
  if (buses.empty()) {
    return fmt::format(R"h(<span class="c {}" title="{}, no GPU listed: {}"></span>)h",
                       n.verdict == "pass" ? "pass" : n.verdict, node,
                       n.primary_id.empty() ? std::string("ready") : html(n.primary_id));
  }
  std::string out;
  for (const auto& bus : buses) {
    std::string kind = node_kind;
    std::vector<std::string> what;
    for (const auto& f : n.findings) {
      if (f.gpu == bus && (f.severity == "fail" || f.severity == "warn")) {
        what.push_back(fmt::format("{} ({})", html(f.id), html(f.severity)));
        if (kind_rank(f.severity) < kind_rank(kind)) {
          kind = f.severity;
        }
      }
    }
    out += fmt::format(R"h(<span class="c {}" title="{} {}: {}"></span>)h", kind, node, html(bus),
                       what.empty() ? node_what : fmt::format("{}", fmt::join(what, ", ")));
  }
  return out;
}

std::string Fleet::to_html() const {
  std::size_t ready_count = 0;
  for (const auto& [key, n] : m_nodes) {
    ready_count += ready(n) ? 1 : 0;
  }
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>gpu-preflight fleet summary</title>\n<style>{}</style>\n</head>\n<body>\n"
      "<h1>gpu-preflight fleet summary</h1>\n"
      "<p>{} node{} from {} report{}; ready: {} of {}; not ready: {} ({} empty or cut short, {} "
      "unreadable, {} superseded)</p>\n"
      "<p>",
      k_html_style, m_nodes.size(), m_nodes.size() == 1 ? "" : "s", m_reports,
      m_reports == 1 ? "" : "s", ready_count, m_nodes.size(), m_nodes.size() - ready_count,
      m_no_report, m_unreadable_count, m_superseded_count);
  for (const std::string_view kind : {"pass", "warn", "fail", "none", "stale"}) {
    out += fmt::format(R"h(<span class="c {}"></span> {} &nbsp; )h", kind,
                       kind == "pass"   ? "ready"
                       : kind == "none" ? "no report"
                                        : kind);
  }
  out += "</p>\n";
  for (const auto& g : cause_groups(true)) {
    out += fmt::format("<section>\n<h2><span class=\"c {}\"></span> {}: {} node{}</h2>\n", g.kind,
                       group_title(g, html(g.id)), g.nodes.size(), g.nodes.size() == 1 ? "" : "s");
    out += "<div class=\"grid\">\n";
    for (const NodeRecord* n : g.nodes) {
      out += fmt::format("<div class=\"node\"><b>{}</b>{}</div>\n", html(n->name), html_cells(*n));
    }
    out += "</div>\n";
    if (g.kind == "pass") {
      out += "</section>\n";
      continue;
    }
    std::map<std::string, std::vector<std::string>> rows;
    std::vector<std::string> not_ready;
    for (const NodeRecord* n : g.nodes) {
      rows[detail(g, *n)].push_back(n->name);
      if (!ready(*n) && !n->hostless) { // a file's name is no node to drain
        not_ready.push_back(n->name);
      }
    }
    out += "<table>\n<tr><th></th><th>nodes (Slurm hostlist)</th></tr>\n";
    for (const auto& [what, names] : rows) {
      out += fmt::format("<tr><td>{}</td><td><code>{}</code></td></tr>\n",
                         what.empty() ? std::string("nodes") : html(what), html(hostlist(names)));
    }
    const std::string remedy = g.kind == "none"    ? std::string("Run the check again.")
                               : g.kind == "stale" ? std::string("Run the check again.")
                                                   : g.nodes.front()->remedy;
    if (!remedy.empty()) {
      out += fmt::format("<tr><td>remedy</td><td>{}</td></tr>\n", html(remedy));
    }
    if (!not_ready.empty()) {
      out += fmt::format(
          "<tr><td>drain</td><td><pre>scontrol update state=drain {} {}</pre></td></tr>\n",
          html(shell_word(fmt::format("nodename={}", hostlist(not_ready)))),
          html(shell_word("reason=" + drain_reason(g))));
    }
    out += "</table>\n</section>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

// A stream buffer over an input that keeps the text of the document being read. sax_parse reads
// an istream through its buffer one character at a time and stops after a document's last
// character, so what it consumed since mark() is exactly one document (with the white space
// before it). Text handed to replay() is read again before the rest of the input. At most
// k_document_cap bytes of a document are kept; a longer one is still read to its end.
class DocumentBuffer : public std::streambuf {
public:
  explicit DocumentBuffer(std::istream& in) : m_in(in), m_chunk(1 << 16, '\0') {}

  void mark() {
    m_doc.clear();
    m_over = false;
    m_eof = false;
    m_start = gptr();
  }
  // The text consumed since mark(); empty when it was longer than the cap.
  std::string take() {
    keep(gptr());
    m_start = gptr();
    return m_over ? std::string() : std::move(m_doc);
  }
  bool over() const { return m_over; }
  bool eof() const { return m_eof; }
  bool bad() const { return m_in.bad(); }
  void replay(std::string text) {
    keep(gptr());
    text.append(gptr(), egptr()); // what was read ahead and not consumed follows it
    m_replay = std::move(text);
    m_replaying = true;
    setg(m_replay.data(), m_replay.data(), m_replay.data() + m_replay.size());
    m_start = gptr();
  }
  // Consumes the input up to the next line that begins with "{" (a document that went wrong:
  // its rest is skipped, not read line by line as documents). The text skipped, at most the cap.
  // line_start: what was consumed last ended a line.
  std::string skip_to_document(bool line_start) {
    std::string skipped;
    for (int c = sgetc(); c != traits_type::eof(); c = snextc()) {
      if (line_start && c == '{') {
        break;
      }
      line_start = c == '\n';
      if (skipped.size() < k_document_cap) {
        skipped += static_cast<char>(c);
      }
    }
    m_start = gptr();
    return skipped;
  }

protected:
  int_type underflow() override {
    if (gptr() < egptr()) {
      return traits_type::to_int_type(*gptr());
    }
    keep(egptr());
    if (m_replaying) {
      m_replaying = false;
      m_replay.clear();
    }
    m_in.read(m_chunk.data(), static_cast<std::streamsize>(m_chunk.size()));
    const auto n = static_cast<std::size_t>(m_in.gcount());
    setg(m_chunk.data(), m_chunk.data(), m_chunk.data() + n);
    m_start = gptr();
    if (n == 0) {
      m_eof = true;
      return traits_type::eof();
    }
    return traits_type::to_int_type(*gptr());
  }

private:
  void keep(const char* end) {
    if (m_start == nullptr || end == nullptr || end <= m_start) {
      return;
    }
    const auto n = static_cast<std::size_t>(end - m_start);
    if (!m_over && m_doc.size() + n > k_document_cap) {
      m_over = true;
      m_doc.clear();
      m_doc.shrink_to_fit();
    }
    if (!m_over) {
      m_doc.append(m_start, n);
    }
    m_start = end;
  }

  std::istream& m_in;
  std::string m_chunk;
  std::string m_replay;
  bool m_replaying = false;
  std::string m_doc;
  const char* m_start = nullptr;
  bool m_over = false;
  bool m_eof = false;
};

// Accepts any JSON: only where a document ends, and whether it is one, matter.
class AnySax : public nlohmann::json_sax<nlohmann::json> {
public:
  bool null() override { return true; }
  bool boolean(bool /*v*/) override { return true; }
  bool number_integer(number_integer_t /*v*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*v*/) override { return true; }
  bool number_float(number_float_t /*v*/, const string_t& /*s*/) override { return true; }
  bool string(string_t& /*v*/) override { return true; }
  bool binary(binary_t& /*v*/) override { return true; }
  bool start_object(std::size_t /*n*/) override { return true; }
  bool key(string_t& /*k*/) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*n*/) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*e*/) override {
    return false;
  }
};

// Where a document that went wrong holds the start of the next one: a report's opening brace
// ("{" and its first member "schema_version", which check writes first and no nested object
// has), wherever the killed node's output stopped; else a line that begins with "{" (a JSON line,
// or a pretty report's top-level brace). Searched after the document's own first character;
// npos when none.
std::size_t next_document_start(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return std::string_view::npos;
  }
  for (auto at = text.find('{', first + 1); at != std::string_view::npos;
       at = text.find('{', at + 1)) {
    const auto member = text.find_first_not_of(" \t\r\n", at + 1);
    if (member != std::string_view::npos && text.substr(member, 16) == "\"schema_version\"") {
      return at;
    }
  }
  const auto line = text.find("\n{", first + 1);
  return line == std::string_view::npos ? line : line + 1;
}

// One input: a stream of JSON documents, as jq reads them: one report (or an array of them, as
// `jq -s` writes it), reports one after another (`cat reports/*.json`, `srun … --format json`),
// or JSON lines. A document is parsed by nlohmann's SAX parser, which stops at its end; a
// document that goes wrong (cut short by a killed check, a damaged line) is the input up to the
// next line that starts a document, and reading goes on from there. An input whose first document
// is no JSON at all is one damaged report. A source is the input's name when it holds one
// document, "name:line" for each of several.
void read_input(std::istream& in, const std::string& name, Fleet& fleet, bool file) {
  DocumentBuffer buffer(in);
  std::istream stream(&buffer);
  std::size_t line = 1;  // the line the next consumed text starts on
  std::size_t count = 0; // documents met
  std::optional<std::pair<std::string, std::size_t>> held; // the first document, until a second
  const auto source = [&](std::size_t at) { return fmt::format("{}:{}", name, at); };
  const auto release_held = [&] {
    if (held) {
      fleet.document(held->first, source(held->second));
      held.reset();
    }
  };
  // The line a document starts on, from its text (leading white space included).
  const auto start_line = [&](std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    return line +
           static_cast<std::size_t>(std::count(
               text.begin(),
               text.begin() + static_cast<std::ptrdiff_t>(std::min(first, text.size())), '\n'));
  };
  for (;;) {
    buffer.mark();
    AnySax sax;
    const bool ok =
        nlohmann::json::sax_parse(stream, &sax, nlohmann::json::input_format_t::json, false);
    const bool at_end = buffer.eof();
    const bool over = buffer.over();
    std::string text = buffer.take();
    stream.clear();
    if (buffer.bad()) {
      release_held();
      fleet.not_a_report();
      return fleet.unreadable(name, "read error");
    }
    if (!over && !ok && at_end && trim(text).empty()) { // nothing but white space left
      break;
    }
    ++count;
    if (over) {
      release_held();
      fleet.not_a_report();
      fleet.unreadable(count == 1 ? name : source(line),
                       fmt::format("a document longer than {} MiB", k_document_cap >> 20));
      if (!ok && !at_end) {
        const std::string skipped = buffer.skip_to_document(false);
        line += static_cast<std::size_t>(std::count(skipped.begin(), skipped.end(), '\n'));
      }
      if (!ok && at_end) {
        break;
      }
      continue;
    }
    const std::size_t at = start_line(text);
    if (ok) {
      line += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
      if (count == 1) {
        held.emplace(std::move(text), at);
      } else {
        release_held();
        fleet.document(text, source(at));
      }
      continue;
    }
    // It went wrong: up to the next document's start, or to the end of its line. A little of
    // what follows is read ahead, so that a report starting at the very character that went
    // wrong ("...,{" where a killed node's output stopped) is found; it is given back otherwise.
    std::size_t ahead = 0;
    if (!at_end) {
      std::string more(64, '\0');
      stream.read(more.data(), static_cast<std::streamsize>(more.size()));
      ahead = static_cast<std::size_t>(stream.gcount());
      stream.clear();
      text.append(more.data(), ahead);
    }
    const auto next = next_document_start(text);
    if (next == std::string::npos && ahead > 0) {
      buffer.replay(text.substr(text.size() - ahead));
      text.resize(text.size() - ahead);
    }
    if (next != std::string::npos) {
      buffer.replay(text.substr(next));
      text.resize(next);
    } else if (count == 1 && !at_end) {
      // the first document is no JSON at all: the input is one damaged report (or not ours),
      // named by its own parse error when it fits the cap
      const std::size_t rest = k_document_cap + 1 - std::min(text.size(), k_document_cap + 1);
      std::string more(rest, '\0');
      stream.read(more.data(), static_cast<std::streamsize>(more.size()));
      text.append(more.data(), static_cast<std::size_t>(stream.gcount()));
      if (text.size() > k_document_cap) {
        fleet.not_a_report();
        return fleet.unreadable(
            name, "not valid JSON (neither one report, reports one after another, nor JSON lines)");
      }
      return fleet.document(text, name);
    } else if (!at_end) {
      text += buffer.skip_to_document(!text.empty() && text.back() == '\n');
    }
    line += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    const bool only = count == 1 && at_end && next == std::string::npos;
    if (only && trim(text).empty()) {
      break;
    }
    release_held();
    fleet.document(text, only ? name : source(at));
    if (at_end && next == std::string::npos) {
      break;
    }
  }
  if (held) { // one document: the input's own name
    fleet.document(held->first, count == 1 ? name : source(held->second));
    held.reset();
  }
  if (count == 0) {
    fleet.not_a_report();
    // an empty file is a node whose check wrote nothing; empty standard input is no input
    return file ? fleet.no_report(name, "", "empty report") : fleet.unreadable(name, "empty");
  }
}

std::optional<std::int64_t> parse_age(const std::string& text) {
  if (text.empty()) {
    return std::nullopt;
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "s" ? 1
                       : unit == "m"               ? 60
                       : unit == "h"               ? 3600
                       : unit == "d"               ? 86400
                                                   : -1;
  if (scale < 0 || !std::isfinite(value) || value < 0 || value * scale > 1e12) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(value * scale);
}

bool is_report_file(const fs::path& p) {
  const auto ext = p.extension().string();
  return ext == ".json" || ext == ".jsonl" || ext == ".ndjson";
}

} // namespace

CLI::App* add_summarize_command(CLI::App& app, SummarizeOptions& o) {
  auto* cmd = app.add_subcommand(
      "summarize",
      "Summarise many nodes' JSON reports: verdicts, findings, spread, outliers (docs/fleet.md)");
  cmd->add_option(
         "paths", o.paths,
         "Report files, directories of them (*.json, *.jsonl), or - for standard input (the "
         "default): reports one after another, as srun or cat write them, or JSON lines")
      ->type_name("PATH");
  cmd->add_option("--format", o.format,
                  "Output format: text (default), json, or html (one self-contained page: the "
                  "fleet's GPUs coloured by state, grouped by cause)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "json", "html"}));
  cmd->add_option("--max-age", o.max_age,
                  "List reports older than this as stale (not ready): 90s, 30m, 24h, 7d")
      ->type_name("AGE")
      ->check(CLI::Validator(
          [](std::string& v) {
            return parse_age(v) ? std::string()
                                : "expected an age such as 3600, 30m, 24h or 7d, got \"" + v + "\"";
          },
          "AGE"));
  return cmd;
}

int run_summarize(const SummarizeOptions& o) {
  Fleet fleet(parse_age(o.max_age), std::chrono::duration_cast<std::chrono::seconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
  std::vector<std::string> paths = o.paths;
  if (paths.empty()) {
    paths.emplace_back("-");
  }
  const auto read_file = [&fleet](const std::string& path) {
    auto in = open_report_input(path);
    if (!in) {
      fleet.not_a_report();
      fleet.unreadable(path, in.error().message);
      return;
    }
    read_input(**in, path, fleet, true);
  };
  for (const auto& path : paths) {
    if (path == "-") {
      if (::isatty(STDIN_FILENO) == 1) { // not waiting silently for what nobody is typing
        std::cerr << "gpu-preflight: summarize: reading reports from the terminal; end with "
                     "Ctrl-D, or name report files (gpu-preflight summarize reports/)\n";
      }
      read_input(std::cin, "stdin", fleet, false);
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && is_report_file(it->path())) {
          files.push_back(it->path());
        }
      }
      if (ec) {
        fleet.not_a_report();
        fleet.unreadable(path, ec.message());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        read_file(f.string());
      }
      continue;
    }
    read_file(path);
  }
  fleet.finish();
  const std::string out =
      o.format == "json"
          ? fleet.to_json().dump(2, ' ', false, Json::error_handler_t::replace) + "\n"
      : o.format == "html" ? fleet.to_html()
                           : fleet.to_text(text_width(STDOUT_FILENO));
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    std::cerr << "gpu-preflight: error: cannot write the summary\n";
    return k_exit_error;
  }
  return fleet.exit_code();
}

} // namespace gpf
