// The text report fits its terminal: wrapped to the width (80 off a terminal, COLUMNS honoured)
// with hanging indents, the driver banner shortened (JSON keeps it), info findings folded on a
// pass, a closing line with the verdict and the export, colour and punctuation that follow
// TERM, NO_COLOR and the locale, and a progress line on a terminal's stderr only.
#include "support/run.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gpf::test;
using nlohmann::json;

namespace {

bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl = s.find('\n'); nl != std::string::npos; nl = s.find('\n', start)) {
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  if (start < s.size()) {
    out.push_back(s.substr(start));
  }
  return out;
}

std::size_t columns(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The widest line, not counting a line that holds a URL (never cut, so a terminal can open it).
std::size_t widest(const std::string& text) {
  std::size_t w = 0;
  for (const auto& l : lines_of(text)) {
    if (l.find("://") == std::string::npos) {
      w = std::max(w, columns(l));
    }
  }
  return w;
}

std::string healthy8() {
  return std::string(GPF_SOURCE_DIR) + "/docs/examples/healthy-8gpu";
}

struct PtyRun {
  int exit_code = -1;
  std::string pty; // what the terminal received (stderr, and stdout unless redirected)
};

// Runs the binary with its stderr (and stdout) on a pseudo-terminal of `cols` columns, stdout
// redirected to /dev/null when asked.
PtyRun run_on_pty(const std::vector<std::string>& args,
                  const std::vector<std::pair<std::string, std::string>>& env, bool stdout_null) {
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 100;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (const auto& [k, v] : env) {
      if (v.empty()) {
        ::unsetenv(k.c_str());
      } else {
        ::setenv(k.c_str(), v.c_str(), 1);
      }
    }
    if (stdout_null) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
    }
    std::vector<std::string> argv{GPF_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c;
    for (auto& a : argv) {
      c.push_back(a.data());
    }
    c.push_back(nullptr);
    ::execv(c[0], c.data());
    ::_exit(127);
  }
  PtyRun r;
  char buf[4096];
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 60000) <= 0) {
      break;
    }
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) {
      break; // EIO once the child has exited and closed the terminal
    }
    r.pty.append(buf, static_cast<std::size_t>(n));
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

} // namespace

TEST_CASE("text is wrapped to 80 columns off a terminal, and to COLUMNS when set") {
  for (const auto& name : sweep_fixtures()) {
    INFO(name);
    const auto r80 = run_preflight({"--root", fixture(name), "--verbose"});
    CHECK(widest(r80.out) <= 80);
    const auto r120 = run_preflight({"--root", fixture(name), "--verbose"}, {{"COLUMNS", "120"}});
    CHECK(widest(r120.out) <= 120);
  }
  // the wider terminal gets longer lines, not the same 80
  const auto wide =
      run_preflight({"--root", fixture("missing-uvm"), "--verbose"}, {{"COLUMNS", "120"}});
  CHECK(widest(wide.out) > 80);
}

TEST_CASE("wrapped evidence and remedies hang under their label") {
  const auto r = run_preflight({"--root", fixture("missing-uvm")}, {{"COLUMNS", "60"}});
  const auto lines = lines_of(r.out);
  bool continued = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const bool after_field =
        lines[i - 1].rfind("  remedy:   ", 0) == 0 || lines[i - 1].rfind("  evidence: ", 0) == 0;
    if (after_field && lines[i].rfind("            ", 0) == 0) {
      continued = true;
      CHECK(lines[i][12] != ' ');
    }
  }
  CHECK(continued);
  CHECK(widest(r.out) <= 60);
}

TEST_CASE("a path longer than a line breaks after a slash, not inside a name") {
  const auto r = run_preflight({"--root", fixture("pcie-link-gpu-x8")});
  const auto lines = lines_of(r.out);
  std::size_t broken = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("  evidence: /sys/", 0) == 0 && lines[i].size() > 60 &&
        lines[i + 1].rfind("            ", 0) == 0) {
      INFO(lines[i]);
      ++broken;
      CHECK(lines[i].back() == '/');
    }
  }
  CHECK(broken >= 1);
  CHECK(widest(r.out) <= 80);
  CHECK(has(r.out, "current_link_width: 8"));
}

