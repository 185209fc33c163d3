// Reports that lie to `summarize` (ctest label security): a report dated in the future is flagged
// and never hides a node's real report, and with --max-age it is stale, not forever recent; bad
// inputs are counted, a few named; no escape sequence from a report, a path or a command reaches
// the terminal (summarize, exec, snapshot); a FIFO or device named as a report is never waited on.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>

using namespace gpf::test;
using nlohmann::json;

namespace {

std::string rfc3339(std::time_t t) {
  char buf[32];
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A real report of the fixture, renamed to host and dated at t.
json report_of(const std::string& fixture_name, const std::string& host, std::time_t t) {
  const auto r = run_preflight({"--root", fixture(fixture_name), "--format", "json"});
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  json j = json::parse(r.out);
  j["host"] = host;
  j["checked_at"] = rfc3339(t);
  return j;
}

const json* node(const json& summary, const std::string& name) {
  for (const auto& n : summary.at("nodes")) {
    if (n.at("node") == name) {
      return &n;
    }
  }
  return nullptr;
}

} // namespace

TEST_CASE("security: a future-dated passing report does not supersede a node's real failing one") {
  const std::time_t now = std::time(nullptr);
  const json failing = report_of("nouveau", "node-07", now - 600);
  REQUIRE(failing.at("exit_code") == 1);
  const json forged = report_of("healthy-4gpu", "node-07", now + 365 * 86400);
  REQUIRE(forged.at("exit_code") == 0);
  const json other = report_of("healthy-4gpu", "node-08", now - 60);
  const json skewed = report_of("healthy-4gpu", "node-09", now + 120); // within the skew
  // either order of input: the later input would win a tie, the future date must not count
  for (const bool forged_first : {true, false}) {
    INFO("forged report first: " << forged_first);
    const std::string lines = (forged_first ? forged.dump() + "\n" + failing.dump()
                                            : failing.dump() + "\n" + forged.dump()) +
                              "\n" + other.dump() + "\n" + skewed.dump() + "\n";
    const auto r = run_program({GPF_BINARY, "summarize", "--format", "json"}, {}, lines);
    INFO(r.err);
    CHECK(r.exit_code == 1);
    const json s = json::parse(r.out);
    CHECK(s.at("reports").at("future_dated") == 1);
    CHECK(s.at("reports").at("superseded") == 1);
    const json* n7 = node(s, "node-07");
    REQUIRE(n7);
    CHECK(n7->at("verdict") == "fail");
    CHECK_FALSE(n7->at("ready").get<bool>());
    CHECK_FALSE(n7->at("future_dated").get<bool>());
    const json* n9 = node(s, "node-09");
    REQUIRE(n9);
    CHECK_FALSE(n9->at("future_dated").get<bool>());
    CHECK(n9->at("ready").get<bool>());
  }

  // Alone, the forged report is flagged, and with --max-age it is stale (its age is not known).
  const std::string alone = forged.dump() + "\n" + other.dump() + "\n";
  const auto aged =
      run_program({GPF_BINARY, "summarize", "--max-age", "24h", "--format", "json"}, {}, alone);
  CHECK(aged.exit_code == 1);
  const json s = json::parse(aged.out);
  REQUIRE(node(s, "node-07"));
  CHECK(node(s, "node-07")->at("future_dated").get<bool>());
  CHECK(node(s, "node-07")->at("stale").get<bool>());
  CHECK_FALSE(node(s, "node-08")->at("stale").get<bool>());
  const auto text = run_program({GPF_BINARY, "summarize", "--max-age", "24h"}, {}, alone);
  CHECK_THAT(text.out, Catch::Contains("(1 dated in the future)") &&
                           Catch::Contains("FUTURE 1: node-07 (checked_at ") &&
                           Catch::Contains("STALE (older than --max-age): 1 node, 1 dated in the "
                                           "future\n"));
}

TEST_CASE("security: summarize bounds its diagnostics: a count, then N more") {
  // one report, then 200000 lines that are JSON but no report: each used to be a stderr line and a
  // kept record
  std::string lines = report_of("healthy-4gpu", "node-01", std::time(nullptr) - 60).dump() + "\n";
  for (int i = 0; i < 200000; ++i) {
    lines += "{}\n";
  }
  const auto r = run_program({GPF_BINARY, "summarize", "--format", "json"}, {}, lines);
  CHECK(r.exit_code == 2);
  const auto stderr_lines = std::count(r.err.begin(), r.err.end(), '\n');
  CHECK(stderr_lines <= 21);
  CHECK_THAT(r.err, Catch::Contains("199980 more unreadable inputs not named here"));
  const json s = json::parse(r.out);
  CHECK(s.at("reports").at("unreadable") == 200000);
  CHECK(s.at("unreadable").size() == 1000);
  CHECK(s.at("reports").at("nodes") == 1);
  const auto text = run_program({GPF_BINARY, "summarize"}, {}, lines);
  CHECK_THAT(text.out, Catch::Contains("+199988 more"));
}

TEST_CASE("security: summarize reads a 16 MiB report in the memory of what it keeps") {
  // A real report whose facts carry 15 MiB of members summarize never reads (1.7 million of
  // them): only the named members are built. A whole DOM of it took about 190 MB.
  // Built as text, not as a document: the run forks this process, whose resident memory the
  // child shares until it execs (and ru_maxrss counts).
  json j = report_of("healthy-4gpu", "node-01", std::time(nullptr) - 60);
  j["facts"]["padding"] = "PADDING";
  const std::string report = j.dump();
  std::string one = "{";
  for (int k = 0; k < 100; ++k) {
    one += (k == 0 ? "\"k" : ",\"k") + std::to_string(k) + "\":" + std::to_string(k % 10);
  }
  one += "}";
  const auto at = report.find("\"PADDING\"");
  REQUIRE(at != std::string::npos);
  std::string text = report.substr(0, at) + "[";
  text.reserve(16u << 20);
  while (text.size() + one.size() + 1 < (15u << 20)) {
    text += one;
    text += ',';
  }
  text += one + "]" + report.substr(at + 9);
  REQUIRE(text.size() < (16u << 20));
  REQUIRE(json::accept(text));
  const auto r = run_program({GPF_BINARY, "summarize", "--format", "json"}, {}, text);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const json s = json::parse(r.out);
  CHECK(s.at("reports").at("nodes") == 1);
  REQUIRE(node(s, "node-01"));
  CHECK(node(s, "node-01")->at("verdict") == "pass");
  if (k_sanitized) {
    WARN("memory bound not checked under AddressSanitizer");
    return;
  }
  rusage usage{};
  REQUIRE(::getrusage(RUSAGE_CHILDREN, &usage) == 0);
  CHECK(usage.ru_maxrss < 96 * 1024); // KiB: the text (read twice over at most) and the record
}

TEST_CASE("security: escape sequences from reports, paths and commands reach no terminal") {
  // summarize: a finding's severity string
  json forged = report_of("nouveau", "node-esc", std::time(nullptr) - 60);
  REQUIRE(!forged.at("findings").empty());
  forged["findings"][0]["severity"] = "fail\x1b]0;owned\x07\x1b[2J";
  const auto s = run_program({GPF_BINARY, "summarize"}, {}, forged.dump() + "\n");
  CHECK(s.out.find('\x1b') == std::string::npos);
  CHECK(s.out.find("\\x1b]0;owned") != std::string::npos);
  // exec: the summary line and the command's name
  const auto e =
      run_preflight({"exec", "--root", fixture("healthy-4gpu"), "--", "no-such-cmd\x1b[31m"});
  CHECK(e.err.find('\x1b') == std::string::npos);
  CHECK(e.err.find("no-such-cmd\\x1b[31m: command not found") != std::string::npos);
  // snapshot: its own messages name the output directory
  TempDir t;
  const std::string dir = (t.path / "snap\x1b[31m").string();
  const auto snap = run_preflight({"snapshot", "--root", fixture("healthy-4gpu"), "-o", dir});
  REQUIRE(snap.exit_code == 0);
  CHECK(snap.out.find('\x1b') == std::string::npos);
  CHECK(snap.out.find("snap\\x1b[31m") != std::string::npos);
}

TEST_CASE("security: summarize --format html escapes every string from a report") {
  // a host, a finding id, bus ids and a remedy written as markup
  json forged = report_of("excluded-gpu", "<script>alert(1)</script>", std::time(nullptr) - 60);
  REQUIRE(!forged.at("findings").empty());
  for (auto& f : forged["findings"]) {
    f["id"] = "x\"><img src=y onerror=alert(2)>";
    f["remedy"] = "</td></tr></table><iframe src=//evil>";
    f["gpu"] = "0000:3a:00.0' onmouseover='alert(3)";
  }
  forged["primary_cause"] = {{"id", "x\"><img src=y onerror=alert(2)>"},
                             {"gpu", "0000:3a:00.0' onmouseover='alert(3)"}};
  forged["gpus"][0]["bus_id"] = "&amp;\x1b[2J";
  const auto r =
      run_program({GPF_BINARY, "summarize", "--format", "html"}, {}, forged.dump() + "\n");
  CHECK(r.exit_code == 0); // warn, as the report says
  INFO(r.out);
  for (const char* markup : {"<script", "<img", "<iframe", "onmouseover='", "=alert(2)>"}) {
    INFO(markup);
    CHECK(r.out.find(markup) == std::string::npos);
  }
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(r.out.find("x&quot;&gt;&lt;img src=y onerror=alert(2)&gt;") != std::string::npos);
  CHECK(r.out.find("&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;iframe") != std::string::npos);
  CHECK(r.out.find("onmouseover=&#39;alert(3)") != std::string::npos);
  CHECK(r.out.find("&amp;amp;\\x1b[2J") != std::string::npos);
  // the page still stands: one document, every table closed
  CHECK(std::count(r.out.begin(), r.out.end(), '<') > 10);
  CHECK(r.out.find("</html>\n") == r.out.size() - 8);
}

TEST_CASE("security: summarize and diff never wait on a FIFO or a device named as a report") {
  const TempDir dir;
  const std::string fifo = (dir.path / "reports.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  RunOptions limited;
  limited.limit_s = 20; // the old open waited for a writer forever
  // A FIFO nobody writes to is an empty input, read at once: an empty report, its node not ready.
  const auto s = run_binary({"summarize", "--format", "json", fifo}, limited);
  CHECK_FALSE(s.timed_out);
  CHECK(s.exit_code == 1);
  CHECK_THAT(s.out, Catch::Contains("reports.fifo"));
  // A terminal or device is refused by its kind, unread.
  const auto tty = run_binary({"summarize", "--format", "json", "/dev/zero"}, limited);
  CHECK_FALSE(tty.timed_out);
  CHECK(tty.exit_code == 2);
  CHECK_THAT(tty.err, Catch::Contains("a device node, not a report file"));
  const auto d = run_binary({"diff", "/dev/zero", fifo}, limited);
  CHECK_FALSE(d.timed_out);
  CHECK(d.exit_code == 2);
  CHECK_THAT(d.err, Catch::Contains("/dev/zero: cannot open: it is a device node"));
  // A pipe with a writer is still read: the usual `summarize <(srun …)` and `… | summarize -`.
  const std::string report =
      report_of("healthy-4gpu", "node-01", std::time(nullptr) - 60).dump() + "\n";
  RunOptions piping = limited;
  piping.stdin_text = report;
  const auto piped = run_binary({"summarize", "--format", "json", "/dev/stdin"}, piping);
  CHECK(piped.exit_code == 0);
  CHECK(json::parse(piped.out).at("reports").at("nodes") == 1);
}
