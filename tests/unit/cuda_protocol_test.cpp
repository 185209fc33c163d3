// The child -> parent line protocol and the fold of a child's lines into steps (pure functions).
#include "gpf/facts/cuda_json.hpp"
#include "gpf/probes/cuda_probe.hpp"
#include "probes/cuda/child_work.hpp"
#include "probes/cuda/protocol.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::cuda;

namespace {

Event step_end(const std::string& name, bool ok, std::optional<int> code = std::nullopt,
               std::string err = "") {
  Event e;
  e.kind = EventKind::end;
  e.step.name = name;
  e.step.ok = ok;
  e.step.duration_ms = 12.5;
  e.step.error_code = code;
  e.step.error_name = std::move(err);
  return e;
}

Event begin(const std::string& name) {
  Event e;
  e.kind = EventKind::begin;
  e.step.name = name;
  return e;
}

std::vector<TimedLine> lines(const std::vector<std::pair<Event, double>>& events) {
  std::vector<TimedLine> out;
  for (const auto& [e, at] : events) {
    out.push_back({encode_event(e), at});
  }
  return out;
}

Event done() {
  Event e;
  e.kind = EventKind::done;
  return e;
}

} // namespace

TEST_CASE("cuda protocol: every event kind survives encode and decode") {
  Event device;
  device.kind = EventKind::device;
  device.device.index = 3;
  device.device.bus_id = "00000000:3B:00.0";
  device.device.uuid = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";
  device.device.name = "NVIDIA H100 80GB HBM3";
  device.device.cc_major = 9;
  device.device.cc_minor = 0;
  device.device.total_mem_bytes = 85520809984ULL;
  device.device.compute_mode = 0;
  const Event d = decode_event(encode_event(device));
  REQUIRE(d.kind == EventKind::device);
  CHECK(d.device.index == 3);
  CHECK(d.device.bus_id == "0000:3b:00.0"); // normalised on the way in
  CHECK(d.device.uuid == device.device.uuid);
  CHECK(d.device.cc_major == 9);
  CHECK(d.device.total_mem_bytes == 85520809984ULL);

  const Event e = decode_event(encode_event(step_end("cuInit", false, 999, "CUDA_ERROR_UNKNOWN")));
  REQUIRE(e.kind == EventKind::end);
  CHECK(e.step.name == "cuInit");
  CHECK_FALSE(e.step.ok);
  CHECK(e.step.error_code == 999);
  CHECK(e.step.error_name == "CUDA_ERROR_UNKNOWN");
  CHECK(e.step.duration_ms == Approx(12.5));

  Event peer_begin = begin("peer");
  peer_begin.pair = std::pair(0, 2);
  const Event pb = decode_event(encode_event(peer_begin));
  REQUIRE(pb.pair);
  CHECK(pb.pair->second == 2);

  Event missing;
  missing.kind = EventKind::missing_symbol;
  missing.text = "cuMemcpyPeer";
  missing.required = false;
  const Event m = decode_event(encode_event(missing));
  CHECK(m.kind == EventKind::missing_symbol);
  CHECK(m.text == "cuMemcpyPeer");
  CHECK_FALSE(m.required);

  Event fabric;
  fabric.kind = EventKind::fabric;
  fabric.fabric.asked = true;
  fabric.fabric.attribute = 1;
  fabric.fabric.tried = true;
  fabric.fabric.granularity = 2u << 20;
  fabric.fabric.call = "cuMemCreate";
  fabric.fabric.error_code = 800;
  fabric.fabric.error_name = "CUDA_ERROR_NOT_PERMITTED";
  fabric.fabric.error_text = "operation not permitted";
  const Event f = decode_event(encode_event(fabric));
  REQUIRE(f.kind == EventKind::fabric);
  CHECK(f.fabric == fabric.fabric);
  CHECK(fold_transcript({{encode_event(fabric), 1}}, {}).fabric == fabric.fabric);
}

TEST_CASE("cuda protocol: lines that are not events decode as invalid, never throw") {
  const char* garbage[] = {
      "",
      "not json",
      "{\"event\":\"begin\"}",    // no step
      "{\"event\":\"teleport\"}", // unknown kind
      "[1,2,3]",
      "{\"event\":\"device\",\"index\":\"x\",\"bus_id\":\"0000:01:00.0\"}",
      "{\"event\":\"driver_version\",\"value\":99999999999999}",
      "{\"event\":\"end\",\"step\":\"cuInit\",\"ok\":true,\"ms\":1e400}",
      "\xff\xfe{\"event\":\"done\"}",
  };
  for (const char* line : garbage) {
    INFO(line);
    const Event e = decode_event(line);
    CHECK((e.kind == EventKind::invalid || e.kind == EventKind::end));
  }
  // Invalid UTF-8 inside a string comes back as valid UTF-8.
  const Event e = decode_event(encode_event(step_end("bad\xff name", true)));
  CHECK(e.step.name == "bad\xef\xbf\xbd name");
}

