// End-to-end: the binary with --dmesg FILE and --dmesg - (stdin), under --root.
#include "support/run.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace gpf::test;
using nlohmann::json;

namespace {
std::string fixture_log(const std::string& name) {
  return fixture(name) + "/dmesg.txt";
}

} // namespace

TEST_CASE("option --dmesg FILE judges a saved log instead of the snapshot's") {
  const auto r = run_preflight({"check", "--root", fixture("healthy-4gpu"), "--dmesg",
                                fixture_log("log-xid79-one-of-8"), "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc.at("verdict") == "warn");
  CHECK(finding(doc, "gpu.fallen-off-bus", "0000:5d:00.0") != nullptr);
  CHECK(doc.at("cuda_visible_devices") == "0,1,2");
  CHECK(doc.at("facts").at("log").at("source") == fixture_log("log-xid79-one-of-8"));
  CHECK(doc.at("facts").at("log").at("formats") == json::array({"dmesg"}));
}

TEST_CASE("option --dmesg - reads the log from stdin") {
  const std::string log =
      "Nov 30 02:00:00 node kernel: NVRM: API mismatch: the client has the version 550.67, but\n"
      "Nov 30 02:00:00 node kernel: NVRM: this kernel module has the version 550.54.14.  Please\n";
  const auto r = run_program(
      {GPF_BINARY, "check", "--root", fixture("healthy-4gpu"), "--dmesg", "-", "--format", "json"},
      {}, log);
  REQUIRE(r.exit_code == 1);
  const json doc = json::parse(r.out);
  CHECK(finding(doc, "driver.api-mismatch") != nullptr);
  CHECK(doc.at("facts").at("log").at("source") == "stdin");
}

TEST_CASE("option --dmesg: a missing file is a usage error; one that cannot be read warns") {
  // the user's own input, not the node's: a typo is exit 2, never a node verdict
  const auto missing = run_preflight({"check", "--root", fixture("healthy-4gpu"), "--dmesg",
                                      "/nonexistent/kern.log", "--format", "json"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err.find("--dmesg: /nonexistent/kern.log: No such file or directory") !=
        std::string::npos);
  // it exists but cannot be read as a log (a directory): the log was not checked, a warning
  const auto r = run_preflight({"check", "--root", fixture("healthy-4gpu"), "--dmesg",
                                fixture("healthy-4gpu"), "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc.at("verdict") == "warn");
  CHECK(finding(doc, "log.not-readable") != nullptr);
  CHECK(run_preflight({"check", "--root", fixture("healthy-4gpu"), "--dmesg",
                       fixture("healthy-4gpu"), "--strict"})
            .exit_code == 1);
}

TEST_CASE("text output quotes the log lines and the decoded meaning") {
  // wide enough for the log line on one line
  const auto r = run_preflight({"--root", fixture("log-rminit-0x26"), "--color", "never"},
                               {{"COLUMNS", "200"}});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("[FAIL] rminit.adapter-failed") != std::string::npos);
  CHECK(r.out.find("RM_INIT_GPU_DMA_CONFIGURATION_FAILED (0x26)") != std::string::npos);
  CHECK(
      r.out.find(
          "evidence: [   31.402113] NVRM: GPU 0000:18:00.0: RmInitAdapter failed! (0x26:0xffff:1481)") !=
      std::string::npos);
}

TEST_CASE("option --dmesg /dev/kmsg: read to the end of the ring buffer, not waited on") {
  // a character device is otherwise waited on for more data (30 s without any); the kernel's own
  // log ends where its ring buffer does
  if (::access("/dev/kmsg", R_OK) != 0) {
    WARN("/dev/kmsg is not readable here: not checked");
    return;
  }
  const auto r = run_preflight(
      {"check", "--root", fixture("healthy-4gpu"), "--dmesg", "/dev/kmsg", "--format", "json"});
  INFO(r.err);
  CHECK((r.exit_code == 0 || r.exit_code == 1));
  CHECK(r.seconds < 15);
  CHECK(r.err.find("no data for") == std::string::npos);
  const json doc = json::parse(r.out);
  CHECK(finding(doc, "log.not-readable") == nullptr);
}
