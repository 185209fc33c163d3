// `gpu-preflight diff A B`: what differs between two checks of a node (or of a node and a
// known-good one). Each side is a snapshot directory, judged here with the built-in rules, or a
// JSON report; both become the JSON report and are compared member by member: verdict, driver
// version and flavour, kernel, modules and driver parameters, the GPU list, device nodes, findings.
#include "gpf/fleet/fleet.hpp"
#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/report/report.hpp"
#include "gpf/rules/user_rules.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/util/exit_codes.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/report_file.hpp"
#include "gpf/util/text.hpp"
#include "gpf/version_info.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace gpf {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

constexpr std::size_t k_report_cap = 16u << 20; // as summarize: a report is tens of KiB

struct Change {
  std::string
      area; // "verdict", "driver", "kernel", "module", "parameter", "gpu", "device", "finding"
  std::string item; // what in the area ("version", a bus id, a path, a finding id)
  Json before;      // null: absent before (added)
  Json after;       // null: absent after (removed)
};

// The JSON report of one side, or why it cannot be had.
Result<Json> load_side(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    auto host = Host::snapshot(path);
    if (!host) {
      return Error{host.error().message};
    }
    if (host->absent("proc") && host->absent("sys") && host->absent("dev")) {
      return Error{path + ": not a snapshot (it holds none of proc/, sys/, dev/)"};
    }
    auto rules = RuleSet::load(builtin_rules(), {});
    if (!rules) {
      return Error{rules.error().message};
    }
    const ProbeOptions probe;
    const CheckOptions check;
    const Facts facts = collect_facts(*host, probe);
    const Assessment assessment = assess(facts, rules->rules(), check);
    RunInfo info;
    info.host_name = host->hostname();
    if (info.host_name && info.host_name->empty()) {
      info.host_name.reset();
    }
    const Report report{facts, assessment, exit_code_for(assessment.verdict, false), info};
    Json doc = Json::parse(render_json(report));
    // The side's time is when its data was gathered: the capture, not this diff's own check.
    doc["checked_at"] = Json();
    doc["captured"] = true;
    if (auto record = host->read_file("capture.json", 1 << 20);
        record && json_depth_within(record->data)) {
      const Json capture = Json::parse(record->data, nullptr, false);
      if (capture.is_object() && capture.contains("captured_at") &&
          capture["captured_at"].is_string()) {
        doc["checked_at"] = capture["captured_at"];
      }
    }
    return doc;
  }
  auto in = open_report_input(path);
  if (!in) {
    return Error{path + ": cannot open: " + in.error().message};
  }
  std::string text(k_report_cap + 1, '\0');
  (*in)->read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>((*in)->gcount()));
  if (text.size() > k_report_cap) {
    return Error{fmt::format("{}: larger than {} MiB, not a report", path, k_report_cap >> 20)};
  }
  if (!json_depth_within(text)) {
    return Error{path + ": not a gpu-preflight report (JSON nested too deep)"};
  }
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {
    return Error{path + ": not valid JSON: " + std::string(e.what())};
  }
  if (!doc.is_object() || !doc.contains("tool") || !doc["tool"].is_object() ||
      doc["tool"].value("name", Json()) != k_tool_name || !doc.contains("facts") ||
      !doc["facts"].is_object()) {
    return Error{path + ": not a gpu-preflight report (no tool.name \"gpu-preflight\" and facts)"};
  }
  return doc;
}

// The member at a JSON pointer, null when absent or of another shape.
Json at(const Json& doc, const std::string& pointer) {
  const Json::json_pointer p(pointer);
  try {
    return doc.contains(p) ? doc.at(p) : Json();
  } catch (const Json::exception&) {
    return Json();
  }
}

void compare(std::vector<Change>& out, const std::string& area, const std::string& item,
             const Json& before, const Json& after) {
  if (before != after) {
    out.push_back({area, item, before, after});
  }
}

// An array of objects as a map by one member (bus_id, path), to compare element by element.
std::map<std::string, Json> keyed(const Json& arr, const std::string& key) {
  std::map<std::string, Json> m;
  if (arr.is_array()) {
    for (const auto& e : arr) {
      if (e.is_object() && e.contains(key) && e[key].is_string()) {
        m[e[key].get<std::string>()] = e;
      }
    }
  }
  return m;
}

