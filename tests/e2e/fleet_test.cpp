// Fleet integrations end to end: the node-problem-detector plugin configurations in
// contrib/kubernetes and the binary's side of NPD's custom plugin protocol (exit 0 OK, 1 NonOK,
// 2+ Unknown; stdout cut at max_output_length), and --json-out, which the Slurm scripts rely on.
#include "gpf/report/report.hpp"
#include "support/run.hpp"
#include "support/schema.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpf::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string k_contrib = std::string(GPF_SOURCE_DIR) + "/contrib/kubernetes/";

// NPD durations as the shipped files write them ("45s", "5m"), in seconds; -1 for anything else.
int seconds(const std::string& d) {
  if (d.size() < 2 || d.find_first_not_of("0123456789") != d.size() - 1) {
    return -1;
  }
  const int n = std::stoi(d.substr(0, d.size() - 1));
  return d.back() == 's' ? n : d.back() == 'm' ? n * 60 : -1;
}

// The arguments the host configuration gives gpu-preflight.
std::vector<std::string> plugin_args() {
  return load_json_file(k_contrib + "npd-gpu-preflight.json")
      .at("rules")
      .at(0)
      .at("args")
      .get<std::vector<std::string>>();
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Two runs of one check differ only in timing: the probes' durations and, across a second
// boundary, checked_at.
json without_durations(json j) {
  j.erase("checked_at");
  for (auto& p : j.at("probes")) {
    p.erase("duration_ms");
  }
  return j;
}

} // namespace

TEST_CASE(
    "npd configs: a custom plugin whose permanent rule has a default condition and fits NPD's timeouts") {
  for (const auto* name : {"npd-gpu-preflight.json", "npd-gpu-preflight-pod.json"}) {
    INFO(name);
    const json c = load_json_file(k_contrib + name);
    CHECK(c.at("plugin") == "custom");
    CHECK(c.at("source") == "gpu-preflight");
    const auto& global = c.at("pluginConfig");
    CHECK(global.at("max_output_length").get<std::size_t>() >= gpf::k_line_max_bytes);
    const int global_timeout = seconds(global.at("timeout"));
    CHECK(seconds(global.at("invoke_interval")) > global_timeout);
    // GPUNotReady, then GPUPreflightWarning: the same check with --strict, so a WARN node's line
    // stays on a condition (NPD puts a condition's default message back when its rule exits 0).
    REQUIRE(c.at("rules").size() == 2);
    const auto first_args = c.at("rules").at(0).at("args").get<std::vector<std::string>>();
    auto strict_args = first_args;
    strict_args.push_back("--strict");
    CHECK(c.at("rules").at(1).at("args").get<std::vector<std::string>>() == strict_args);
    CHECK(c.at("rules").at(0).at("condition") != c.at("rules").at(1).at("condition"));
    for (const auto& rule : c.at("rules")) {
      CHECK(rule.at("type") == "permanent");
      bool has_default = false;
      for (const auto& cond : c.at("conditions")) {
        has_default = has_default || cond.at("type") == rule.at("condition");
      }
      CHECK(has_default);
      // NPD refuses a rule timeout above the global one; the CUDA deadline must end well before
      // NPD kills the plugin, so a hung driver is reported by gpu-preflight, not as a timeout.
      const int rule_timeout = seconds(rule.at("timeout"));
      CHECK(rule_timeout > 0);
      CHECK(rule_timeout <= global_timeout);
      const auto args = rule.at("args").get<std::vector<std::string>>();
      const auto cuda = std::find(args.begin(), args.end(), "--cuda-timeout");
      REQUIRE(cuda != args.end());
      REQUIRE(cuda + 1 != args.end());
      CHECK(std::stoi(*(cuda + 1)) + 10 <= rule_timeout);
    }
    // Both rules run one after the other (concurrency 1) within the interval.
    CHECK(global.at("concurrency") == 1);
  }
  // The pod variant runs the same command inside the host's root.
  const json host = load_json_file(k_contrib + "npd-gpu-preflight.json");
  const json pod = load_json_file(k_contrib + "npd-gpu-preflight-pod.json");
  REQUIRE(host.at("rules").size() == pod.at("rules").size());
  json host_rest = host;
  json pod_rest = pod;
  for (std::size_t i = 0; i < host.at("rules").size(); ++i) {
    const auto& host_rule = host.at("rules").at(i);
    CHECK(host_rule.at("path") == "/usr/bin/gpu-preflight");
    CHECK(pod.at("rules").at(i).at("path") == "/usr/sbin/chroot");
    auto expected = std::vector<std::string>{"/host", "/usr/bin/gpu-preflight"};
    for (const auto& a : host_rule.at("args").get<std::vector<std::string>>()) {
      expected.push_back(a);
    }
    CHECK(pod.at("rules").at(i).at("args").get<std::vector<std::string>>() == expected);
    host_rest["rules"][i].erase("path");
    host_rest["rules"][i].erase("args");
    pod_rest["rules"][i].erase("path");
    pod_rest["rules"][i].erase("args");
  }
  CHECK(host_rest == pod_rest);
}

