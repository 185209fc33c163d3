// End-to-end: the binary on fixture snapshots. Exit codes, the three formats, golden JSON
// (durations and checked_at masked) validated against docs/report.schema.json.
// Regenerate goldens after an intended change: GPF_UPDATE_GOLDENS=1 ctest -R golden
#include "support/run.hpp"
#include "support/schema.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace gpf::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What differs from one run to the next: probe durations and the time of the check.
json mask_durations(json j) {
  for (auto& p : j.at("probes")) {
    p["duration_ms"] = 0;
  }
  j["checked_at"] = "2000-01-01T00:00:00Z";
  return j;
}

const json& schema() {
  static const json s = load_json_file(std::string(GPF_SOURCE_DIR) + "/docs/report.schema.json");
  return s;
}

} // namespace

TEST_CASE("exit code 2 with a one-line reason when the checker cannot do its job") {
  const std::vector<std::vector<std::string>> bad{
      {"--bogus"},
      {"--format", "xml"},
      {"--min-gpus", "-3"},
      {"--color", "sometimes"},
      {"--root", "/nonexistent/gpf"},
      {"--root", GPF_BINARY},
      {"check", "extra-positional"},
  };
  for (const auto& args : bad) {
    INFO(args[0] << " " << (args.size() > 1 ? args[1] : ""));
    const auto r = run_preflight(args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.rfind("gpu-preflight: error: ", 0) == 0);
  }
}