TEST_CASE("the driver banner is short in text, whole in JSON") {
  // healthy-8gpu's banner: NVIDIA UNIX Open Kernel Module ... Release Build (...) date
  const auto text = run_preflight({"--root", fixture("missing-gpu-node"), "--verbose"});
  CHECK(has(text.out, "NVRM version: 550.54.14 (open kernel"));
  CHECK(has(
      run_preflight({"--root", fixture("missing-gpu-node"), "--verbose"}, {{"COLUMNS", "200"}}).out,
      "NVRM version: 550.54.14 (open kernel module)\n"));
  CHECK_FALSE(has(text.out, "Release Build"));
  const auto j = run_preflight({"--root", fixture("missing-gpu-node"), "--format", "json"});
  CHECK(has(j.out, "Release Build"));
}

TEST_CASE("on a pass, info findings fold into one line unless --verbose") {
  const auto folded = run_preflight({"--root", healthy8()});
  REQUIRE(folded.exit_code == 0);
  const auto verbose = run_preflight({"--root", healthy8(), "--verbose"});
  const auto infos = [](const std::string& s) {
    std::size_t n = 0;
    for (const auto& l : lines_of(s)) {
      n += l.rfind("[INFO] ", 0) == 0 ? 1 : 0;
    }
    return n;
  };
  REQUIRE(infos(verbose.out) >= 2);
  CHECK(infos(folded.out) == 1);
  CHECK(has(folded.out, "notes (--verbose shows them): "));
  CHECK(lines_of(folded.out).size() < lines_of(verbose.out).size());
  // not folded when the verdict is not a pass
  const auto warn = run_preflight({"--root", fixture("excluded-gpu")});
  CHECK_FALSE(has(warn.out, "--verbose shows them"));
}

TEST_CASE("a closing line repeats the verdict and the export") {
  const auto pass = run_preflight({"--root", healthy8()});
  const auto pl = lines_of(pass.out);
  REQUIRE(!pl.empty());
  // the export is never cut: on its own line when verdict and export do not fit in one
  CHECK(pl[pl.size() - 2] == "PASS: ready on 8 of 8 GPUs;");
  CHECK(pl.back() ==
        "  export CUDA_DEVICE_ORDER='PCI_BUS_ID' CUDA_VISIBLE_DEVICES='0,1,2,3,4,5,6,7'");
  CHECK(lines_of(run_preflight({"--root", healthy8()}, {{"COLUMNS", "120"}}).out).back() ==
        "PASS: ready on 8 of 8 GPUs; export CUDA_DEVICE_ORDER='PCI_BUS_ID' "
        "CUDA_VISIBLE_DEVICES='0,1,2,3,4,5,6,7'");
  // on FAIL the closing line (wrapped) starts with the verdict and ends naming explain
  const auto fail = run_preflight({"--root", fixture("nouveau")}).out;
  const auto closing = fail.substr(fail.rfind("\nFAIL: ") + 1);
  CHECK(closing.rfind("FAIL: not ready: module.nouveau-loaded", 0) == 0);
  CHECK(has(closing, "; first: "));
  CHECK(has(closing, "explain module.nouveau-loaded)\n"));
}

TEST_CASE("ASCII punctuation when the locale is not UTF-8") {
  const auto utf8 = run_preflight({"--root", healthy8()});
  CHECK(has(utf8.out, "PASS \u2014 ready"));
  for (const char* locale : {"C", "POSIX", "en_US.ISO-8859-1"}) {
    INFO(locale);
    const auto ascii = run_preflight({"--root", healthy8()}, {{"LC_ALL", locale}});
    CHECK(has(ascii.out, "gpu-preflight: PASS - ready on 8 of 8 GPUs"));
    CHECK(std::none_of(ascii.out.begin(), ascii.out.end(),
                       [](char c) { return static_cast<unsigned char>(c) >= 0x80; }));
  }
}

