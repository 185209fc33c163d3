// `gpu-preflight explain-log` end to end: exit codes 0/1/2, stdin, the JSON against
// docs/explain-log.schema.json, and --check on the shipped example snapshots, whose findings
// confirm or reject the candidates.
#include "gpf/knowledge/log_patterns.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/util/text.hpp"
#include "support/run.hpp"
#include "support/schema.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace gpf::test;
using nlohmann::json;

namespace {

const std::string k_logs = std::string(GPF_SOURCE_DIR) + "/tests/data/explain-log/";
const std::string k_examples = std::string(GPF_SOURCE_DIR) + "/docs/examples/";

const json& schema() {
  static const json s =
      load_json_file(std::string(GPF_SOURCE_DIR) + "/docs/explain-log.schema.json");
  return s;
}

// The candidate of rule id in the JSON's match of pattern, or null.
const json* candidate(const json& doc, const std::string& pattern, const std::string& id) {
  for (const auto& m : doc.at("matches")) {
    if (m.at("pattern") != pattern) {
      continue;
    }
    for (const auto& c : m.at("candidates")) {
      if (c.at("rule") == id) {
        return &c;
      }
    }
  }
  return nullptr;
}

json checked_json(const std::string& log, const std::string& example) {
  const auto r =
      run_preflight({"explain-log", k_logs + log, "--check", "--root", k_examples + example,
                     "--no-cuda", "--no-nvml", "--format", "json"});
  INFO(r.err);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  const json doc = r.json();
  CHECK(validate_schema(schema(), doc).empty());
  CHECK(doc.at("exit_code") == r.exit_code);
  CHECK(doc.at("checked") == true);
  return doc;
}

} // namespace

