// User rules (RuleSet::build): good files add and override rows and change outcomes; bad files are
// refused with the file, the position and what is wrong.
#include "gpf/probes/parsers.hpp"
#include "gpf/rules/user_rules.hpp"
#include "gpf/rules/verdict.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace gpf;

namespace {

Facts sample_host() {
  Facts f;
  f.kernel = parse_kernel_release("5.15.0-91-generic");
  f.driver.loaded = true;
  f.driver.version = Version::parse("470.82.01");
  f.driver.version_text = "470.82.01";
  f.driver.version_line =
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.82.01  Wed Oct 27 04:09:04 UTC 2021";
  f.driver.flavour = DriverFlavour::proprietary;
  for (const char* bus : {"0000:07:00.0", "0000:0f:00.0"}) {
    GpuFacts g;
    g.bus_id = bus;
    g.model = std::string(bus) == "0000:07:00.0" ? "NVIDIA A100-SXM4-80GB" : "Tesla T4";
    f.gpus.push_back(g);
  }
  f.modules = parse_modules("nvidia 1 0 - Live\nnvidia_uvm 1 0 - Live\n");
  for (const char* node : {"dev/nvidiactl", "dev/nvidia-uvm"}) {
    NodeInfo info;
    info.type = NodeType::regular_file;
    info.stand_in = true;
    f.devices.push_back({node, info});
  }
  f.env = Environment(std::map<std::string, std::string>{{"NCCL_P2P_DISABLE", "1"}});
  return f;
}

RuleSet build(const std::string& text, RuleOverrides o = {}) {
  o.rules_file = "site.json";
  auto set = RuleSet::build(builtin_rules(), o, text);
  if (!set) {
    FAIL(set.error().message);
  }
  return std::move(set).value();
}

std::string build_error(const std::string& text, RuleOverrides o = {}) {
  o.rules_file = "site.json";
  auto set = RuleSet::build(builtin_rules(), o, text);
  REQUIRE_FALSE(set);
  return set.error().message;
}

std::vector<Finding> findings(const RuleSet& set, const Facts& f, const std::string& id,
                              CheckOptions options = {}) {
  const auto a = assess(f, set.rules(), options);
  std::vector<Finding> out;
  std::copy_if(a.findings.begin(), a.findings.end(), std::back_inserter(out),
               [&](const Finding& x) { return x.id == id; });
  return out;
}

} // namespace

TEST_CASE("a site rule on the driver version, with a two-part minimum") {
  const auto set = build(R"({"schema": 1, "rules": [{"id": "site.driver-min", "severity": "fail",
      "check": {"fact": "driver.version", "min": "535"}, "remedy": "Install R535 or newer", "source": "KB-1"}]})");
  REQUIRE(set.find("site.driver-min"));
  CHECK(set.rules().size() == builtin_rules().size() + 1);
  auto f = sample_host();
  auto hits = findings(set, f, "site.driver-min");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].severity == Severity::fail);
  CHECK(
      hits[0].message ==
      "Site rule site.driver-min: driver.version fails driver.version >= 535: 470.82.01 is below 535");
  CHECK(hits[0].evidence[0].find("470.82.01") != std::string::npos);
  CHECK(hits[0].remedy == "Install R535 or newer");
  f.driver.version = Version::parse("535.0");
  CHECK(findings(set, f, "site.driver-min").empty()); // exactly at the minimum
  f.driver.version = Version::parse("534.999.99");
  CHECK(findings(set, f, "site.driver-min").size() == 1);
  f.driver.version.reset(); // unknown: not a pass, at most a warning
  hits = findings(set, f, "site.driver-min");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].severity == Severity::warn);
  CHECK(hits[0].message.find("could not be confirmed") != std::string::npos);
}

TEST_CASE("a site rule requiring eight usable GPUs is judged on the recommendation") {
  const auto set = build(R"({"rules": [{"id": "site.eight-gpus", "severity": "fail",
      "check": {"fact": "gpus.usable", "min": 8}, "remedy": "Drain the node"}]})");
  CHECK(set.find("site.eight-gpus")->stage == Stage::summary);
  const auto hits = findings(set, sample_host(), "site.eight-gpus");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("2 is below 8") != std::string::npos);
  CHECK(hits[0].evidence[0] == "usable and recommended GPUs: 2 (0000:07:00.0, 0000:0f:00.0)");
}

