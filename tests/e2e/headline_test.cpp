// The verdict at a glance, end to end: the header, the line format, the env comment and the JSON
// say what the job gets and the root cause; the text says what was not checked; exec leaves the
// command's own options to the command.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

using namespace gpf::test;
using nlohmann::json;

namespace {

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// The text report on a terminal wide enough that the header is not wrapped.
RunResult wide_text(const std::vector<std::string>& args) {
  return run_preflight(args, {{"COLUMNS", "200"}});
}

bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace

TEST_CASE("one GPU kept on an old kernel: the header, line and JSON say 1 of 4") {
  const auto root = fixture("old-kernel-4gpu");
  const auto text = wide_text({"--root", root});
  CHECK(text.exit_code == 0);
  CHECK(first_line(text.out) ==
        "gpu-preflight: WARN — ready on 1 of 4 GPUs (multi-GPU start-up untested on kernel 5.4.0)");
  CHECK(has(text.out, "GPUs (* = recommended):\n * 0 0000:18:00.0"));
  CHECK(has(text.out, "effect:   the recommendation keeps one GPU"));
  CHECK(run_preflight({"--root", root, "--format", "line"}).out ==
        "WARN 1/4 GPUs: kernel.below-5.5-multi-gpu\n");

  const auto j = json::parse(run_preflight({"--root", root, "--format", "json"}).out);
  CHECK(j.at("recommended_gpus") == 1);
  CHECK(j.at("usable_gpus") == 4);
  CHECK(j.at("recommendation").at("single_gpu_only") == true);
  CHECK(j.at("primary_cause").at("id") == "kernel.below-5.5-multi-gpu");
  CHECK(j.at("gpus").at(0).at("recommended") == true);
  CHECK(j.at("gpus").at(1).at("recommended") == false);

  // --min-gpus is judged against what the job gets, and says so.
  const auto four = run_preflight({"--root", root, "--min-gpus", "4", "--format", "json"});
  CHECK(four.exit_code == 1);
  const auto jf = json::parse(four.out);
  CHECK(jf.at("primary_cause").at("id") == "kernel.below-5.5-multi-gpu");
  bool said = false;
  for (const auto& f : jf.at("findings")) {
    if (f.at("id") == "gpu.too-few-usable") {
      said = f.at("message") == "1 GPU recommended for the job (4 usable), 4 required (--min-gpus)";
    }
  }
  CHECK(said);
  CHECK(run_preflight({"--root", root, "--min-gpus", "4", "--format", "line"}).out ==
        "FAIL kernel.below-5.5-multi-gpu +1 more\n");
}

TEST_CASE("a GPU-level fail drops its GPU: the header says so and names it") {
  const auto root = fixture("log-xid79-one-of-8");
  const auto text = wide_text({"--root", root});
  CHECK(text.exit_code == 0);
  CHECK(
      first_line(text.out) ==
      "gpu-preflight: WARN — ready on 7 of 8 GPUs; 1 GPU left out: gpu.fallen-off-bus 0000:5d:00.0");
  CHECK(has(text.out, "effect:   this GPU is left out of the recommendation"));
  // Too few for the job: the drain reason names the GPU, not the count.
  CHECK(run_preflight({"--root", root, "--min-gpus", "8", "--format", "line"}).out ==
        "FAIL gpu.fallen-off-bus 0000:5d:00.0 +1 more\n");
}

TEST_CASE("the root cause leads: nouveau before the driver it keeps away") {
  const auto root = fixture("nouveau");
  CHECK(first_line(wide_text({"--root", root}).out) ==
        "gpu-preflight: FAIL — not ready: module.nouveau-loaded (+1 more)");
  CHECK(run_preflight({"--root", root, "--format", "line"}).out ==
        "FAIL module.nouveau-loaded +1 more\n");
  CHECK(has(run_preflight({"--root", root, "--format", "env"}).out,
            "# gpu-preflight verdict: fail (not ready: module.nouveau-loaded (+1 more))\n"));
}

TEST_CASE("the job's own CUDA_VISIBLE_DEVICES: said when it chose, MIG instances kept") {
  const auto restricted = wide_text({"--root", fixture("environ-restricted")});
  CHECK(first_line(restricted.out) ==
        "gpu-preflight: PASS — ready on 2 of 4 GPUs (CUDA_VISIBLE_DEVICES=1,3 chose them)");
  CHECK(has(restricted.out, " * 1 0000:2a:00.0"));
  CHECK(has(restricted.out, "\n   0 0000:18:00.0"));

  const auto mig = run_preflight({"--root", fixture("topo-mig-uuid"), "--format", "env"});
  CHECK(mig.exit_code == 0);
  CHECK(has(mig.out, "export CUDA_VISIBLE_DEVICES='MIG-4f5c2a0e-8d41-5b6a-9e3c-1d2b3c4d5e6f'\n"));
  CHECK_FALSE(has(mig.out, "CUDA_DEVICE_ORDER"));

  const auto none = run_preflight({"--root", fixture("topo-mig-none"), "--format", "env"});
  CHECK(none.exit_code == 1);
  CHECK(has(none.out, "export CUDA_VISIBLE_DEVICES=''\n"));
}

TEST_CASE("the text says what was not checked, after the findings, and a live probe's replay "
          "is not in it") {
  const auto plain = wide_text({"--root", fixture("healthy-4gpu"), "--no-cuda"});
  // The verdict, then the findings; "not checked" follows them, before the GPU table.
  const auto skipped = plain.out.find("\nnot checked: ");
  REQUIRE(skipped != std::string::npos);
  CHECK(plain.out.rfind("\n[", skipped) != std::string::npos);
  CHECK(skipped < plain.out.find("\nGPUs"));
  const auto lines = plain.out.substr(skipped, plain.out.find("\nGPUs") - skipped);
  CHECK(has(lines,
            "\nnot checked: kernel log (the snapshot has no kernel log); InfiniBand/RoCE ports "
            "(/sys/class/infiniband does not exist); CUDA start-up (--no-cuda)"));
  CHECK(has(lines, "GPU health (NVML) (the snapshot has no nvml.json"));

  const auto replayed = wide_text({"--root", fixture("cuda-replay-gpu-hung")});
  const auto from = replayed.out.find("\nnot checked: ");
  CHECK_FALSE(has(replayed.out.substr(from == std::string::npos ? replayed.out.size() : from),
                  "CUDA start-up ("));
}

TEST_CASE("the closing line on FAIL names the first remedy and how to read more") {
  const auto r = wide_text({"--root", fixture("missing-uvm")});
  CHECK(r.exit_code == 1);
  auto closing = r.out.substr(r.out.rfind("\nFAIL: ") + 1);
  for (auto wrap = closing.find("\n  "); wrap != std::string::npos; wrap = closing.find("\n  ")) {
    closing.replace(wrap, 3, " "); // the line is wrapped to the terminal's width
  }
  CHECK(has(closing, "not ready: devnode.nvidia-uvm-missing; first: "));
  CHECK(has(closing, "nvidia-modprobe -u -c=0"));
  CHECK(has(closing, "(gpu-preflight explain devnode.nvidia-uvm-missing)"));
}

TEST_CASE("a recommendation by UUID is matched by a UUID column in the GPU table") {
  const auto uuid =
      wide_text({"--root", fixture("healthy-4gpu"), "--no-cuda", "--cvd-form", "uuid"});
  CHECK(has(uuid.out, "\n  0 0000:18:00.0 GPU-00000000-1111-2222-3333-444455550000 NVIDIA H100"));
  const auto index = wide_text({"--root", fixture("healthy-4gpu"), "--no-cuda"});
  CHECK(has(index.out, "\n  0 0000:18:00.0 NVIDIA H100"));
}

TEST_CASE("a root directory that is not a snapshot is the checker's error, exit 2") {
  TempDir t;
  const auto r = run_preflight({"--root", t.path.string()});
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "not a snapshot"));
  CHECK(r.out.empty());
}

