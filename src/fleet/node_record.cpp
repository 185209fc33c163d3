// A node's record from its report: the members summarize reads, checked, into a NodeRecord.
#include "fleet/node_record.hpp"

#include "gpf/facts/cuda_facts.hpp"
#include "gpf/util/json_read.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/robust.hpp"
#include "gpf/util/text.hpp"
#include "gpf/version_info.hpp"

#include <fmt/format.h>

#include <ctime>

namespace gpf::fleet {
namespace {

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

} // namespace

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

CutText cut_short(std::string_view body) {
  CutReport cut(body.size());
  nlohmann::json::sax_parse(body, &cut);
  return {cut.cut(), cut.host()};
}

} // namespace gpf::fleet
