// The NCCL probe's pure parts: the fold of the child's lines into facts (a step left open at the
// deadline is the hung step), NCCL's connection lines, the all-reduce pattern, the version code,
// nccl.json written and read back.
#include "gpf/facts/nccl_json.hpp"
#include "probes/cuda/protocol.hpp"
#include "probes/nccl/nccl_api.hpp"
#include "probes/nccl/nccl_child.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

using gpf::NcclFacts;
using gpf::child::ChildEnd;
using gpf::child::TimedLine;
using gpf::cuda::Event;
using gpf::cuda::EventKind;

namespace {

std::string begin(const std::string& step) {
  Event e;
  e.kind = EventKind::begin;
  e.step.name = step;
  return gpf::cuda::encode_event(e);
}

std::string end(const std::string& step, bool ok, double ms, std::optional<int> code = {},
                const std::string& name = {}, const std::string& text = {}) {
  Event e;
  e.kind = EventKind::end;
  e.step.name = step;
  e.step.ok = ok;
  e.step.duration_ms = ms;
  e.step.error_code = code;
  e.step.error_name = name;
  e.step.error_text = text;
  return gpf::cuda::encode_event(e);
}

std::string done() {
  Event e;
  e.kind = EventKind::done;
  return gpf::cuda::encode_event(e);
}

std::string log(const std::string& text) {
  return nlohmann::json{{"event", "nccl_log"}, {"text", text}}.dump();
}

std::vector<TimedLine> timed(const std::vector<std::string>& texts) {
  std::vector<TimedLine> out;
  double at = 0;
  for (const auto& t : texts) {
    out.push_back({t, at += 10});
  }
  return out;
}

std::vector<std::string> healthy_start() {
  return {begin("load_cuda"),
          end("load_cuda", true, 1),
          begin("cuInit"),
          end("cuInit", true, 5),
          begin("buffers"),
          end("buffers", true, 2),
          begin("load_nccl"),
          end("load_nccl", true, 3),
          begin("ncclGetVersion"),
          R"({"event":"nccl_version","value":22105})",
          end("ncclGetVersion", true, 0.1)};
}

NcclFacts fold(const std::vector<std::string>& texts, const ChildEnd& child_end = {}) {
  NcclFacts f;
  gpf::nccl::fold_nccl_transcript(timed(texts), child_end, f);
  return f;
}

} // namespace

TEST_CASE("nccl fold: a healthy child gives the version, each step's time and the transports") {
  auto lines = healthy_start();
  for (const auto& l :
       {begin("init"), log("h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"),
        log("h:1:1 [1] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM"),
        log("h:1:1 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via SHM/direct/direct"),
        end("init", true, 812.5), begin("all_reduce"), end("all_reduce", true, 3.25),
        begin("check"), end("check", true, 1), done()}) {
    lines.push_back(l);
  }
  const NcclFacts f = fold(lines);
  CHECK(f.ok);
  CHECK(f.version == "2.21.5");
  CHECK(f.version_code == 22105);
  CHECK(f.step_ms("init") == Approx(812.5));
  CHECK(f.step_ms("all_reduce") == Approx(3.25));
  CHECK(f.log.size() == 3);
  // one entry per connection, whatever the channel
  CHECK(f.transports == std::vector<std::string>{"0[0] -> 1[1] via P2P/CUMEM",
                                                 "1[1] -> 0[0] via SHM/direct/direct"});
  CHECK(f.child_error.empty());
}

TEST_CASE("nccl fold: killed at the deadline inside init or all_reduce names that step") {
  for (const std::string step : {"init", "all_reduce"}) {
    INFO(step);
    auto lines = healthy_start();
    if (step == "all_reduce") {
      lines.push_back(begin("init"));
      lines.push_back(end("init", true, 100));
    }
    lines.push_back(begin(step));
    lines.push_back(log("h:1:1 [0] NCCL INFO Bootstrap : Using lo"));
    ChildEnd killed;
    killed.killed_at_deadline = true;
    killed.end_ms = 5000;
    const NcclFacts f = fold(lines, killed);
    CHECK_FALSE(f.ok);
    CHECK(f.deadline_hit);
    REQUIRE(f.step(step));
    CHECK(f.step(step)->timed_out);
    CHECK_FALSE(f.step(step)->ok);
    CHECK_FALSE(f.step_ms(step)); // a hung step's time is not a figure
    CHECK(f.log.back() == "h:1:1 [0] NCCL INFO Bootstrap : Using lo");
  }
}