TEST_CASE("exec: everything from the command's first word on is the command's") {
  const auto root = fixture("healthy-4gpu");
  // No "--": the job's --min-gpus, --format and --strict are its own.
  const auto own = run_preflight({"exec", "--root", root, "sh", "-c", "printf '%s ' \"$@\"", "sh",
                                  "--min-gpus", "8", "--format", "json", "--strict"});
  CHECK(own.exit_code == 0);
  CHECK(own.out == "--min-gpus 8 --format json --strict ");
  // Check options before the command are the checker's, in both spellings.
  CHECK(run_preflight({"exec", "--root", root, "--min-gpus", "8", "true"}).exit_code == 1);
  CHECK(run_preflight({"exec", "--min-gpus=8", "--root", root, "true"}).exit_code == 1);
  CHECK(run_preflight({"--root", root, "exec", "--quiet", "true"}).exit_code == 0);
  // "--" is still accepted, and a command that starts with a dash needs it.
  const auto dashed = run_preflight({"exec", "--root", root, "--", "sh", "-c", "echo ok"});
  CHECK(dashed.out == "ok\n");
  const auto none = run_preflight({"exec", "--root", root});
  CHECK(none.exit_code == 2);
  CHECK(has(none.err, "no command given"));
  // On a node that is not ready too: the command line is checked before any probe runs, so no
  // report comes first and nothing dereferences the missing command (it crashed with SIGSEGV).
  const auto broken = fixture("no-driver");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"exec", "--root", broken},
        std::vector<std::string>{"exec", "--root", broken, "--"},
        std::vector<std::string>{"exec", "--root", broken, "--quiet"},
        std::vector<std::string>{"exec", "--root", broken, "--min-gpus", "8"}}) {
    const auto r = run_preflight(args);
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "no command given"));
    CHECK_FALSE(has(r.err, "not starting"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("the versions a ticket needs are under the verdict, in the line and the env comment") {
  const auto root = fixture("healthy-4gpu");
  const auto j = json::parse(run_preflight({"--root", root, "--format", "json"}).out);
  const json& facts = j.at("facts");
  const std::string driver = facts.at("driver").at("version").get<std::string>();
  const std::string flavour = facts.at("driver").at("flavour").get<std::string>();
  const std::string kernel = facts.at("kernel").at("release").get<std::string>();
  std::string versions = "driver " + driver;
  if (flavour == "open" || flavour == "proprietary") {
    versions += " (" + flavour + ")";
  }
  if (facts.at("cuda").at("driver_cuda_version").is_string()) {
    versions += ", CUDA " + facts.at("cuda").at("driver_cuda_version").get<std::string>();
  }
  versions += ", kernel " + kernel;
  const auto text = wide_text({"--root", root});
  const auto second = text.out.substr(text.out.find('\n') + 1);
  CHECK(first_line(second) == "  " + versions);
  const auto line = run_preflight({"--root", root, "--format", "line"}).out;
  CHECK(line ==
        fmt::format("{} 4/4 GPUs; {}\n", j.at("verdict") == "pass" ? "PASS" : "WARN", versions));
  CHECK(line.size() <= 81);
  CHECK(has(run_preflight({"--root", root, "--format", "env"}).out, "\n# " + versions + "\n"));
}

TEST_CASE("the env format: each id once, failures first; no GPU exported on a fail") {
  const auto acs = run_preflight({"--root", fixture("topo-acs-redirect"), "--format", "env"}).out;
  const auto first = acs.find("# warn: pcie.acs-redirect");
  REQUIRE(first != std::string::npos);
  CHECK(acs.find("# warn: pcie.acs-redirect", first + 1) == std::string::npos);

  // --min-gpus leaves a recommendation of fewer GPUs: a fail exports none of them
  const auto fail =
      run_preflight({"--root", fixture("old-kernel-4gpu"), "--min-gpus", "4", "--format", "env"});
  CHECK(fail.exit_code == 1);
  CHECK(has(fail.out, "export CUDA_VISIBLE_DEVICES=''\n"));
  CHECK_FALSE(has(fail.out, "export CUDA_VISIBLE_DEVICES='0'"));
  const auto fail_at = fail.out.find("# fail: ");
  const auto warn_at = fail.out.find("# warn: ");
  REQUIRE(fail_at != std::string::npos);
  CHECK((warn_at == std::string::npos || fail_at < warn_at));
}