void compare_keyed(std::vector<Change>& out, const std::string& area, const Json& before,
                   const Json& after, const std::string& key) {
  const auto a = keyed(before, key);
  const auto b = keyed(after, key);
  std::set<std::string> keys;
  for (const auto& [k, v] : a) {
    keys.insert(k);
  }
  for (const auto& [k, v] : b) {
    keys.insert(k);
  }
  for (const auto& k : keys) {
    const auto ia = a.find(k);
    const auto ib = b.find(k);
    if (ia == a.end() || ib == b.end()) {
      compare(out, area, k, ia == a.end() ? Json() : ia->second,
              ib == b.end() ? Json() : ib->second);
      continue;
    }
    // the members that differ, each as its own change ("0000:3a:00.0 vbios")
    std::set<std::string> members;
    for (const auto& [m, v] : ia->second.items()) {
      members.insert(m);
    }
    for (const auto& [m, v] : ib->second.items()) {
      members.insert(m);
    }
    for (const auto& m : members) {
      compare(out, area, k + " " + m, ia->second.value(m, Json()), ib->second.value(m, Json()));
    }
  }
}

std::set<std::string> string_set(const Json& arr) {
  std::set<std::string> s;
  if (arr.is_array()) {
    for (const auto& e : arr) {
      if (e.is_string()) {
        s.insert(e.get<std::string>());
      }
    }
  }
  return s;
}

std::vector<Change> differences(const Json& a, const Json& b) {
  std::vector<Change> out;
  compare(out, "verdict", "verdict", at(a, "/verdict"), at(b, "/verdict"));
  compare(out, "verdict", "primary cause", at(a, "/primary_cause"), at(b, "/primary_cause"));
  compare(out, "verdict", "usable GPUs", at(a, "/usable_gpus"), at(b, "/usable_gpus"));
  compare(out, "driver", "version", at(a, "/facts/driver/version"), at(b, "/facts/driver/version"));
  compare(out, "driver", "flavour", at(a, "/facts/driver/flavour"), at(b, "/facts/driver/flavour"));
  compare(out, "driver", "loaded", at(a, "/facts/driver/loaded"), at(b, "/facts/driver/loaded"));
  compare(out, "driver", "CUDA version", at(a, "/facts/cuda/driver_cuda_version"),
          at(b, "/facts/cuda/driver_cuda_version"));
  compare(out, "kernel", "release", at(a, "/facts/kernel/release"), at(b, "/facts/kernel/release"));
  {
    const auto ma = string_set(at(a, "/facts/modules"));
    const auto mb = string_set(at(b, "/facts/modules"));
    for (const auto& m : ma) {
      if (!mb.count(m)) {
        out.push_back({"module", m, "loaded", Json()});
      }
    }
    for (const auto& m : mb) {
      if (!ma.count(m)) {
        out.push_back({"module", m, Json(), "loaded"});
      }
    }
  }
  compare_keyed(out, "module version", at(a, "/facts/compat/modules"),
                at(b, "/facts/compat/modules"), "name");
  {
    const Json pa = at(a, "/facts/driver/params");
    const Json pb = at(b, "/facts/driver/params");
    std::set<std::string> keys;
    for (const Json* p : {&pa, &pb}) {
      if (p->is_object()) {
        for (const auto& [k, v] : p->items()) {
          keys.insert(k);
        }
      }
    }
    for (const auto& k : keys) {
      compare(out, "parameter", k, pa.is_object() ? pa.value(k, Json()) : Json(),
              pb.is_object() ? pb.value(k, Json()) : Json());
    }
  }
  compare_keyed(out, "gpu", at(a, "/facts/gpus"), at(b, "/facts/gpus"), "bus_id");
  compare_keyed(out, "device", at(a, "/facts/devices"), at(b, "/facts/devices"), "path");
  {
    // findings by id and GPU; their severity is what is shown
    const auto index = [](const Json& arr) {
      std::map<std::string, Json> m;
      if (arr.is_array()) {
        for (const auto& f : arr) {
          if (f.is_object() && f.contains("id") && f["id"].is_string()) {
            const std::string gpu =
                f.contains("gpu") && f["gpu"].is_string() ? " " + f["gpu"].get<std::string>() : "";
            m[f["id"].get<std::string>() + gpu] = f.value("severity", Json());
          }
        }
      }
      return m;
    };
    const auto fa = index(at(a, "/findings"));
    const auto fb = index(at(b, "/findings"));
    for (const auto& [k, sev] : fa) {
      if (!fb.count(k)) {
        out.push_back({"finding", k, sev, Json()});
      }
    }
    for (const auto& [k, sev] : fb) {
      const auto it = fa.find(k);
      if (it == fa.end()) {
        out.push_back({"finding", k, Json(), sev});
      } else {
        compare(out, "finding", k, it->second, sev);
      }
    }
  }
  return out;
}