TEST_CASE("explain-log CLI: exit 1 on a node cause, 0 on the job's own, 2 when unreadable") {
  const auto node = run_preflight({"explain-log", k_logs + "nccl-shm-posix-fallocate.log"});
  CHECK(node.exit_code == 1);
  CHECK_THAT(node.out, Catch::Contains("shm.too-small"));
  CHECK_THAT(node.out, Catch::Contains("line 1: [3] include/shm.h:28 NCCL WARN Call to "
                                       "posix_fallocate failed"));
  CHECK_THAT(node.out, Catch::Contains("remedy:"));
  CHECK_THAT(node.out, Catch::Contains("hypotheses until checked"));
  const auto job = run_preflight({"explain-log", k_logs + "job-oom.log"});
  CHECK(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("The job's own error"));
  CHECK_THAT(job.out, Catch::Contains("Nothing points at the node"));
  CHECK_THAT(job.out, !Catch::Contains("Candidate rules"));
  const auto missing = run_preflight({"explain-log", k_logs + "no-such.log"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("No such file or directory"));
  const auto dir = run_preflight({"explain-log", k_logs});
  CHECK(dir.exit_code == 2);
  const auto bad_format = run_preflight({"explain-log", k_logs + "job-oom.log", "--format", "xml"});
  CHECK(bad_format.exit_code == 2);
  CHECK_THAT(bad_format.err, Catch::Contains("\"xml\" is not one of text, json"));
  // the help lists the option as the man page generator reads it
  const auto help = run_preflight({"explain-log", "--help"});
  CHECK_THAT(help.out, Catch::Contains("--format FORMAT "));
  CHECK_THAT(help.out, !Catch::Contains("{text,json}"));
}

TEST_CASE("explain-log CLI: a CUDA error by its name says whose it is, or what tells") {
  // jax-ml/jax#25002 and NVIDIA/cudf-spark-jni#1745
  const std::string log =
      "Could not synchronize CUDA stream: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access "
      "was encountered.\n"
      "========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch "
      "failure\" on CUDA API call to cudaFree.\n";
  const auto text = run_program({GPF_BINARY, "explain-log", "-"}, {}, log);
  CHECK(text.exit_code == 0); // neither names the node by itself
  CHECK_THAT(text.out, Catch::Contains("NODE OR JOB: CUDA error 719 (CUDA_ERROR_LAUNCH_FAILED, "
                                       "cudaErrorLaunchFailure)"));
  CHECK_THAT(text.out, Catch::Contains("what tells: Xids in the kernel log"));
  CHECK_THAT(text.out, Catch::Contains("JOB: CUDA error 700 (CUDA_ERROR_ILLEGAL_ADDRESS"));
  CHECK_THAT(text.out, Catch::Contains("No node rule is named"));
  CHECK_THAT(text.out, !Catch::Contains("Candidate rules"));
  const auto r = run_program({GPF_BINARY, "explain-log", "-", "--format", "json"}, {}, log);
  const json doc = r.json();
  CHECK(validate_schema(schema(), doc).empty());
  REQUIRE(doc.at("matches").size() == 2);
  CHECK(doc.at("matches").at(0).at("cause") == "ambiguous");
  CHECK(doc.at("matches").at(0).at("pattern") == "cuda-error");
  CHECK_FALSE(doc.at("matches").at(0).at("detail").get<std::string>().empty());
  CHECK(doc.at("matches").at(1).at("cause") == "job");
  CHECK(doc.at("matches").at(1).at("candidates").empty());
  // a node error by its printed text (nanoporetech/dorado#458): its conditions in words
  const auto mps = run_program(
      {GPF_BINARY, "explain-log", "-"}, {},
      "Error 805: MPS client failed to connect to the MPS control daemon or the MPS server\n");
  CHECK(mps.exit_code == 1);
  CHECK_THAT(mps.out, Catch::Contains("NODE: CUDA error 805") &&
                          Catch::Contains("on the node: the MPS control daemon not running"));
}

TEST_CASE("explain-log CLI: stdin, an empty log and the JSON schema") {
  const auto r = run_program({GPF_BINARY, "explain-log", "-", "--format", "json"}, {},
                             "Failed to initialize NVML: Driver/library version mismatch\n");
  REQUIRE(r.exit_code == 1);
  const json doc = r.json();
  CHECK(validate_schema(schema(), doc).empty());
  CHECK(doc.at("input").at("name") == "stdin");
  CHECK(doc.at("node_cause") == true);
  CHECK(doc.at("checked") == false);
  const json* c = candidate(doc, "nvml.driver-library-mismatch", "driver.library-version-mismatch");
  REQUIRE(c != nullptr);
  CHECK(c->at("state") == "hypothesis");
  CHECK_FALSE(c->at("remedy").get<std::string>().empty());
  const auto empty = run_program({GPF_BINARY, "explain-log", "--format", "json"}, {}, "");
  CHECK(empty.exit_code == 0);
  CHECK(validate_schema(schema(), empty.json()).empty());
  CHECK(empty.json().at("matches").empty());
  // the schema rejects what it must, or the passes above prove nothing
  json broken = doc;
  broken["matches"][0]["cause"] = "cosmic-ray";
  CHECK_FALSE(validate_schema(schema(), broken).empty());
  broken = doc;
  broken["unexpected"] = true;
  CHECK_FALSE(validate_schema(schema(), broken).empty());
}

TEST_CASE("explain-log CLI: --check on the examples' snapshots confirms or rejects") {
  // broken-node: /dev/nvidia-uvm is missing and the kernel is 5.4 with 8 GPUs
  const json uvm_broken = checked_json("cuda-unknown-error-uvm.log", "broken-node");
  CHECK(uvm_broken.at("exit_code") == 1);
  CHECK(uvm_broken.at("check").at("verdict") == "fail");
  const json* c = candidate(uvm_broken, "cuda.unknown-init-error", "devnode.nvidia-uvm-missing");
  REQUIRE(c != nullptr);
  CHECK(c->at("state") == "confirmed");
  CHECK_FALSE(c->at("findings").empty());
  CHECK(candidate(uvm_broken, "cuda.unknown-init-error", "devnode.not-accessible")->at("state") ==
        "rejected");
  const json kernel_broken = checked_json("accelerate-kernel-5.4.log", "broken-node");
  CHECK(kernel_broken.at("exit_code") == 1);
  CHECK(candidate(kernel_broken, "accelerate.kernel-below-5.5", "kernel.below-5.5-multi-gpu")
            ->at("state") == "confirmed");
  // healthy-8gpu confirms neither
  const json uvm_healthy = checked_json("cuda-unknown-error-uvm.log", "healthy-8gpu");
  CHECK(uvm_healthy.at("exit_code") == 0);
  CHECK(candidate(uvm_healthy, "cuda.unknown-init-error", "devnode.nvidia-uvm-missing")
            ->at("state") == "rejected");
  const json fm_healthy = checked_json("system-not-ready-802.log", "healthy-8gpu");
  // one candidate could not be checked there (no nvml.json): not cleared, so not exit 0
  CHECK(fm_healthy.at("exit_code") == 1);
  for (const auto& m : fm_healthy.at("matches")) {
    for (const auto& cand : m.at("candidates")) {
      // without nvml.json the fabric state was not read: not checked, the others rejected
      CHECK(cand.at("state") ==
            (cand.at("rule") == "nvml.fabric-incomplete" ? "not checked" : "rejected"));
    }
  }
  // a rule whose one probe had no data is not rejected: healthy-8gpu has no nvml.json and no
  // kernel log, so the ECC candidates are not checked, while /dev/shm was read
  const json ecc_healthy = checked_json("ecc-uncorrectable.log", "healthy-8gpu");
  CHECK(candidate(ecc_healthy, "cuda.ecc-uncorrectable", "nvml.ecc-volatile-uncorrectable")
            ->at("state") == "not checked");
  CHECK(candidate(ecc_healthy, "cuda.ecc-uncorrectable", "xid.reset-required")->at("state") ==
        "not checked");
  const json shm_healthy = checked_json("nccl-shm-posix-fallocate.log", "healthy-8gpu");
  CHECK(candidate(shm_healthy, "nccl.shm-no-space", "shm.too-small")->at("state") == "rejected");
  // the text says what the node confirmed
  const auto text = run_preflight({"explain-log", k_logs + "cuda-unknown-error-uvm.log", "--check",
                                   "--root", k_examples + "broken-node", "--no-cuda", "--no-nvml"});
  CHECK(text.exit_code == 1);
  CHECK_THAT(text.out, Catch::Contains("devnode.nvidia-uvm-missing [confirmed]"));
  CHECK_THAT(text.out, Catch::Contains("devnode.not-accessible [rejected]"));
  CHECK_THAT(text.out, Catch::Contains("Confirmed on this node: devnode.nvidia-uvm-missing"));
  // a root that is not a snapshot: the check cannot run
  const auto bad_root = run_preflight(
      {"explain-log", k_logs + "job-oom.log", "--check", "--root", k_logs, "--no-cuda"});
  CHECK(bad_root.exit_code == 2);
  CHECK_THAT(bad_root.err, Catch::Contains("not a snapshot"));
}

TEST_CASE("explain-log CLI: --check on a node whose kernel log cannot be read rejects nothing it "
          "could not read") {
  // a job log quoting an Xid 79 and a crash dump; the node's kernel log unreadable (a non-root
  // run on Debian or Ubuntu): those candidates are not checked, and the exit is not 0
  TempDir dir{"gpf-explain-unread"};
  const auto log = (dir.path / "job.log").string();
  std::ofstream(log) << "RuntimeError: CUDA error: unspecified launch failure\n"
                        "[ 1843.308145] NVRM: Xid (PCI:0000:44:00): 79, pid=1234, name=python, "
                        "GPU has fallen off the bus.\n"
                        "[ 1843.401000] NVRM: A GPU crash dump has been created. If possible, "
                        "please run\n";
  const auto r = run_preflight({"explain-log", log, "--check", "--root",
                                std::string(GPF_FIXTURES_DIR) + "/log-not-readable", "--no-cuda",
                                "--no-nvml", "--format", "json"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const json doc = r.json();
  CHECK(validate_schema(schema(), doc).empty());
  CHECK(doc.at("exit_code") == 1);
  const json* bus = candidate(doc, "kernel-log", "gpu.fallen-off-bus");
  REQUIRE(bus != nullptr);
  CHECK(bus->at("state") == "not checked");
  const json* dump = candidate(doc, "kernel-log", "gpu.crash-dump");
  REQUIRE(dump != nullptr);
  CHECK(dump->at("state") == "not checked");
  // the text says so too
  const auto text = run_preflight({"explain-log", log, "--check", "--root",
                                   std::string(GPF_FIXTURES_DIR) + "/log-not-readable", "--no-cuda",
                                   "--no-nvml"});
  CHECK(text.exit_code == 1);
  CHECK_THAT(text.out, Catch::Contains("gpu.fallen-off-bus [not checked]") &&
                           !Catch::Contains("gpu.fallen-off-bus [rejected]"));
}

TEST_CASE("explain-log: every rule it can name declares the probes it reads") {
  // "not checked" is derived from the rows' .reads: a candidate without it would be rejected
  // on a node that never read its input. The pattern table's candidates, and the rows that judge
  // the kernel log's events (what explain-log's kernel-log scanner names)
  std::vector<std::string> ids;
  for (const auto& p : gpf::log_patterns()) {
    for (const auto id : gpf::split(p.rules, ' ')) {
      if (!id.empty()) {
        ids.emplace_back(id);
      }
    }
  }
  for (const char* id :
       {"gpu.fallen-off-bus", "gpu.crash-dump", "gpu.power-cables", "xid.reset-required",
        "xid.reboot-required", "xid.update-required", "xid.warning", "xid.unknown",
        "rminit.adapter-failed", "nvswitch.sxid-fatal", "nvswitch.sxid-nonfatal"}) {
    ids.emplace_back(id);
  }
  for (const auto& id : ids) {
    INFO(id);
    const gpf::Rule* rule = gpf::find_rule(id);
    // env.* rows judge the job's environment, which every check has (the host's or the
    // snapshot's environ); the pattern table's own test names unknown ids
    if (rule == nullptr || id.rfind("env.", 0) == 0) {
      continue;
    }
    CHECK_FALSE(rule->reads.empty());
  }
}

TEST_CASE("explain-log CLI: remedies filled from the quoted line, text wrapped and escaped") {
  TempDir dir{"gpf-explain-text"};
  const auto log = (dir.path / "job.log").string();
  // Xid 95 (uncontained memory error: reset the GPU) on 0000:3b:00.0, and a long job line that
  // carries a terminal escape (a title-setting sequence)
  std::ofstream(log) << "[ 10.0] NVRM: Xid (PCI:0000:3b:00): 95, pid=4242, name=python, "
                        "Uncontained memory error\n"
                     << "torch.cuda.OutOfMemoryError: \x1b]0;owned\x07CUDA out of memory. "
                        "Tried to allocate 2.00 GiB "
                     << std::string(400, 'x') << "\n";
  const auto j = run_preflight({"explain-log", log, "--format", "json"});
  INFO(j.out << j.err);
  bool filled = false;
  const json doc = j.json(); // kept: a range-for over a temporary's member would dangle
  for (const auto& m : doc.at("matches")) {
    for (const auto& c : m.at("candidates")) {
      const auto remedy = c.at("remedy").get<std::string>();
      CHECK(remedy.find("<bus id>") == std::string::npos);
      filled = filled || remedy.find("nvidia-smi -r -i 0000:3b:00.0") != std::string::npos;
    }
  }
  CHECK(filled);

  const auto text = run_preflight({"explain-log", log}, {{"COLUMNS", "80"}});
  INFO(text.out);
  CHECK(text.out.find('\x1b') == std::string::npos); // shown, not obeyed
  CHECK(text.out.find('\x07') == std::string::npos);
  CHECK_THAT(text.out, Catch::Contains("nvidia-smi -r -i 0000:3b:00.0"));
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) {
    // a word longer than a line (the 400 x's) is cut, so every line fits (in columns)
    const auto columns = std::count_if(line.begin(), line.end(), [](char ch) {
      return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    });
    CHECK(columns <= 80);
  }
}

TEST_CASE("explain-log CLI: a check option it would ignore is an error") {
  const std::string log = k_logs + "cuda-unknown-error-uvm.log";
  // the check's --format before the command: explain-log's own comes after it
  const auto before = run_preflight({"--format", "json", "explain-log", log});
  CHECK(before.exit_code == 2);
  CHECK_THAT(before.err, Catch::Contains("explain-log takes no --format before it"));
  CHECK(before.out.empty());
  CHECK(run_preflight({"--format", "json", "explain-log", log, "--check", "--root",
                       k_examples + "broken-node"})
            .exit_code == 2);
  // check options without --check: nothing would use them
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--strict"}, {"--min-gpus", "3"}, {"--no-cuda"}}) {
    std::vector<std::string> args = extra;
    args.insert(args.end(), {"explain-log", log});
    const auto r = run_preflight(args);
    INFO(extra[0]);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("explain-log takes no " + extra[0] + " without --check"));
  }
  const auto root = run_preflight({"explain-log", log, "--root", k_examples + "broken-node"});
  CHECK(root.exit_code == 2);
  CHECK_THAT(root.err, Catch::Contains("explain-log takes --root only with --check"));
  // with --check they are the check's, and its own --format and the rule set still work
  const auto checked =
      run_preflight({"--min-gpus", "3", "--disable", "cuda.no-expected-version", "explain-log", log,
                     "--check", "--root", k_examples + "broken-node", "--format", "json"});
  CHECK(checked.exit_code == 1);
  CHECK(checked.json().at("checked") == true);
  CHECK(run_preflight({"explain-log", log, "--format", "json"}).exit_code == 1);
}
