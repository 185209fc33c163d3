// The command line. CLI11 parses; run_cli maps every outcome to 0/1/2 (CLI11's own codes, which
// start at 100, never leak out).
#include "gpf/cli/cli.hpp"

#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/report/report.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/version_info.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace gpf {
namespace {

struct CliOptions {
  std::string root;
  std::string format = "text";
  std::string color = "auto";
  ProbeOptions probe;
  CheckOptions check;
};

bool use_color(const std::string& mode) {
  if (mode == "always") {
    return true;
  }
  if (mode == "never") {
    return false;
  }
  const char* no_color = std::getenv("NO_COLOR"); // https://no-color.org: any non-empty value
  return (no_color == nullptr || *no_color == '\0') && ::isatty(STDOUT_FILENO) == 1;
}

void add_check_options(CLI::App& app, CliOptions& o) {
  app.add_option("--root", o.root, "Judge a snapshot directory laid out like the host instead of this host");
  app.add_option("--format", o.format, "Output format")->check(CLI::IsMember({"text", "json", "env"}));
  app.add_flag("--strict", o.check.strict, "Treat warnings as not ready (exit 1)");
  app.add_option("--min-gpus", o.check.min_gpus, "GPUs the job needs (fewer usable: fail)")->check(CLI::Range(0, 1 << 16));
  app.add_option("--color", o.color, "Colour in text output")->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--dmesg", o.probe.dmesg_file,
                 "Read the kernel log from FILE ('-' = stdin) instead of the live log or the snapshot's dmesg.txt");
}

int run_check(const CliOptions& o) {
  Result<Host> host = o.root.empty() ? Result<Host>(Host::live()) : Host::snapshot(o.root);
  if (!host) {
    std::cerr << "gpu-preflight: error: " << host.error().message << "\n";
    return k_exit_error;
  }
  const Facts facts = collect_facts(*host, o.probe);
  const Assessment assessment = assess(facts, builtin_rules(), o.check);
  const int code = exit_code_for(assessment.verdict, o.check.strict);
  const Report report{facts, assessment, code};
  std::string out;
  if (o.format == "json") {
    out = render_json(report);
  } else if (o.format == "env") {
    out = render_env(report);
  } else {
    out = render_text(report, use_color(o.color));
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    std::cerr << "gpu-preflight: error: cannot write the report\n";
    return k_exit_error;
  }
  return code;
}

} // namespace

int run_cli(int argc, char** argv) {
  CliOptions o;
  CLI::App app{"gpu-preflight: can this machine train right now, on which GPUs, and if not, why and what fixes it.",
               "gpu-preflight"};
  app.set_version_flag("--version", std::string(k_tool_name) + " " + k_tool_version);
  app.fallthrough();
  add_check_options(app, o);
  auto* check = app.add_subcommand("check", "Run the checks and print a verdict (the default)");
  (void)check;
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      app.exit(e); // --help / --version
      return k_exit_ready;
    }
    std::cerr << "gpu-preflight: error: " << e.what() << " (see --help)\n";
    return k_exit_error;
  }
  try {
    return run_check(o);
  } catch (const std::exception& e) {
    std::cerr << "gpu-preflight: internal error: " << e.what() << "\n";
    return k_exit_error;
  }
}

} // namespace gpf
