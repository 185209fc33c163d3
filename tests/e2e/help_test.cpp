// The command line as a new user meets it: help with the check options, examples and exit codes,
// metavars in words, errors in the tool's words with a suggestion for a near miss, `help CMD`,
// `explain` by Xid number, `--min-gpus all`, and the completion scripts.
#include "support/run.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

using namespace gpf::test;
using nlohmann::json;

namespace {

// Whether haystack holds needle, a line break counting as a space (the text is wrapped).
bool has(const std::string& haystack, const std::string& needle) {
  std::string flat;
  for (char c : haystack) {
    if (c == '\n') {
      c = ' ';
    }
    if (c != ' ' || flat.empty() || flat.back() != ' ') {
      flat += c;
    }
  }
  return haystack.find(needle) != std::string::npos || flat.find(needle) != std::string::npos;
}

// The one error line: exit 2, nothing on stdout, "gpu-preflight: error: " and one line.
std::string error_of(const std::vector<std::string>& args) {
  const auto r = run_preflight(args);
  INFO(args.front());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("gpu-preflight: error: ", 0) == 0);
  return r.err;
}

} // namespace

TEST_CASE("check --help lists the check options, since check is the default command") {
  const auto r = run_preflight({"check", "--help"});
  CHECK(r.exit_code == 0);
  for (const char* opt : {"--root DIR", "--min-gpus N", "--timeout,--cuda-timeout SEC",
                          "--dmesg FILE", "--format FORMAT", "--json-out FILE", "--strict",
                          "--no-cuda", "--verbose", "--expect-cuda X.Y"}) {
    INFO(opt);
    CHECK(has(r.out, opt));
  }
  CHECK(has(r.out, "Examples:"));
  // CLI11's own metavars are not shown
  for (const char* raw : {"INT", "TEXT", "FLOAT", "in [0 - 65536]", ":{"}) {
    INFO(raw);
    CHECK_FALSE(has(r.out, raw));
  }
}

TEST_CASE("the top-level help has examples, exit codes, the subcommands and a docs pointer") {
  const auto r = run_preflight({"--help"});
  CHECK(r.exit_code == 0);
  for (const char* part :
       {"Examples:", "Exit status:", "  0  ready", "  1  not ready", "  2  the checker",
        "man gpu-preflight", "NO_COLOR", "--root DIR", "--min-gpus N", "explain 79"}) {
    INFO(part);
    CHECK(has(r.out, part));
  }
  for (const char* cmd : {"check", "exec", "snapshot", "rules", "explain", "help", "completion"}) {
    INFO(cmd);
    CHECK(has(r.out, std::string("\n  ") + cmd + " "));
  }
  CHECK_FALSE(has(r.out, "INT:INT"));
  CHECK_FALSE(has(r.out, "TEXT"));
  // it fits an 80-column terminal
  std::size_t start = 0;
  for (std::size_t nl = r.out.find('\n'); nl != std::string::npos; nl = r.out.find('\n', start)) {
    INFO(r.out.substr(start, nl - start));
    CHECK(nl - start <= 80);
    start = nl + 1;
  }
}

TEST_CASE("help [CMD] is --help of the tool or of the command") {
  CHECK(run_preflight({"help"}).out == run_preflight({"--help"}).out);
  CHECK(run_preflight({"help", "check"}).out == run_preflight({"check", "--help"}).out);
  const auto snap = run_preflight({"help", "snapshot"});
  CHECK(snap.exit_code == 0);
  CHECK(has(snap.out, "-o,--output DIR"));
  CHECK(has(error_of({"help", "snapsot"}), "did you mean \"snapshot\"?"));
}

TEST_CASE("every command's help is its own: its examples and exit codes, no CLI11 metavars") {
  const auto top = run_preflight({"--help"}).out;
  const std::string top_example = "check this host (check is the default)";
  REQUIRE(has(top, top_example));
  for (const char* cmd : {"check", "exec", "snapshot", "rules", "explain", "help", "completion",
                          "summarize", "diff", "explain-log"}) {
    INFO(cmd);
    const auto r = run_preflight({cmd, "--help"});
    CHECK(r.exit_code == 0);
    if (std::string(cmd) != "check") { // check is the default command: its help is the top's
      CHECK_FALSE(has(r.out, top_example));
    }
    for (const char* raw : {"TEXT", "INT", ":{", "AGE:AGE"}) {
      INFO(raw);
      CHECK_FALSE(has(r.out, raw));
    }
  }
  for (const char* cmd : {"summarize", "diff"}) {
    INFO(cmd);
    const auto r = run_preflight({cmd, "--help"});
    CHECK(has(r.out, "Examples:\n  gpu-preflight " + std::string(cmd)));
    CHECK(has(r.out, "Exit status:"));
    CHECK(has(r.out, "--format FORMAT"));
  }
}