TEST_CASE("cuda protocol: a finished child's steps are kept in order") {
  const auto t = fold_transcript(lines({{begin("load"), 1},
                                        {step_end("load", true), 2},
                                        {begin("cuInit"), 3},
                                        {step_end("cuInit", true), 4},
                                        {done(), 5}}),
                                 ChildEnd{});
  CHECK(t.done);
  CHECK_FALSE(t.timed_out);
  REQUIRE(t.steps.size() == 2);
  CHECK(t.steps[1].name == "cuInit");
  CHECK(t.all_steps_ok());
  CHECK(t.child_error.empty());
}

TEST_CASE("cuda protocol: a step open at the deadline is the hung step, with its elapsed time") {
  ChildEnd end;
  end.killed_at_deadline = true;
  end.end_ms = 3000;
  const auto t = fold_transcript(
      lines({{begin("load"), 1}, {step_end("load", true), 2}, {begin("cuInit"), 500}}), end);
  CHECK(t.timed_out);
  CHECK_FALSE(t.done);
  REQUIRE(t.steps.size() == 2);
  const CudaStep* bad = t.failed_step();
  REQUIRE(bad);
  CHECK(bad->name == "cuInit");
  CHECK(bad->timed_out);
  CHECK(bad->duration_ms == Approx(2500));
}

TEST_CASE("cuda protocol: a child that died mid-step names the step and the signal") {
  ChildEnd end;
  end.signal = 6;
  end.end_ms = 40;
  const auto t = fold_transcript(lines({{begin("primary_context"), 10}}), end);
  const CudaStep* bad = t.failed_step();
  REQUIRE(bad);
  CHECK(bad->name == "primary_context");
  CHECK_FALSE(bad->timed_out);
  CHECK(bad->error_name == "CHILD_DIED");
  CHECK_THAT(bad->error_text, Catch::Contains("signal 6"));
}

TEST_CASE("cuda protocol: a peer copy open at the deadline becomes a hung pair") {
  Event pb = begin("peer");
  pb.pair = std::pair(1, 0);
  ChildEnd end;
  end.killed_at_deadline = true;
  end.end_ms = 900;
  const auto t = fold_transcript(lines({{pb, 100}}), end);
  REQUIRE(t.peers.size() == 1);
  CHECK(t.peers[0].from == 1);
  CHECK(t.peers[0].to == 0);
  CHECK(t.peers[0].timed_out);
  CHECK(t.peers[0].duration_ms == Approx(800));
}

TEST_CASE("cuda protocol: ending without 'done' or with garbage is a child error") {
  ChildEnd end;
  end.exit_code = 0;
  auto t = fold_transcript({{"hello", 1}}, end);
  CHECK_FALSE(t.done);
  CHECK_THAT(t.child_error,
             Catch::Contains("ended before finishing") && Catch::Contains("not an event"));
  REQUIRE(t.invalid_lines.size() == 1);
}

TEST_CASE("cuda version text from cuDriverGetVersion") {
  CHECK(cuda_version_text(12040) == "12.4");
  CHECK(cuda_version_text(11080) == "11.8");
  CHECK(cuda_version_text(13000) == "13.0");
  CHECK(cuda_version_text(9020) == "9.2");
  CHECK(cuda_version_text(0) == "0");
}

TEST_CASE("cuda protocol: the multi-GPU child's plan round-trips; a malformed one is refused") {
  using gpf::cuda::MultiGpuPlan;
  MultiGpuPlan plan;
  plan.gpus = {{2, 0, true}, {0, 1, false}, {5, 7, true}};
  CHECK(gpf::cuda::encode_plan(plan) == "2:0:1 0:1:0 5:7:1");
  const auto back = gpf::cuda::decode_plan(gpf::cuda::encode_plan(plan));
  REQUIRE(back);
  CHECK(back->gpus == plan.gpus);
  for (const char* bad : {"", "0:0:1", "0:0:1 0:1:1", "0:0:1 1:1:2", "0:0 1:1:1", "0:0:1  1:1:1",
                          "a:0:1 1:1:1", "0:0:1 1:1:1 ", "-1:0:1 1:1:1", "0:0:1 99999:1:1"}) {
    INFO(bad);
    CHECK_FALSE(gpf::cuda::decode_plan(bad));
  }
}