std::string shown(const Json& v) {
  // a GPU or a device node added or removed: the members that identify it
  if (v.is_object() && (v.contains("model") || v.contains("type"))) {
    std::vector<std::string> parts;
    for (const char* key : {"model", "uuid", "firmware", "vbios", "type", "mode"}) {
      if (v.contains(key) && v[key].is_string()) {
        parts.push_back(v[key].get<std::string>());
      }
    }
    return printable(fmt::format("{}", fmt::join(parts, ", ")));
  }
  // a primary cause: its id and GPU
  if (v.is_object() && v.contains("id") && v["id"].is_string()) {
    const Json gpu = v.value("gpu", Json());
    return printable(v["id"].get<std::string>() +
                     (gpu.is_string() ? " " + gpu.get<std::string>() : std::string()));
  }
  if (v.is_null()) {
    return "(none)";
  }
  if (v.is_string()) {
    return printable(v.get<std::string>().empty() ? std::string("\"\"") : v.get<std::string>());
  }
  return printable(v.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string side_label(const std::string& path, const Json& doc) {
  const Json host = at(doc, "/host");
  const Json when = at(doc, "/checked_at");
  std::string s = printable(path);
  std::vector<std::string> about;
  if (host.is_string()) {
    about.push_back(printable(host.get<std::string>()));
  }
  const bool captured = doc.is_object() && doc.value("captured", false);
  if (when.is_string()) {
    about.push_back((captured ? "captured " : "checked ") + printable(when.get<std::string>()));
  } else if (captured) {
    about.push_back("capture time not recorded");
  }
  if (!about.empty()) {
    s += fmt::format(" ({})", fmt::join(about, ", "));
  }
  return s;
}

} // namespace

CLI::App* add_diff_command(CLI::App& app, DiffOptions& o) {
  auto* cmd = app.add_subcommand(
      "diff", "What changed between two snapshots or JSON reports of a node (docs/fleet.md)");
  cmd->add_option("before", o.before, "The earlier (or known-good) snapshot DIR or report FILE")
      ->type_name("A")
      ->required();
  cmd->add_option("after", o.after, "The later snapshot DIR or report FILE")
      ->type_name("B")
      ->required();
  cmd->add_option("--format", o.format, "Output format: text (default) or json")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "json"}));
  return cmd;
}

int run_diff(const DiffOptions& o) {
  auto a = load_side(o.before);
  auto b = load_side(o.after);
  for (const auto* side : {&a, &b}) {
    if (!*side) {
      std::cerr << "gpu-preflight: error: diff: " << printable(side->error().message) << "\n";
      return k_exit_error;
    }
  }
  const auto changes = differences(*a, *b);
  std::string out;
  if (o.format == "json") {
    OJson j;
    j["tool"] = OJson{{"name", k_tool_name}, {"version", k_tool_version}};
    j["before"] = OJson{{"source", json_text(o.before)},
                        {"host", at(*a, "/host")},
                        {"checked_at", at(*a, "/checked_at")},
                        {"verdict", at(*a, "/verdict")}};
    j["after"] = OJson{{"source", json_text(o.after)},
                       {"host", at(*b, "/host")},
                       {"checked_at", at(*b, "/checked_at")},
                       {"verdict", at(*b, "/verdict")}};
    OJson list = OJson::array();
    for (const auto& c : changes) {
      list.push_back(OJson{
          {"area", c.area}, {"item", json_text(c.item)}, {"before", c.before}, {"after", c.after}});
    }
    j["changes"] = std::move(list);
    out = j.dump(2, ' ', false, OJson::error_handler_t::replace) + "\n";
  } else {
    out = fmt::format("gpu-preflight diff\n  A: {}\n  B: {}\n", side_label(o.before, *a),
                      side_label(o.after, *b));
    if (changes.empty()) {
      out += "no differences in verdict, driver, kernel, modules, parameters, GPUs, device nodes "
             "or findings\n";
    }
    std::string area;
    for (const auto& c : changes) {
      if (c.area != area) {
        area = c.area;
        out += area + "\n";
      }
      const std::string mark = c.before.is_null() ? "+ " : c.after.is_null() ? "- " : "  ";
      const std::string value = c.before.is_null()  ? shown(c.after)
                                : c.after.is_null() ? shown(c.before)
                                                    : shown(c.before) + " -> " + shown(c.after);
      out += fmt::format("  {}{}: {}\n", mark, printable(c.item), value);
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    std::cerr << "gpu-preflight: error: cannot write the diff\n";
    return k_exit_error;
  }
  return changes.empty() ? k_exit_ready : k_exit_not_ready;
}

} // namespace gpf