TEST_CASE("typos in commands and options get a suggestion") {
  CHECK(has(error_of({"chekc"}), "unknown command \"chekc\" (did you mean \"check\"?)"));
  CHECK(has(error_of({"explian", "79"}), "did you mean \"explain\"?"));
  CHECK(has(error_of({"--frmat", "json"}),
            "unknown option \"--frmat\" (did you mean \"--format\"?)"));
  CHECK(has(error_of({"check", "--min-gpu", "2"}), "did you mean \"--min-gpus\"?"));
  CHECK(has(error_of({"--strcit"}), "did you mean \"--strict\"?"));
  // nothing close: no suggestion, still one line
  CHECK_FALSE(has(error_of({"--zzzzzzzz"}), "did you mean"));
  // other tools' spellings name this tool's, and a one-letter near miss is no suggestion
  CHECK(has(error_of({"-v"}), "unknown option \"-v\" (did you mean \"--verbose\"?)"));
  CHECK(has(error_of({"--json"}), "(did you mean \"--format json\"?)"));
  CHECK(has(error_of({"-q"}), "(did you mean \"--format line\"?)"));
  CHECK(has(error_of({"exec", "-q", "true"}), "(did you mean \"--quiet\"?)"));
  CHECK_FALSE(has(error_of({"-x"}), "did you mean"));
}

TEST_CASE("bad values are reported in the tool's words") {
  CHECK(has(error_of({"--min-gpus", "abc"}), "--min-gpus: \"abc\" is not a number"));
  CHECK(has(error_of({"check", "--min-gpus", "1x"}), "--min-gpus: \"1x\" is not a number"));
  CHECK(has(
      error_of({"--format", "jsn"}),
      "--format: \"jsn\" is not one of text, json, env, line, prometheus (did you mean \"json\"?)"));
  CHECK(has(error_of({"--timeout", "soon"}), "--timeout: \"soon\" is not a number of seconds"));
  CHECK(has(error_of({"--expect-cuda", "twelve"}), "is not a CUDA version"));
  CHECK(has(error_of({"completion", "tcsh"}), "\"tcsh\" is not one of bash, zsh, fish"));
  // CLI11's own wording ("At Most 1 required but received 2", "1 required N missing") never shows
  const auto twice = error_of({"check", "--min-gpus", "1", "--min-gpus", "2"});
  CHECK(has(twice, "--min-gpus was given 2 times; give it once"));
  CHECK_FALSE(has(twice, "At Most"));
  const auto bare = error_of({"check", "--min-gpus"});
  CHECK(has(bare, "--min-gpus needs a value"));
  CHECK_FALSE(has(bare, "required"));
}

TEST_CASE("min-gpus all: needs every GPU the driver lists") {
  const auto healthy = run_preflight({"--root", fixture("healthy-4gpu"), "--min-gpus", "all"});
  CHECK(healthy.exit_code == 0);
  // excluded-gpu: one of the driver's GPUs is unusable, so "all" cannot be met
  const auto some = run_preflight({"--root", fixture("excluded-gpu")});
  REQUIRE(some.exit_code == 0);
  const auto all = run_preflight(
      {"check", "--root", fixture("excluded-gpu"), "--min-gpus", "all", "--format", "json"});
  CHECK(all.exit_code == 1);
  const auto j = json::parse(all.out);
  bool too_few = false;
  for (const auto& f : j.at("findings")) {
    if (f.at("id") == "gpu.too-few-usable") {
      too_few = true;
      CHECK(has(f.at("message").get<std::string>(), "4 required"));
    }
  }
  CHECK(too_few);
}

TEST_CASE("explain takes an Xid number, and suggests the nearest rule ids") {
  for (const char* word : {"xid.79", "79", "Xid 79", "xid79"}) {
    INFO(word);
    const auto r = run_preflight({"explain", word});
    CHECK(r.exit_code == 0);
    CHECK(r.out.rfind("Xid 79 (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", 0) == 0);
    CHECK(has(r.out, "\n  judged by:      gpu.fallen-off-bus\n"));
    CHECK(has(r.out, "\ngpu.fallen-off-bus  (fail"));
  }
  // NVIDIA's action beside gpu-preflight's judgement, and why they differ where they do
  const auto x79 = run_preflight({"explain", "79"}).out;
  CHECK(has(x79, "\n  NVIDIA:         GPU has fallen off the bus; immediate action RESTART_BM"));
  CHECK(has(x79, "\n  gpu-preflight:  reboot (fallen off the bus)\n"));
  CHECK(has(x79, "analyzing-xid-catalog.html"));
  const auto x110 = run_preflight({"explain", "110"}).out;
  CHECK(has(x110, "immediate action RESET_GPU"));
  CHECK(has(x110, "\n  gpu-preflight:  reboot\n"));
  CHECK(has(x110, "\n  why it differs: NVIDIA: reset the GPU; the driver asks for a cold reset"));
  CHECK(has(run_preflight({"explain", "13"}).out, "judged by:      xid.application"));
  CHECK(has(run_preflight({"explain", "48"}).out, "judged by:      xid.reset-required"));
  const auto sx = run_preflight({"explain", "sxid.22003"});
  CHECK(sx.exit_code == 0);
  CHECK(sx.out.rfind("SXid 22003 (Minion Halt)\n", 0) == 0);
  CHECK(has(sx.out, "\n  NVIDIA:         always fatal; recovery: Restart the host"));
  CHECK(has(sx.out, "\n  gpu-preflight:  fatal to the NVSwitch fabric\n"));
  CHECK(has(sx.out, "\n  judged by:      nvswitch.sxid-fatal\n"));
  CHECK(
      has(run_preflight({"explain", "SXid 11004"}).out, "why it differs: non-fatal in the guide"));
  const auto unknown = run_preflight({"explain", "9999"});
  CHECK(unknown.exit_code == 0);
  CHECK(has(unknown.out, "Xid 9999 is not in the Xid catalog"));
  CHECK(has(unknown.out, "\nxid.unknown  ("));
  CHECK(has(error_of({"explain", "devnode.uvm-missing"}), "\"devnode.nvidia-uvm-missing\""));
  CHECK(has(error_of({"explain", "fallen-off"}), "did you mean \"gpu.fallen-off-bus\"?"));
}