TEST_CASE("a per-GPU model rule drops the GPUs that fail it") {
  const auto set = build(R"({"rules": [{"id": "site.h100-only", "severity": "fail",
      "check": {"fact": "gpu.model", "matches": "A100|H100"}, "remedy": "Only A100/H100 here"}]})");
  const auto a = assess(sample_host(), set.rules(), CheckOptions{});
  for (const auto& f : a.findings) {
    UNSCOPED_INFO(f.id << ": " << f.message);
  }
  CHECK(a.verdict == Verdict::warn);
  CHECK(a.recommendation.cuda_visible_devices == "0");
  REQUIRE(a.gpus.size() == 2);
  CHECK(a.gpus[1].reasons == std::vector<std::string>{"site.h100-only"});
}

TEST_CASE("module, environment and flavour checks") {
  const auto set = build(R"({"rules": [
      {"id": "site.peermem", "severity": "warn", "check": {"fact": "modules.loaded", "contains": "nvidia_peermem"}, "remedy": "modprobe nvidia_peermem"},
      {"id": "site.no-p2p-disable", "severity": "warn", "check": {"fact": "env.NCCL_P2P_DISABLE", "present": false}, "remedy": "unset it"},
      {"id": "site.open", "severity": "info", "check": {"fact": "driver.flavour", "one_of": ["open"]}, "remedy": "use open"},
      {"id": "site.uvm", "severity": "fail", "check": {"fact": "modules.loaded", "contains": ["nvidia_uvm"], "excludes": "nouveau"}, "remedy": "x"}]})");
  const auto f = sample_host();
  CHECK(findings(set, f, "site.peermem")[0].message.find("nvidia_peermem is not loaded") !=
        std::string::npos);
  CHECK(findings(set, f, "site.no-p2p-disable")[0].evidence[0] == "NCCL_P2P_DISABLE=1");
  CHECK(findings(set, f, "site.open")[0].message.find("\"proprietary\" is not one of open") !=
        std::string::npos);
  CHECK(findings(set, f, "site.uvm").empty());
}

TEST_CASE("a row with a built-in id overrides it - disable and severity apply") {
  auto set = build(
      R"({"rules": [{"id": "cuda.driver-too-old", "severity": "warn", "remedy": "Site: open a ticket"}],
      "disable": ["driver.end-of-life"], "severity": {"cuda.minor-version-compat": "fail"}})");
  CHECK(set.rules().size() == builtin_rules().size() - 1);
  CHECK_FALSE(set.find("driver.end-of-life"));
  const Rule* r = set.find("cuda.driver-too-old");
  CHECK(r->severity == Severity::warn);
  CHECK(r->remedy == "Site: open a ticket");
  CHECK(r->title == find_rule("cuda.driver-too-old")->title); // the rest stays
  CHECK(set.find("cuda.minor-version-compat")->severity == Severity::fail);

  auto f = sample_host();
  f.compat.ran = true;
  f.compat.expected_cuda = ExpectedCuda{*Version::parse("12.1"), "12.1", "--expect-cuda"};
  const auto hits = findings(set, f, "cuda.driver-too-old");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].severity == Severity::warn);
  CHECK(hits[0].remedy == "Site: open a ticket");

  RuleOverrides cli;
  cli.disable = {"cuda.driver-too-old"};
  cli.severity = {"driver.end-of-life=fail"};
  set = build("{}", cli);
  CHECK_FALSE(set.find("cuda.driver-too-old"));
  CHECK(set.find("driver.end-of-life")->severity == Severity::fail);
}