TEST_CASE(
    "npd plugin contract: exit 0 or 1 and one line within 80 bytes on every fixture, 2 on checker errors") {
  int ok = 0;
  int non_ok = 0;
  for (const auto& name : sweep_fixtures()) {
    INFO(name);
    auto args = plugin_args();
    args.insert(args.end(), {"--root", fixture(name)});
    const auto r = run_preflight(args);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    (r.exit_code == 0 ? ok : non_ok) += 1;
    REQUIRE(!r.out.empty());
    CHECK(r.out.back() == '\n');
    CHECK(r.out.find('\n') == r.out.size() - 1);
    CHECK(r.out.size() - 1 <= gpf::k_line_max_bytes);
    // NonOK exactly when the JSON verdict is not ready.
    auto json_args = args; // the plugin's own options, printing JSON instead of the line
    const auto format = std::find(json_args.begin(), json_args.end(), "--format");
    REQUIRE(format + 1 < json_args.end());
    *(format + 1) = "json";
    const auto report = json::parse(run_preflight(json_args).out);
    CHECK(report.at("exit_code") == r.exit_code);
    CHECK((r.exit_code == 1) == (r.out.rfind("FAIL ", 0) == 0));
    // The warnings rule (--strict): NonOK on WARN too, with the same line as its message.
    auto strict_args = args;
    strict_args.push_back("--strict");
    const auto strict = run_preflight(strict_args);
    CHECK(strict.exit_code == (report.at("verdict") == "pass" ? 0 : 1));
    CHECK(strict.out == r.out);
  }
  CHECK(ok >= 2);
  CHECK(non_ok >= 2);

  // Unknown (2), never a CLI11 code in the 100s, and nothing on stdout to misread as a message.
  for (const auto& extra : std::vector<std::vector<std::string>>{{"--root", "/nonexistent/gpf"},
                                                                 {"--no-such-option"}}) {
    auto args = plugin_args();
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_preflight(args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
  }
}

TEST_CASE("json-out: writes the same report as --format json, whole, whatever the printed format") {
  TempDir t;
  const auto file = t.path / "report.json";
  const auto line = run_preflight(
      {"check", "--root", fixture("missing-uvm"), "--format", "line", "--json-out", file.string()});
  CHECK(line.exit_code == 1);
  CHECK(line.out == "FAIL devnode.nvidia-uvm-missing\n");
  const auto printed =
      run_preflight({"check", "--root", fixture("missing-uvm"), "--format", "json"});
  CHECK(without_durations(json::parse(slurp(file))) == without_durations(json::parse(printed.out)));
  CHECK((fs::status(file).permissions() & fs::perms::others_read) != fs::perms::none);

  // Replaced, not appended to; no temporary file left beside it.
  CHECK(run_preflight({"--root", fixture("healthy-4gpu"), "--json-out", file.string()}).exit_code ==
        0);
  CHECK(json::parse(slurp(file)).at("verdict") == "pass");
  CHECK(std::distance(fs::directory_iterator(t.path), fs::directory_iterator()) == 1);

  // exec writes it before refusing or starting the command.
  const auto exec_file = t.path / "exec.json";
  const auto refused = run_preflight(
      {"exec", "--root", fixture("missing-uvm"), "--json-out", exec_file.string(), "--", "true"});
  CHECK(refused.exit_code == 1);
  CHECK(json::parse(slurp(exec_file)).at("verdict") == "fail");
}

TEST_CASE(
    "json-out: a file that cannot be written is a checker error with the reason, and stdout stays empty") {
  const auto r = run_preflight({"--root", fixture("healthy-4gpu"), "--format", "line", "--json-out",
                                "/nonexistent/gpf/report.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(
      r.err ==
      "gpu-preflight: error: cannot write /nonexistent/gpf/report.json: No such file or directory\n");
}