TEST_CASE("nccl fold: an NCCL error and a wrong sum are failed steps; a crash is CHILD_DIED") {
  auto lines = healthy_start();
  lines.push_back(begin("init"));
  lines.push_back(end("init", false, 4, 5, "ncclInvalidUsage", "ncclCommInitAll: invalid usage"));
  lines.push_back(done());
  NcclFacts f = fold(lines);
  CHECK_FALSE(f.ok);
  REQUIRE(f.step("init"));
  CHECK(f.step("init")->error_code == 5);
  CHECK(f.step("init")->error_name == "ncclInvalidUsage");

  lines = healthy_start();
  lines.push_back(begin("init"));
  lines.push_back(end("init", true, 4));
  lines.push_back(begin("all_reduce"));
  lines.push_back(end("all_reduce", true, 4));
  lines.push_back(begin("check"));
  lines.push_back(end("check", false, 1, std::nullopt, "WRONG_SUM", "rank 1: element 7"));
  lines.push_back(done());
  f = fold(lines);
  CHECK_FALSE(f.ok);
  CHECK(f.step("check")->error_name == "WRONG_SUM");

  lines = healthy_start();
  lines.push_back(begin("init"));
  ChildEnd crashed;
  crashed.signal = 11;
  f = fold(lines, crashed);
  CHECK_FALSE(f.ok);
  CHECK_FALSE(f.deadline_hit);
  CHECK(f.step("init")->error_name == "CHILD_DIED");
}

TEST_CASE("nccl: connection lines are NCCL's 'Channel NN : a -> b via T' lines only") {
  using gpf::nccl::connection_of;
  CHECK(connection_of("n:7:7 [0] NCCL INFO Channel 02/1 : 0[3b000] -> 1[5e000] via P2P/IPC/read") ==
        "0[3b000] -> 1[5e000] via P2P/IPC/read");
  CHECK(connection_of("n:7:7 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [send] via NET/IB/0") ==
        "1[1] -> 0[0] [send] via NET/IB/0");
  CHECK_FALSE(connection_of("n:7:7 [0] NCCL INFO Connected all rings"));
  CHECK_FALSE(connection_of("n:7:7 [0] NCCL INFO Using network via IB"));
  CHECK_FALSE(connection_of(""));
}

TEST_CASE("nccl: every rank's pattern sums to the expected value; versions decode both ways") {
  for (int ranks : {1, 2, 3, 8}) {
    for (std::size_t i : {std::size_t{0}, std::size_t{7}, std::size_t{1020}, std::size_t{1021},
                          gpf::nccl::k_elements - 1}) {
      int sum = 0;
      for (int r = 0; r < ranks; ++r) {
        sum += gpf::nccl::rank_value(r, i);
      }
      CHECK(sum == gpf::nccl::expected_sum(ranks, i));
    }
  }
  CHECK(gpf::nccl::rank_value(0, 0) != gpf::nccl::rank_value(0, 1)); // differs per element
  CHECK(gpf::nccl::version_text(22105) == "2.21.5");
  CHECK(gpf::nccl::version_text(2708) == "2.7.8");
  CHECK(gpf::nccl::result_name(5) == "ncclInvalidUsage");
  CHECK(gpf::nccl::result_name(42) == "ncclResult_t 42");
}

TEST_CASE("nccl.json: the facts written are the facts read back") {
  auto lines = healthy_start();
  lines.push_back(begin("init"));
  lines.push_back(log("h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"));
  ChildEnd killed;
  killed.killed_at_deadline = true;
  killed.end_ms = 2000;
  NcclFacts f = fold(lines, killed);
  f.ran = true;
  f.source = "live";
  f.library = "/opt/nccl/libnccl.so.2";
  f.library_from = "--nccl";
  f.env_mode = "job";
  f.job_env = {"NCCL_P2P_DISABLE=1"};
  f.gpus = {"0000:01:00.0", "0000:02:00.0"};
  f.timeout_s = 2;
  const auto text = gpf::nccl_facts_json(f).dump(2);
  auto back = gpf::parse_nccl_json(text);
  REQUIRE(back);
  CHECK(*back == f);
  CHECK(nlohmann::json::parse(text).at("init_ms").is_null());

  CHECK_FALSE(gpf::parse_nccl_json("{\"steps\": 3}"));
  CHECK_FALSE(gpf::parse_nccl_json("not json"));
}