TEST_CASE("completion scripts are generated from the options and list every command") {
  const auto bash = run_preflight({"completion", "bash"});
  REQUIRE(bash.exit_code == 0);
  CHECK(has(bash.out, "complete -F _gpu_preflight gpu-preflight"));
  const auto zsh = run_preflight({"completion", "zsh"});
  REQUIRE(zsh.exit_code == 0);
  CHECK(zsh.out.rfind("#compdef gpu-preflight\n", 0) == 0);
  const auto fish = run_preflight({"completion", "fish"});
  REQUIRE(fish.exit_code == 0);
  CHECK(has(fish.out, "complete -c gpu-preflight -n '__fish_use_subcommand' -l min-gpus -x"));
  for (const auto* script : {&bash.out, &zsh.out, &fish.out}) {
    // (fish names options without their dashes)
    for (const char* word : {"check", "exec", "snapshot", "explain", "completion", "min-gpus",
                             "json-out", "verbose", "gpu.fallen-off-bus", "markdown"}) {
      INFO(word);
      CHECK(has(*script, word));
    }
  }
}

TEST_CASE("a check option given to a command that does not use it is an error, not ignored") {
  const auto explain = run_preflight({"--format", "json", "explain", "79"});
  CHECK(explain.exit_code == 2);
  CHECK_THAT(explain.err, Catch::Contains("explain takes no --format"));
  CHECK(explain.out.empty());
  // after the command's name too (the option falls through to the top level)
  const auto summarize = run_preflight({"summarize", "--no-cuda", "/nonexistent"});
  CHECK(summarize.exit_code == 2);
  CHECK_THAT(summarize.err, Catch::Contains("summarize takes no --no-cuda"));
  // snapshot writes files: a report option before it would be ignored
  const auto snap = run_preflight({"--format", "json", "snapshot", "-o", "/nonexistent/gpf-snap"});
  CHECK(snap.exit_code == 2);
  CHECK_THAT(snap.err, Catch::Contains("snapshot takes no --format"));
  CHECK(run_preflight({"snapshot", "--json-out", "/dev/null", "-o", "/nonexistent/gpf-snap"})
            .exit_code == 2);
  // what a command does use still works
  CHECK(run_preflight({"rules", "--format", "json"}).exit_code == 0);
  CHECK(run_preflight({"--format", "json", "rules"}).exit_code == 0);
  CHECK(run_preflight({"explain", "79"}).exit_code == 0);
}

TEST_CASE("rules and explain name a documentation source where the package installs it") {
  const auto rules = run_preflight({"rules"}, {{"COLUMNS", "200"}});
  CHECK(rules.exit_code == 0);
  CHECK_THAT(rules.out, Catch::Contains("source: /usr/share/doc/gpu-preflight/sources.md#") &&
                            !Catch::Contains("source: docs/"));
  const auto explain = run_preflight({"explain", "gpu.crash-dump"});
  CHECK_THAT(explain.out,
             Catch::Contains("/usr/share/doc/gpu-preflight/sources.md#other-kernel-log-messages"));
  // the JSON keeps the repository path, which docs/rules.md links
  CHECK_THAT(run_preflight({"rules", "--format", "json"}).out,
             Catch::Contains("\"source\": \"docs/sources.md#"));
}

TEST_CASE("the README's option table lists every option of check") {
  std::ifstream in(std::string(GPF_SOURCE_DIR) + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(readme.empty());
  const auto help = run_preflight({"check", "--help"});
  REQUIRE(help.exit_code == 0);
  std::size_t options = 0;
  for (std::size_t at = help.out.find("\n  --"); at != std::string::npos;
       at = help.out.find("\n  --", at + 1)) {
    const std::size_t start = at + 3;
    const std::size_t end = help.out.find_first_of(" ,=[\n", start);
    const std::string name = help.out.substr(start, end - start);
    if (name == "--help" || name == "--version") {
      continue;
    }
    ++options;
    INFO(name);
    CHECK(readme.find("`" + name) != std::string::npos);
  }
  CHECK(options > 20);
}
