// The JSON report (docs/json-output.md, docs/report.schema.json). ordered_json keeps key order
// stable; every string from the host passes through to_valid_utf8.
#include "gpf/facts/cuda_json.hpp"
#include "gpf/facts/nvml_json.hpp"
#include "gpf/knowledge/data_age.hpp"
#include "gpf/report/compat_json.hpp"
#include "gpf/report/log_json.hpp"
#include "gpf/report/report.hpp"
#include "gpf/report/topology_json.hpp"
#include "gpf/util/clock.hpp"
#include "gpf/util/enum_names.hpp"
#include "gpf/util/json_fields.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"
#include "gpf/version_info.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

namespace gpf {
namespace {
using Json = nlohmann::ordered_json;

std::string u8(std::string_view s) {
  return json_text(s);
}

constexpr auto k_probe_state_names = enum_names<ProbeState::error>({"ok", "skipped", "error"});
constexpr auto k_flavour_names = enum_names<KernelFlavour::unknown>(
    {"generic", "ubuntu", "debian", "rhel", "amazon", "suse", "wsl2", "gvisor", "unknown"});

std::string_view probe_state_name(ProbeState s) {
  return k_probe_state_names(s);
}

std::string_view flavour_name(KernelFlavour f) {
  return k_flavour_names(f);
}

std::string_view node_type_name(const NodeInfo& info) {
  return info.stand_in ? "stand-in" : node_type_word(info.type);
}

template <class T> Json opt(const std::optional<T>& v) {
  return json_opt(v);
}

Json kernel_json(const KernelFacts& k) {
  Json j;
  j["release"] = u8(k.release);
  j["version"] = k.version ? Json(k.version->str()) : Json(nullptr);
  j["flavour"] = flavour_name(k.flavour);
  j["flavour_detail"] = u8(k.flavour_detail);
  return j;
}

Json driver_json(const DriverFacts& d) {
  Json j;
  j["loaded"] = d.loaded;
  j["version"] = d.version ? Json(u8(d.version_text)) : Json(nullptr);
  j["version_source"] = u8(d.version_source);
  j["flavour"] = d.flavour == DriverFlavour::open          ? "open"
                 : d.flavour == DriverFlavour::proprietary ? "proprietary"
                                                           : "unknown";
  j["enable_gpu_firmware"] = opt(d.enable_gpu_firmware);
  Json params = Json::object();
  for (const auto& [k, v] : d.params) {
    params[u8(k)] = u8(v);
  }
  j["params"] = std::move(params);
  if (d.registry) {
    Json keys = Json::array();
    for (const auto& k : d.registry->binary_keys) {
      keys.push_back(u8(k));
    }
    j["registry"] = Json{{"raw", u8(d.registry->raw)}, {"binary_keys", std::move(keys)}};
  } else {
    j["registry"] = nullptr;
  }
  return j;
}

Json devices_json(const std::vector<DeviceNodeFact>& devices) {
  Json arr = Json::array();
  for (const auto& d : devices) {
    Json j;
    j["path"] = fmt::format("/{}", u8(d.path));
    j["type"] = node_type_name(d.info);
    j["major"] = opt(d.info.major);
    j["minor"] = opt(d.info.minor);
    j["mode"] = d.info.mode ? Json(fmt::format("{:04o}", *d.info.mode)) : Json(nullptr);
    j["rw_access"] = opt(d.info.rw_access);
    arr.push_back(std::move(j));
  }
  return arr;
}

// Writes the facts blocks that describe themselves (Facts::blocks): each block's struct has the
// one field list (json_fields::List) that writes its JSON and reads it back, as cuda.json's and
// nvml.json's structs do.
struct FieldWriter {
  Json& out;
  template <json_fields::Listed T> void operator()(std::string_view key, const T& value) {
    out[std::string(key)] = json_fields::to_json(value);
  }
};

} // namespace

Json facts_json(const Facts& facts) {
  Json j;
  j["kernel"] = kernel_json(facts.kernel);
  j["driver"] = driver_json(facts.driver);
  Json gpus = Json::array();
  for (const auto& g : facts.gpus) {
    Json gj;
    gj["bus_id"] = g.bus_id;
    gj["model"] = opt(g.model);
    gj["uuid"] = opt(g.uuid);
    gj["device_minor"] = opt(g.device_minor);
    gj["excluded"] = opt(g.excluded);
    gj["vbios"] = opt(g.vbios);
    gj["firmware"] = opt(g.firmware);
    gpus.push_back(std::move(gj));
  }
  j["gpus"] = std::move(gpus);
  j["devices"] = devices_json(facts.devices);
  Json modules = Json::array();
  for (const auto& m : facts.modules.loaded) {
    if (m.rfind("nvidia", 0) == 0 || m == "nouveau") {
      modules.push_back(u8(m));
    }
  }
  j["modules"] = std::move(modules);
  j["log"] = log_facts_json(facts.log);
  j["compat"] = compat_json(facts.compat);
  j["topology"] = topology_json(facts.topology);
  j["cuda"] = cuda_facts_json(facts.cuda);
  if (facts.nvml.ran) {
    j["nvml"] = nvml_facts_json(facts.nvml);
  }
  FieldWriter blocks{j};
  facts.blocks(blocks);
  return j;
}

Json report_json(const Report& r) {
  const Assessment& a = r.assessment;
  Json j;
  j["schema_version"] = k_schema_version;
  j["tool"] = Json{{"name", k_tool_name},
                   {"version", k_tool_version},
                   {"knowledge_as_of", std::string(data_age().as_of)}};
  j["host"] = r.run.host_name ? Json(u8(*r.run.host_name)) : Json(nullptr);
  j["checked_at"] = rfc3339_utc(r.run.checked_at);
  Json disabled = Json::array();
  for (const auto& id : r.run.disabled_rules) {
    disabled.push_back(u8(id));
  }
  j["options"] =
      Json{{"min_gpus", r.run.min_gpus},
           {"strict", r.run.strict},
           {"expect_cuda", r.run.expect_cuda ? Json(u8(*r.run.expect_cuda)) : Json(nullptr)},
           {"disabled_rules", std::move(disabled)}};
  j["verdict"] = verdict_name(a.verdict);
  j["exit_code"] = r.exit_code;
  j["cuda_visible_devices"] = a.recommendation.cuda_visible_devices;
  if (a.recommendation.cuda_device_order) {
    j["cuda_device_order"] = *a.recommendation.cuda_device_order;
  }
  j["usable_gpus"] = a.usable_count();
  j["total_gpus"] = static_cast<int>(a.gpus.size());
  // What the job gets: fewer than usable_gpus when one GPU is kept or the job's own
  // CUDA_VISIBLE_DEVICES chose; MIG instances when it names them.
  j["recommended_gpus"] = a.recommendation.devices;
  j["recommendation"] = Json{{"devices", a.recommendation.devices},
                             {"mig", a.recommendation.mig},
                             {"single_gpu_only", a.recommendation.single_gpu_only()},
                             {"chosen_by", opt(a.recommendation.chosen_by)},
                             {"summary", verdict_headline(a)}};
  if (const Finding* primary = a.primary_cause()) {
    // where: the part of the node that causes it when that is no GPU (an ACS port)
    j["primary_cause"] =
        Json{{"id", primary->id},
             {"gpu", opt(primary->gpu)},
             {"where", primary->where.empty() ? Json(nullptr) : Json(primary->where)}};
  } else {
    j["primary_cause"] = nullptr;
  }
  Json findings = Json::array();
  for (const auto& f : a.findings) {
    Json fj;
    fj["id"] = f.id;
    fj["severity"] = severity_name(f.severity);
    fj["message"] = u8(f.message);
    Json ev = Json::array();
    for (const auto& e : f.evidence) {
      ev.push_back(quote_evidence(e, 1024));
    }
    fj["evidence"] = std::move(ev);
    fj["remedy"] = u8(f.remedy);
    if (f.gpu) {
      fj["gpu"] = *f.gpu;
    }
    findings.push_back(std::move(fj));
  }
  j["findings"] = std::move(findings);
  // Rules not checked (Assessment::not_checked), counted by the probe not read: the ids are
  // `gpu-preflight rules --format json`'s rows whose "reads" names it.
  j["rules_not_checked"] = rules_not_checked_by_probe(a);
  Json gpus = Json::array();
  for (const auto& g : a.gpus) {
    Json gj;
    gj["index"] = opt(g.index);
    gj["bus_id"] = g.bus_id;
    gj["uuid"] = opt(g.uuid);
    gj["model"] = opt(g.model);
    gj["usable"] = g.usable;
    gj["recommended"] = g.recommended;
    gj["reasons"] = g.reasons;
    if (const auto* health = r.facts.nvml.gpu_by_bus(g.bus_id)) {
      gj["health"] = nvml_gpu_json(*health); // what NVML said about this GPU
    }
    gpus.push_back(std::move(gj));
  }
  j["gpus"] = std::move(gpus);
  Json probes = Json::array();
  for (const auto& p : r.facts.probes) {
    Json pj;
    pj["name"] = p.name;
    pj["status"] = probe_state_name(p.state);
    pj["duration_ms"] = p.duration_ms;
    if (!p.message.empty()) {
      pj["message"] = u8(p.message);
    }
    if (!p.cut.empty()) {
      Json cut = Json::array();
      for (const auto& c : p.cut) {
        cut.push_back(u8(c));
      }
      pj["cut"] = std::move(cut);
    }
    probes.push_back(std::move(pj));
  }
  j["probes"] = std::move(probes);
  j["facts"] = facts_json(r.facts);
  return j;
}

namespace {
// nlohmann's serializer writing straight into a stdio stream.
class FileOut : public nlohmann::detail::output_adapter_protocol<char> {
public:
  explicit FileOut(std::FILE* f) : m_f(f) {}
  void write_character(char c) override { std::fputc(c, m_f); }
  void write_characters(const char* s, std::size_t n) override { std::fwrite(s, 1, n, m_f); }

private:
  std::FILE* m_f;
};
} // namespace

void write_json(const Report& r, std::FILE* out) {
  nlohmann::detail::serializer<nlohmann::ordered_json> s(
      std::make_shared<FileOut>(out), ' ', nlohmann::ordered_json::error_handler_t::replace);
  s.dump(report_json(r), true, false, 2);
  std::fputc('\n', out);
}

std::string render_json(const Report& r) {
  // The document is freed before the text is returned, and the newline is appended in place: a
  // report of thousands of GPUs is held once, not three times.
  std::string text =
      report_json(r).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  text += '\n';
  return text;
}

} // namespace gpf