TEST_CASE("bad rules files name the file, the position and the problem") {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"{\n  \"rules\": [\n    {\"id\": \"site.x\",}\n  ]\n}", "site.json:3:21: syntax error"},
      {"", "site.json:1:1: syntax error"},
      {"[]", "site.json: /: the rules file must be a JSON object"},
      {R"({"rulez": []})", "site.json: /rulez: unknown member"},
      {R"({"schema": 2})", "site.json: /schema: must be 1"},
      {R"({"rules": {}})", "site.json: /rules: must be an array"},
      {R"({"rules": [{"severity": "fail"}]})", "site.json: /rules/0: missing \"id\""},
      {R"({"rules": [{"id": "Site Driver", "severity": "fail", "check": {"fact": "driver.version", "min": "1"}, "remedy": "x"}]})",
       "site.json: /rules/0/id: \"Site Driver\" is not a rule id"},
      {R"({"rules": [{"id": "site.a", "severity": "fatal", "check": {"fact": "driver.version", "min": "1"}, "remedy": "x"}]})",
       "site.json: /rules/0/severity: \"fatal\" is not one of info, warn, fail"},
      {R"({"rules": [{"id": "site.a", "severity": "fail", "check": {"fact": "driver.version", "min": "1"}}]})",
       "site.json: /rules/0: a new rule needs \"remedy\""},
      {R"({"rules": [{"id": "site.a", "severity": "fail", "check": {"fact": "driver.versoin", "min": "1"}, "remedy": "x"}]})",
       "site.json: /rules/0/check/fact: unknown fact \"driver.versoin\""},
      {R"({"rules": [{"id": "site.a", "severity": "fail", "check": {"fact": "driver.version", "min": "5x5"}, "remedy": "x"}]})",
       "site.json: /rules/0/check/min: \"5x5\" is not a version or a number"},
      {R"({"rules": [{"id": "site.a", "severity": "fail", "check": {"fact": "driver.version", "matches": "5"}, "remedy": "x"}]})",
       "site.json: /rules/0/check/matches: \"matches\" cannot be used with fact driver.version"},
      {R"({"rules": [{"id": "site.a", "severity": "fail", "check": {"fact": "gpu.model", "matches": "A100||H100"}, "remedy": "x"}]})",
       "site.json: /rules/0/check/matches: not a valid pattern (docs/user-rules.md): at byte 6: an empty alternative"},
      {R"({"rules": [{"id": "site.a", "severity": "fail", "check": {"fact": "gpu.model", "matches": "H100\\"}, "remedy": "x"}]})",
       "site.json: /rules/0/check/matches: not a valid pattern (docs/user-rules.md): at byte 5: a '\\' with nothing after it"},
      {R"({"rules": [{"id": "site.a", "severity": "fail", "check": {"fact": "gpu.model"}, "remedy": "x"}]})",
       "site.json: /rules/0/check: needs a condition"},
      {R"({"rules": [{"id": "site.a", "severity": "info", "check": {"fact": "gpus.total", "min": 1}, "remedy": "x", "sevrity": "x"}]})",
       "site.json: /rules/0/sevrity: unknown field"},
      {R"({"rules": [{"id": "site.a", "severity": "info", "check": {"fact": "gpus.total", "min": 1}, "remedy": "x"},
                      {"id": "site.a", "severity": "info", "check": {"fact": "gpus.total", "min": 1}, "remedy": "x"}]})",
       "site.json: /rules/1/id: \"site.a\" appears twice"},
      {R"({"disable": ["kernel.below-5.5"]})",
       "site.json: /disable/0: no rule \"kernel.below-5.5\""},
      {R"({"severity": {"driver.end-of-life": "loud"}})",
       "site.json: /severity/driver.end-of-life: \"loud\" is not one of"},
      {"{\"rules\": [{\"id\": \"site.\xff\"}]}",
       "site.json:1:"}, // invalid UTF-8 is a syntax error, not a crash
      // a number too large for a double: nlohmann's out_of_range, found by the fuzzer (a crash)
      {R"({"rules": 9999999999E99999})", "site.json: number overflow parsing '9999999999E99999'"},
      {R"({"rules": [{"id": "site.a", "severity": "info", "check": {"fact": "gpus.total", "min": -1E400}, "remedy": "x"}]})",
       "site.json: number overflow parsing '-1E400'"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    CHECK_THAT(build_error(c.text), Catch::StartsWith(c.error));
  }
  RuleOverrides cli;
  cli.severity = {"driver.end-of-life"};
  CHECK_THAT(build_error("{}", cli), Catch::Contains("expected ID=info|warn|fail"));
  cli.severity = {"nope.rule=warn"};
  CHECK_THAT(build_error("{}", cli),
             Catch::Contains("--severity nope.rule=warn: no rule \"nope.rule\""));
}

TEST_CASE("a rules file that cannot be read is an error naming it") {
  RuleOverrides o;
  o.rules_file = "/nonexistent/gpf/site.json";
  auto set = RuleSet::load(builtin_rules(), o);
  REQUIRE_FALSE(set);
  CHECK(set.error().message == "/nonexistent/gpf/site.json: cannot open the rules file");
}
