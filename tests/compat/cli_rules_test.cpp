// End-to-end tests of the binary: `rules`, `explain`, --rules/--disable/--severity/--expect-cuda,
// and the staleness of the checked-in docs/rules.md.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>

using gpf::test::fixture;
using gpf::test::run_preflight;
using gpf::test::TempFile;

namespace {

std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(GPF_SOURCE_DIR) + "/" + rel);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST_CASE(
    "e2e: `rules --format json` lists every rule with id, severity, what it checks and source") {
  const auto r = run_preflight({"rules", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  std::set<std::string> ids;
  for (const auto& rule : doc.at("rules")) {
    ids.insert(rule.at("id").get<std::string>());
    CHECK_FALSE(rule.at("checks").get<std::string>().empty());
    CHECK_FALSE(rule.at("source").get<std::string>().empty());
    CHECK_FALSE(rule.at("remedy").get<std::string>().empty());
    CHECK(std::set<std::string>{"info", "warn", "fail"}.count(
              rule.at("severity").get<std::string>()) == 1);
  }
  for (const char* id : {"cuda.driver-too-old", "cuda.minor-version-compat",
                         "gpu.cuda-arch-unsupported", "driver.library-version-mismatch",
                         "driver.libcuda-stub-first", "kernel.below-5.5-multi-gpu"}) {
    CHECK(ids.count(id) == 1);
  }
}

TEST_CASE("e2e: `rules` as text, and with a site rules file applied") {
  auto r = run_preflight({"rules"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("cuda.driver-too-old") != std::string::npos);
  CHECK(r.out.find("source: https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html") !=
        std::string::npos);
  const TempFile site(
      R"({"rules": [{"id": "site.driver-min", "severity": "fail", "check": {"fact": "driver.version", "min": "535"},
      "remedy": "Install R535", "source": "KB-1"}], "disable": ["driver.end-of-life"]})");
  r = run_preflight({"--rules", site.path.string(), "rules"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("site.driver-min") != std::string::npos);
  CHECK(r.out.find("driver.end-of-life") == std::string::npos);
  CHECK(run_preflight({"rules", "--format", "yaml"}).exit_code == 2);
}

TEST_CASE("e2e: `rules` fits the terminal: a table where titles fit, wrapped lines where not") {
  const auto narrow = run_preflight({"rules"}, {{"COLUMNS", "80"}});
  REQUIRE(narrow.exit_code == 0);
  std::size_t start = 0;
  for (auto nl = narrow.out.find('\n'); nl != std::string::npos;
       nl = narrow.out.find('\n', start)) {
    const auto line = narrow.out.substr(start, nl - start);
    start = nl + 1;
    // only a word that cannot be broken (a URL) may stand out
    if (line.size() > 80) {
      INFO(line);
      CHECK(line.find(' ', line.find_first_not_of(' ')) == std::string::npos);
      CHECK(line.find("://") != std::string::npos);
    }
  }
  CHECK(narrow.out.find("\ncuda.driver-too-old  fail\n    ") != std::string::npos);
  const auto wide = run_preflight({"rules"}, {{"COLUMNS", "250"}});
  CHECK(wide.out.rfind("ID ", 0) == 0);
  CHECK(wide.out.find("WHAT IT CHECKS") != std::string::npos);
}

TEST_CASE(
    "e2e: `explain ID` prints meaning, evidence, remedy and sources - an unknown id exits 2") {
  auto r = run_preflight({"explain", "kernel.below-5.5-multi-gpu"});
  REQUIRE(r.exit_code == 0);
  for (const char* part : {"Meaning:", "Evidence:", "Remedy:", "Sources:", "PR #2077", "#1929",
                           "backports", "NCCL_P2P_DISABLE=1", "ACS"}) {
    CHECK(r.out.find(part) != std::string::npos);
  }
  r = run_preflight({"explain", "cuda.minor-version-compat"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("cudaErrorCallRequiresNewerDriver") != std::string::npos);
  r = run_preflight({"explain", "no.such-rule"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no rule \"no.such-rule\"") != std::string::npos);
  CHECK(run_preflight({"explain"}).exit_code == 2);
}

TEST_CASE("e2e: a good site rules file changes the verdict - --disable and --severity apply") {
  const std::string root = fixture("compat-cuda124-driver535");
  auto r = run_preflight({"--root", root, "--format", "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out).at("verdict") == "warn");

  const TempFile site(R"({"rules": [
      {"id": "site.driver-min", "severity": "fail", "check": {"fact": "driver.version", "min": "550"}, "remedy": "Install R550"},
      {"id": "site.eight-gpus", "severity": "warn", "check": {"fact": "gpus.usable", "min": 8}, "remedy": "Use a bigger node"}]})");
  r = run_preflight({"--root", root, "--rules", site.path.string(), "--format", "json"});
  CHECK(r.exit_code == 1);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc.at("verdict") == "fail");
  std::multiset<std::string> ids;
  for (const auto& f : doc.at("findings")) {
    ids.insert(f.at("id").get<std::string>());
  }
  CHECK(ids.count("site.driver-min") == 1);
  CHECK(ids.count("site.eight-gpus") == 1);

  r = run_preflight({"--root", root, "--disable", "cuda.minor-version-compat", "--format", "json"});
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out).at("verdict") == "pass");
  r = run_preflight(
      {"--root", root, "--severity", "cuda.minor-version-compat=fail", "--format", "json"});
  CHECK(r.exit_code == 1);
  r = run_preflight({"--root", root, "--expect-cuda", "12.2", "--format", "json"});
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out).at("facts").at("compat").at("expected_cuda").at("source") ==
        "--expect-cuda");
}