TEST_CASE("colour on a terminal, none with TERM=dumb or NO_COLOR; width from the terminal") {
  const std::vector<std::string> args{"--root", healthy8(), "--no-cuda"};
  const auto plain_env = std::vector<std::pair<std::string, std::string>>{
      {"LC_ALL", "C.UTF-8"}, {"COLUMNS", ""}, {"NO_COLOR", ""}};
  auto env = plain_env;
  env.emplace_back("TERM", "xterm");
  const auto colour = run_on_pty(args, env, false);
  CHECK(colour.exit_code == 0);
  CHECK(has(colour.pty, "\x1b[1;32mPASS\x1b[0m"));
  CHECK(widest(colour.pty) > 80); // the terminal is 100 columns wide
  env = plain_env;
  env.emplace_back("TERM", "dumb");
  CHECK_FALSE(has(run_on_pty(args, env, false).pty, "\x1b["));
  env = plain_env;
  env.emplace_back("NO_COLOR", "1");
  env.emplace_back("TERM", "xterm");
  CHECK_FALSE(has(run_on_pty(args, env, false).pty, "\x1b["));
}

TEST_CASE("a progress line on a terminal while the live probes run, nothing in a pipe") {
  const std::vector<std::string> args{"--root",         fixture("cuda-4gpu"), "--libcuda",
                                      GPF_FAKE_LIBCUDA, "--format",           "json"};
  const std::vector<std::pair<std::string, std::string>> env{
      {"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_INIT_MS", "300"}, {"LC_ALL", "C.UTF-8"}};
  const auto tty = run_on_pty(args, env, true);
  CHECK(tty.exit_code == 0);
  const std::string line = "probing CUDA on 4 GPUs\u2026 (deadline 30 s)";
  REQUIRE(has(tty.pty, line));
  // cleared before the process ends: blanked in place, the cursor back at the line's start
  CHECK(has(tty.pty, line + "\r" + std::string(line.size(), ' ') + "\r"));
  auto ascii_env = env;
  ascii_env.back() = {"LC_ALL", "C"};
  CHECK(has(run_on_pty(args, ascii_env, true).pty, "probing CUDA on 4 GPUs... (deadline 30 s)"));
  // through pipes: nothing on stderr, and the report is the same JSON
  std::vector<std::string> piped_args = args;
  const auto piped =
      run_preflight(piped_args, {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_INIT_MS", "300"}});
  CHECK(piped.exit_code == 0);
  CHECK(piped.err.empty());
  CHECK(json::parse(piped.out).at("verdict") == "pass");
  // no GPU listed by the driver (WSL2): CUDA's enumeration will tell, no count in the line
  CHECK(has(run_on_pty(
                {"--root", fixture("cuda-wsl2"), "--libcuda", GPF_FAKE_LIBCUDA, "--format", "json"},
                env, true)
                .pty,
            "probing CUDA\u2026 (deadline 30 s)"));
  // a snapshot replay runs no live probe: no progress line
  CHECK_FALSE(has(run_on_pty({"--root", healthy8()}, env, true).pty, "probing"));
  // --skip-busy on a node where a process holds a GPU: the live probe does not run, nor its line
  const std::vector<std::string> busy{"--root",      fixture("proc-stray-gpu3"),
                                      "--libcuda",   GPF_FAKE_LIBCUDA,
                                      "--skip-busy", "--format",
                                      "json"};
  CHECK(has(run_preflight(busy, {{"FAKE_CUDA_GPUS", "4"}}).out, "--skip-busy: GPUs in use"));
  CHECK_FALSE(has(run_on_pty(busy, env, true).pty, "probing"));
}