TEST_CASE("help and version exit 0") {
  const auto help = run_preflight({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--root") != std::string::npos);
  const auto version = run_preflight({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.rfind("gpu-preflight ", 0) == 0);
}

TEST_CASE("exit codes follow the verdict; strict makes warn not ready") {
  CHECK(run_preflight({"check", "--root", fixture("healthy-4gpu")}).exit_code == 0);
  CHECK(run_preflight({"--root", fixture("healthy-4gpu")}).exit_code == 0); // check is the default
  CHECK(run_preflight({"check", "--root", fixture("missing-uvm")}).exit_code == 1);
  CHECK(run_preflight({"check", "--root", fixture("excluded-gpu")}).exit_code == 0);
  CHECK(run_preflight({"check", "--root", fixture("excluded-gpu"), "--strict"}).exit_code == 1);
  CHECK(run_preflight({"check", "--root", fixture("excluded-gpu"), "--min-gpus", "4"}).exit_code ==
        1);
}

// What a fixture's verdict golden pins: the verdict and everything a reader acts on (findings
// with their evidence and remedy, the recommendation, the per-GPU table), not the facts the
// probes gathered nor their timings, so a probe that adds a field changes the reference goldens
// below, not every fixture's.
json verdict_part(json report) {
  for (const char* key : {"facts", "probes", "checked_at", "tool"}) {
    report.erase(key);
  }
  return report;
}

// The fixtures whose whole report is pinned: between them every probe and block of facts.
const std::vector<std::string> k_reference_fixtures{"healthy-4gpu", "cuda-4gpu",
                                                    "log-xid79-one-of-8", "ib-hgx-healthy",
                                                    "topo-nvswitch-fm-mismatch"};

// A verdict golden's layout: one member per line, and one line per finding and per GPU, so that
// a change to one finding is a one-line diff and 150 fixtures stay a few thousand lines. Only the
// layout is ours: every value is nlohmann's dump, and the file is read back as JSON.
std::string one_line_per_element(const json& object) {
  std::string text = "{\n";
  bool first = true;
  for (const auto& [key, value] : object.items()) {
    text += first ? "" : ",\n";
    first = false;
    text += "  " + json(key).dump() + ": ";
    if (value.is_array() && !value.empty()) {
      text += "[\n";
      for (std::size_t i = 0; i < value.size(); ++i) {
        text += "    " + value[i].dump() + (i + 1 < value.size() ? ",\n" : "\n");
      }
      text += "  ]";
    } else {
      text += value.dump();
    }
  }
  return text + "\n}\n";
}

// Compares (or, with GPF_UPDATE_GOLDENS set, rewrites) one golden file.
void check_golden(const std::string& path, const json& actual, bool compact = false) {
  if (std::getenv("GPF_UPDATE_GOLDENS") != nullptr) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << (compact ? one_line_per_element(actual) : actual.dump(2) + "\n");
  }
  REQUIRE(fs::exists(path));
  CHECK(actual == load_json_file(path));
}

TEST_CASE("every fixture: JSON valid, matches the schema and its verdict golden") {
  const auto names = fixture_names();
  REQUIRE(names.size() >= 12);
  for (const auto& name : names) {
    INFO(name);
    const auto r = run_preflight({"check", "--root", fixture(name), "--format", "json"});
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    const json doc = json::parse(r.out); // throws on invalid JSON or invalid UTF-8
    CHECK(doc.at("exit_code") == r.exit_code);
    const auto problems = validate_schema(schema(), doc);
    for (const auto& p : problems) {
      FAIL_CHECK(p);
    }
    check_golden(std::string(GPF_GOLDEN_DIR) + "/verdict/" + name + ".json", verdict_part(doc),
                 true);
  }
}

TEST_CASE("reference fixtures: the whole report matches its golden") {
  for (const auto& name : k_reference_fixtures) {
    INFO(name);
    const auto r = run_preflight({"check", "--root", fixture(name), "--format", "json"});
    check_golden(std::string(GPF_GOLDEN_DIR) + "/report/" + name + ".json",
                 mask_durations(json::parse(r.out)));
  }
  // no stale golden outlives its fixture
  for (const char* dir : {"/verdict", "/report"}) {
    for (const auto& entry : fs::directory_iterator(std::string(GPF_GOLDEN_DIR) + dir)) {
      INFO(entry.path());
      CHECK(fs::exists(fixture(entry.path().stem().string())));
    }
  }
}

TEST_CASE("JSON key order is stable: verdict first, facts last") {
  const auto r = run_preflight({"--root", fixture("healthy-4gpu"), "--format", "json"});
  const auto verdict = r.out.find("\"verdict\"");
  const auto findings = r.out.find("\"findings\"");
  const auto facts = r.out.find("\"facts\"");
  CHECK(r.out.find("\"schema_version\"") < verdict);
  CHECK(verdict < findings);
  CHECK(findings < facts);
}

TEST_CASE("the live host's JSON validates too") {
  const auto r = run_preflight({"check", "--format", "json", "--no-cuda"});
  if (r.exit_code == 2 && r.err.find("--no-cuda") != std::string::npos) {
    // before the CUDA probe exists there is no --no-cuda; run without it
    const auto plain = run_preflight({"check", "--format", "json"});
    REQUIRE(plain.exit_code <= 1);
    CHECK(validate_schema(schema(), json::parse(plain.out)).empty());
    return;
  }
  REQUIRE(r.exit_code <= 1);
  CHECK(validate_schema(schema(), json::parse(r.out)).empty());
}

TEST_CASE("env format is safe to eval and carries the recommendation") {
  const auto ok = run_preflight({"--root", fixture("environ-restricted"), "--format", "env"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("export CUDA_VISIBLE_DEVICES='1,3'\n") != std::string::npos);
  CHECK(ok.out.find("export CUDA_DEVICE_ORDER='PCI_BUS_ID'\n") != std::string::npos);
  CHECK(ok.out.rfind("# gpu-preflight verdict: pass", 0) == 0);

  const auto bad = run_preflight({"--root", fixture("missing-uvm"), "--format", "env"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.out.find("# fail: devnode.nvidia-uvm-missing\n") != std::string::npos);
  // eval swallows the comments: the verdict, the GPUs and the first remedy go to stderr too.
  CHECK(ok.err == "gpu-preflight: PASS 2/4 GPUs CUDA_VISIBLE_DEVICES=1,3\n");
  CHECK(bad.err.rfind("gpu-preflight: FAIL devnode.nvidia-uvm-missing; fix: ", 0) == 0);
  CHECK(bad.err.find("CUDA_VISIBLE_DEVICES") == std::string::npos);

  // eval it in a real shell and read the variables back
  const auto sh = run_program(
      {"sh", "-c",
       "eval \"$(\"$0\" --root \"$1\" --format env)\"; echo \"[$CUDA_VISIBLE_DEVICES]\"",
       GPF_BINARY, fixture("excluded-gpu")});
  CHECK(sh.out == "[0,1,3]\n");

  // on a node that is not ready, `eval "$(...)" && CMD` does not run CMD
  const auto refused = run_program(
      {"sh", "-c",
       "eval \"$(\"$0\" --root \"$1\" --format env)\" && echo started; echo \"status $?\"",
       GPF_BINARY, fixture("missing-uvm")});
  CHECK(refused.out == "status 1\n");
  const auto started =
      run_program({"sh", "-c", "eval \"$(\"$0\" --root \"$1\" --format env)\" && echo started",
                   GPF_BINARY, fixture("excluded-gpu")});
  CHECK(started.out == "started\n");
}

TEST_CASE("text format: control characters from a snapshot are shown, not obeyed") {
  TempDir root;
  fs::copy(fixture("missing-gpu-node"), root.path,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const auto info = root.path / "proc/driver/nvidia/gpus/0000:18:00.0/information";
  std::string text;
  {
    std::ifstream in(info);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string model = "NVIDIA H100 80GB HBM3";
  text.replace(text.find(model), model.size(),
               "\x1b[2J\x1b[1;32mPASS\xC2\x9b"
               "0m H100");
  std::ofstream(info, std::ios::trunc) << text;
  const auto r = run_preflight({"--root", root.path.string(), "--color", "never"});
  INFO(r.out);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find("\xC2\x9b") == std::string::npos);
  CHECK(r.out.find("\\x1b[2J\\x1b[1;32mPASS\\u009b0m H100") != std::string::npos);
}

TEST_CASE("text format: verdict first, evidence and remedy, colour only when asked") {
  const auto plain = run_preflight({"--root", fixture("missing-gpu-node"), "--color", "never"});
  CHECK(plain.out.rfind("gpu-preflight: WARN", 0) == 0);
  CHECK(plain.out.find("evidence: /dev/nvidia2: No such file or directory") != std::string::npos);
  CHECK(plain.out.find("remedy:") != std::string::npos);
  CHECK(plain.out.find("export CUDA_VISIBLE_DEVICES='0,1,3'\n") != std::string::npos);
  CHECK(plain.out.find('\x1b') == std::string::npos);

  const auto coloured = run_preflight({"--root", fixture("missing-gpu-node"), "--color", "always"});
  CHECK(coloured.out.find('\x1b') != std::string::npos);
  // auto: stdout is a pipe here, so no colour
  CHECK(run_preflight({"--root", fixture("missing-gpu-node")}).out.find('\x1b') ==
        std::string::npos);
}

TEST_CASE("cli: a library option naming a FIFO or a directory is a usage error, not a verdict") {
  TempDir t;
  const auto fifo = (t.path / "libcuda.so.1").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const char* option : {"--libcuda", "--libnvml"}) {
    for (const std::string& path : {fifo, t.path.string()}) {
      INFO(option << " " << path);
      const auto r =
          run_preflight({"--root", fixture("healthy-4gpu"), option, path, "--format", "json"});
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err.find("not a regular file") != std::string::npos);
      CHECK(r.seconds < 10);
    }
  }
  const auto nccl = run_preflight(
      {"--root", fixture("healthy-4gpu"), "--libcuda", "libcuda.so.1", "--nccl=" + fifo});
  CHECK(nccl.exit_code == 2);
  CHECK(nccl.err.find("not a regular file") != std::string::npos);
}