TEST_CASE(
    "e2e: bad rules files and bad options exit 2 with the file, the position and the problem") {
  const TempFile syntax("{\n  \"rules\": [\n    {\"id\": \"site.x\",}\n  ]\n}");
  auto r = run_preflight(
      {"--root", fixture("compat-cuda124-driver535"), "--rules", syntax.path.string()});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(syntax.path.string() + ":3:21: syntax error") != std::string::npos);

  const TempFile content(
      R"({"rules": [{"id": "site.a", "severity": "fatal", "check": {"fact": "gpus.total", "min": 1}, "remedy": "x"}]})");
  r = run_preflight({"--rules", content.path.string(), "rules"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(content.path.string() +
                   ": /rules/0/severity: \"fatal\" is not one of info, warn, fail") !=
        std::string::npos);

  CHECK(run_preflight({"--rules", "/nonexistent/site.json"}).exit_code == 2);
  r = run_preflight({"--disable", "no.such-rule", "rules"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--disable no.such-rule: no rule") != std::string::npos);
  CHECK(run_preflight({"--severity", "driver.end-of-life=loud", "rules"}).exit_code == 2);
  r = run_preflight({"--expect-cuda", "twelve", "rules"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--expect-cuda: \"twelve\" is not a CUDA version") != std::string::npos);
}

TEST_CASE(
    "docs/rules.md is generated from the rule table and up to date (run `make docs` when this fails)") {
  const auto r = run_preflight({"rules", "--format", "markdown"});
  REQUIRE(r.exit_code == 0);
  const std::string expected = read_source("docs/rules-intro.md") + r.out;
  const std::string checked_in = read_source("docs/rules.md");
  CHECK(checked_in == expected);
  // The documentation says why the product checks EnableGpuFirmware rather than registry keys.
  CHECK(checked_in.find("RmEnableNvGpuFirmwareLoad") != std::string::npos);
  CHECK(checked_in.find("EnableGpuFirmware") != std::string::npos);
}

TEST_CASE("e2e: a site rule requiring eight active InfiniBand ports at 400 Gb/s") {
  const TempFile site(
      R"({"rules": [{"id": "site.ib-rails", "severity": "fail",
      "check": {"fact": "ib.ports.active_at.400", "min": 8},
      "remedy": "Drain the node: multi-node jobs here need 8 NDR rails"}]})");
  // all eight ports active at 400 Gb/s: the site rule is satisfied
  auto r = run_preflight({"--root", fixture("ib-hgx-healthy"), "--no-cuda", "--rules",
                          site.path.string(), "--format", "json"});
  REQUIRE(r.exit_code == 0);
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc.at("verdict") == "pass");
  // mlx5_5 is DOWN (its rate file still says 400 Gb/sec): only 7 count, the site rule fails
  r = run_preflight({"--root", fixture("ib-port-down"), "--no-cuda", "--rules", site.path.string(),
                     "--format", "json"});
  REQUIRE(r.exit_code == 1);
  doc = nlohmann::json::parse(r.out);
  CHECK(doc.at("verdict") == "fail");
  bool seen = false;
  for (const auto& f : doc.at("findings")) {
    if (f.at("id") == "site.ib-rails") {
      seen = true;
      CHECK(f.at("severity") == "fail");
      CHECK(f.at("message").get<std::string>().find("7 is below 8") != std::string::npos);
      CHECK(f.at("evidence").at(0).get<std::string>().find("active ports at 400 Gb/s or more: 7") !=
            std::string::npos);
    }
  }
  CHECK(seen);
  // a host without RDMA devices has none
  r = run_preflight({"--root", fixture("pcie-link-absent"), "--no-cuda", "--rules",
                     site.path.string(), "--format", "json"});
  REQUIRE(r.exit_code == 1);
  CHECK(r.out.find("/sys/class/infiniband does not exist") != std::string::npos);
  // an unknown rate in the fact's name is refused
  const TempFile bad(
      R"({"rules": [{"id": "site.ib", "severity": "fail", "check": {"fact": "ib.ports.active_at.fast", "min": 8}, "remedy": "x"}]})");
  r = run_preflight({"--rules", bad.path.string(), "rules"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown fact") != std::string::npos);
}

TEST_CASE("e2e: the report carries the date of its knowledge; a newer driver is said to be so") {
  auto r = run_preflight({"--root", fixture("compat-newer-than-data"), "--format", "json"});
  REQUIRE(r.exit_code == 0); // a warning, not a failure
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc.at("tool").at("knowledge_as_of") == "2026-11");
  bool driver_newer = false;
  for (const auto& f : doc.at("findings")) {
    if (f.at("id") == "driver.newer-than-data") {
      driver_newer = true;
      CHECK(f.at("message").get<std::string>().find("newer than the data of 2026-11") !=
            std::string::npos);
    }
  }
  CHECK(driver_newer);
  r = run_preflight({"--root", fixture("compat-cuda134-driver580")});
  CHECK(r.out.find("knowledge as of: 2026-11 (driver branches to R620, CUDA to 13.5,") !=
        std::string::npos);
}

TEST_CASE("e2e: explain-log with no known error text says it says nothing about the node") {
  TempFile log("epoch 1/3: loss 0.53\nepoch 2/3: loss 0.41\n");
  const auto r = run_preflight({"explain-log", log.path.string()});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("No known error text: this says nothing about the node.") != std::string::npos);
  CHECK(r.out.find("nothing points at the node") == std::string::npos);
}
