// The command line. CLI11 parses; run_cli maps every outcome to 0/1/2 (CLI11's own codes, which
// start at 100, never leak out). Subcommands: check (default), exec, snapshot.
#include "gpf/cli/cli.hpp"

#include "gpf/capture/snapshot.hpp"
#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/report/report.hpp"
#include "gpf/report/rules_doc.hpp"
#include "gpf/rules/user_rules.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/util/checker_failure.hpp"
#include "gpf/version_info.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
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
  std::string libcuda; // --libcuda (empty: the loader's libcuda.so.1)
  std::string libnvml; // --libnvml (empty: the loader's libnvidia-ml.so.1)
  std::string cvd_form = "index";
  std::string json_out; // --json-out: the JSON report also goes to this file
  ProbeOptions probe;
  CheckOptions check;
  RuleOverrides rules;
  std::string rules_format; // `rules --format`
  std::string explain_id;   // `explain ID`
  ExecOptions exec;
  std::vector<std::string> command; // exec
  CaptureOptions capture;           // snapshot
  std::string capture_dir;
  std::string capture_mode = "0600";
};

struct CheckRun {
  Facts facts;
  Assessment assessment;
  int exit_code = 0;
};

bool use_color(const std::string& mode, int fd) {
  if (mode == "always") {
    return true;
  }
  if (mode == "never") {
    return false;
  }
  const char* no_color = std::getenv("NO_COLOR"); // https://no-color.org: any non-empty value
  return (no_color == nullptr || *no_color == '\0') && ::isatty(fd) == 1;
}

void add_check_options(CLI::App& app, CliOptions& o) {
  app.add_option("--root", o.root,
                 "Judge a snapshot directory laid out like the host instead of this host")
      ->check(CLI::Validator(
          [](std::string& v) {
            return v.empty() ? std::string("an empty --root names no directory") : std::string();
          },
          "DIR"));
  app.add_option("--format", o.format, "Output format")
      ->check(CLI::IsMember({"text", "json", "env", "line"}));
  app.add_flag("--strict", o.check.strict, "Treat warnings as not ready (exit 1)");
  app.add_flag("--expect-idle", o.check.expect_idle, "Warn about processes already on a GPU");
  app.add_option("--min-gpus", o.check.min_gpus, "GPUs the job needs (fewer usable: fail)")
      ->check(CLI::Range(0, 1 << 16));
  app.add_option("--color", o.color, "Colour in text output")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option(
      "--dmesg", o.probe.dmesg_file,
      "Read the kernel log from FILE ('-' = stdin) instead of the live log or the snapshot's dmesg.txt");
  app.add_option(
         "--expect-cuda", o.probe.expect_cuda,
         "CUDA version the job was built with, e.g. torch.version.cuda (default: the installed toolkit's)")
      ->check(CLI::Validator(
          [](std::string& v) {
            const auto parsed = Version::parse_exact(v);
            const bool ok = parsed && parsed->parts().size() >= 2 && parsed->parts().size() <= 3 &&
                            parsed->str().size() <= v.size();
            return ok ? std::string() : "expected a CUDA version X.Y or X.Y.Z, got \"" + v + "\"";
          },
          "X.Y"));
  app.add_option("--rules", o.rules.rules_file, "Site rules file (JSON, see docs/user-rules.md)");
  app.add_option("--disable", o.rules.disable, "Turn a rule off (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--severity", o.rules.severity,
                 "Change a rule's severity: ID=info|warn|fail (repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--no-cuda", o.probe.no_cuda, "Skip the live CUDA probe");
  app.add_flag("--no-nvml", o.probe.no_nvml, "Skip the live NVML health probe");
  app.add_option(
      "--libnvml", o.libnvml,
      "The NVML library to probe (default: libnvidia-ml.so.1 through the loader); with --root, runs the "
      "live probe against it instead of replaying the snapshot's nvml.json");
  app.add_flag(
      "--skip-busy", o.probe.skip_busy,
      "Skip the live CUDA probe when a process (other than NVIDIA's daemons) has a GPU device node open");
  app.add_option(
         "--timeout,--cuda-timeout", o.probe.cuda_timeout_s,
         "Deadline of the CUDA and of the NVML stage (they run side by side), in seconds (default 30)")
      ->check(CLI::Validator(
          [](std::string& v) {
            // CLI::Range lets NaN through (every comparison with it is false)
            double s = 0;
            const bool ok =
                CLI::detail::lexical_cast(v, s) && std::isfinite(s) && s >= 0.1 && s <= 3600.0;
            return ok ? std::string() : "expected seconds between 0.1 and 3600, got \"" + v + "\"";
          },
          "SECONDS"));
  app.add_option(
      "--libcuda", o.libcuda,
      "The CUDA driver library to probe (default: libcuda.so.1 through the loader); with --root, runs the "
      "live probe against it instead of replaying the snapshot's cuda.json");
  app.add_option("--cvd-form", o.cvd_form,
                 "Recommend CUDA_VISIBLE_DEVICES as indices or as GPU UUIDs")
      ->check(CLI::IsMember({"index", "uuid"}));
  app.add_option("--json-out", o.json_out,
                 "Also write the JSON report to FILE (replaced whole), whatever --format says")
      ->type_name("FILE");
}

// The live host, or the --root snapshot; prints the reason when the root is unusable.
std::optional<Host> open_host(const CliOptions& o) {
  auto host = o.root.empty() ? Result<Host>(Host::live()) : Host::snapshot(o.root);
  if (!host) {
    std::cerr << "gpu-preflight: error: " << host.error().message << "\n";
    return std::nullopt;
  }
  // A path mistake (an empty or wrong directory) is not a host without a driver.
  if (!o.root.empty() && host->absent("proc") && host->absent("sys") && host->absent("dev")) {
    std::cerr
        << "gpu-preflight: error: --root " << o.root
        << ": not a snapshot (it holds none of proc/, sys/, dev/; see docs/snapshot-format.md)\n";
    return std::nullopt;
  }
  return std::move(host).value();
}

CheckRun perform_check(const Host& host, const CliOptions& o, std::span<const Rule> rules) {
  CheckRun run;
  run.facts = collect_facts(host, o.probe);
  run.assessment = assess(run.facts, rules, o.check);
  run.exit_code = exit_code_for(run.assessment.verdict, o.check.strict);
  return run;
}

int write_stdout(const std::string& out) {
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    std::cerr << "gpu-preflight: error: cannot write the report\n";
    return k_exit_error;
  }
  return 0;
}

// --json-out: false (after printing why) when the file cannot be written.
bool write_json_out(const CliOptions& o, const Report& report) {
  if (o.json_out.empty()) {
    return true;
  }
  if (auto w = write_file_replacing(o.json_out, render_json(report)); !w) {
    std::cerr << "gpu-preflight: error: cannot write " << o.json_out << ": " << w.error().message
              << "\n";
    return false;
  }
  return true;
}

int run_check(const CliOptions& o, std::span<const Rule> rules) {
  auto host = open_host(o);
  if (!host) {
    return k_exit_error;
  }
  const CheckRun run = perform_check(*host, o, rules);
  const Report report{run.facts, run.assessment, run.exit_code};
  if (!write_json_out(o, report)) {
    return k_exit_error;
  }
  std::string out;
  if (o.format == "json") {
    out = render_json(report);
  } else if (o.format == "env") {
    out = render_env(report);
  } else if (o.format == "line") {
    out = render_line(report);
  } else {
    out = render_text(report, use_color(o.color, STDOUT_FILENO));
  }
  const int written = write_stdout(out);
  return written != 0 ? written : run.exit_code;
}

// exec: check, then refuse (exit 1, report on stderr) or replace this process with the command.
int run_exec(const CliOptions& o, std::span<const Rule> rules) {
  auto host = open_host(o);
  if (!host) {
    return k_exit_error;
  }
  const CheckRun run = perform_check(*host, o, rules);
  const Report report{run.facts, run.assessment, run.exit_code};
  if (!write_json_out(o, report)) {
    return k_exit_error;
  }
  if (run.exit_code != 0) {
    std::cerr << render_text(report, use_color(o.color, STDERR_FILENO));
    std::cerr << "gpu-preflight: not starting " << o.command.front() << "\n";
    return k_exit_not_ready;
  }
  std::vector<std::pair<std::string, std::string>> env;
  const auto& rec = run.assessment.recommendation;
  if (!o.exec.keep_env) {
    env.emplace_back("CUDA_VISIBLE_DEVICES", rec.cuda_visible_devices);
    if (rec.cuda_device_order) {
      env.emplace_back("CUDA_DEVICE_ORDER", *rec.cuda_device_order);
    }
  }
  if (!o.exec.quiet) {
    std::string line = render_line(report);
    line.pop_back();
    std::cerr << "gpu-preflight: " << line
              << (o.exec.keep_env ? std::string(" (environment unchanged)")
                                  : " CUDA_VISIBLE_DEVICES=" + rec.cuda_visible_devices)
              << "\n";
  }
  return exec_command(o.command, env);
}

int run_snapshot(CliOptions& o) {
  auto host = open_host(o);
  if (!host) {
    return k_exit_error;
  }
  o.capture.out = o.capture_dir;
  o.capture.mode = static_cast<unsigned>(std::stoul(o.capture_mode, nullptr, 8));
  auto report = capture_snapshot(*host, o.probe, o.capture);
  if (!report) {
    std::cerr << "gpu-preflight: error: " << report.error().message << "\n";
    return k_exit_error;
  }
  std::string out =
      fmt::format("captured {} file(s) into {}\n", report->captured.size(), o.capture_dir);
  for (const auto& u : report->unreadable) {
    out += "  not readable: " + u + "\n";
  }
  for (const auto& t : report->truncated) {
    out += "  cut at the size cap: " + t + "\n";
  }
  out += fmt::format("replay it with: gpu-preflight check --root {}\n", o.capture_dir);
  return write_stdout(out);
}

int run_rules_command(std::span<const Rule> rules, const std::string& format) {
  std::string out;
  if (format == "json") {
    out = rules_json(rules).dump(2) + "\n";
  } else if (format == "markdown") {
    out = render_rules_markdown(rules);
  } else if (format == "text") {
    out = render_rules_text(rules);
  } else {
    std::cerr << "gpu-preflight: error: rules: --format " << format
              << " is not supported (text, json, markdown)\n";
    return k_exit_error;
  }
  return write_stdout(out);
}

int run_explain_command(const RuleSet& rules, const std::string& id) {
  const Rule* rule = rules.find(id);
  if (!rule) {
    std::cerr << "gpu-preflight: error: explain: no rule \"" << id
              << "\" (gpu-preflight rules lists them)\n";
    return k_exit_error;
  }
  const std::string out = render_explain(*rule);
  return write_stdout(out);
}

// Whether the option word takes the next word as its value ("--root DIR", not "--strict" or
// "--root=DIR"). Unknown words take none; CLI11 then reports them.
bool takes_value(const CLI::App& app, const CLI::App& exec, const std::string& word) {
  if (word.find('=') != std::string::npos) {
    return false;
  }
  const CLI::Option* opt = exec.get_option_no_throw(word);
  if (opt == nullptr) {
    opt = app.get_option_no_throw(word);
  }
  return opt != nullptr && opt->get_expected_max() > 0; // flags expect none
}

// exec: everything from the command's first word on belongs to the command (as with env, timeout,
// sudo), so `exec python train.py --min-gpus 8` hands --min-gpus to the job, not to the check.
// Check options go before the command; "--" still ends them. Returns the command and leaves the
// checker's own words in args.
std::vector<std::string> split_exec_command(const CLI::App& app, const CLI::App& exec,
                                            std::vector<std::string>& args) {
  std::size_t i = 0;
  for (; i < args.size() && args[i] != exec.get_name(); ++i) {
    if (args[i] == "--" || args[i].empty() || args[i][0] != '-') {
      return {}; // another subcommand, or no exec at all
    }
    if (takes_value(app, exec, args[i])) {
      ++i;
    }
  }
  for (std::size_t j = i + 1; j < args.size(); ++j) {
    if (args[j] == "--" || args[j].empty() || args[j][0] != '-' || args[j] == "-") {
      const std::size_t first = args[j] == "--" ? j + 1 : j;
      std::vector<std::string> command(args.begin() + static_cast<std::ptrdiff_t>(first),
                                       args.end());
      args.resize(j);
      return command;
    }
    if (takes_value(app, exec, args[j])) {
      ++j;
    }
  }
  return {};
}

} // namespace

int run_cli(int argc, char** argv) {
  CliOptions o;
  CLI::App app{
      "gpu-preflight: can this machine train right now, on which GPUs, and if not, why and what fixes it.",
      "gpu-preflight"};
  app.set_version_flag("--version", std::string(k_tool_name) + " " + k_tool_version);
  app.fallthrough();
  add_check_options(app, o);
  app.add_subcommand("check", "Run the checks and print a verdict (the default)");
  auto* exec = app.add_subcommand(
      "exec", "Run the checks, then start CMD on the recommended GPUs, or refuse (exit 1)");
  exec->add_flag("--quiet", o.exec.quiet, "No summary line on stderr");
  exec->add_flag("--keep-env", o.exec.keep_env, "Start CMD without setting CUDA_VISIBLE_DEVICES");
  exec->footer("Usage: gpu-preflight exec [OPTIONS] [--] CMD [ARGS...]\n"
               "Everything from CMD on is the command's own; the checker's options go before it.");
  auto* snapshot = app.add_subcommand(
      "snapshot", "Capture what the checks read into DIR, for replay with --root DIR");
  snapshot
      ->add_option("-o,--output", o.capture_dir,
                   "The directory to write (must be empty unless --force)")
      ->required();
  snapshot->add_flag("--force", o.capture.force,
                     "Replace a previous snapshot in DIR (a directory holding capture.json)");
  snapshot
      ->add_option(
          "--mode", o.capture_mode,
          "Mode of the files written, octal (default 0600; directories 0700 plus search where read is granted)")
      ->type_name("OCTAL")
      ->check(CLI::Validator(
          [](std::string& v) {
            const bool ok = !v.empty() && v.size() <= 4 &&
                            v.find_first_not_of("01234567") == std::string::npos &&
                            std::stoul(v, nullptr, 8) <= 0777;
            return ok ? std::string()
                      : "expected an octal file mode such as 0600 or 0640, got \"" + v + "\"";
          },
          "OCTAL"));
  snapshot->add_flag(
      "--redact", o.capture.redact,
      "Replace host and user names, IP and MAC addresses, serial numbers and GPU UUIDs consistently");
  auto* rules_cmd =
      app.add_subcommand("rules", "List every rule: id, severity, what it checks, source");
  rules_cmd->add_option("--format", o.rules_format, "Output format")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
  auto* explain_cmd =
      app.add_subcommand("explain", "Explain one rule: meaning, evidence, remedy, sources");
  explain_cmd->add_option("id", o.explain_id, "Rule id, e.g. cuda.driver-too-old")->required();
  app.require_subcommand(0, 1);
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  o.command = split_exec_command(app, *exec, args);
  std::vector<char*> words{argc > 0 ? argv[0] : const_cast<char*>("gpu-preflight")};
  for (auto& a : args) {
    words.push_back(a.data());
  }
  try {
    app.parse(static_cast<int>(words.size()), words.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      app.exit(e); // --help / --version
      return k_exit_ready;
    }
    std::cerr << "gpu-preflight: error: " << e.what() << " (see --help)\n";
    return k_exit_error;
  }
  if (!o.libcuda.empty()) {
    o.probe.libcuda = o.libcuda;
  }
  if (!o.libnvml.empty()) {
    o.probe.libnvml = o.libnvml;
  }
  o.check.cvd_form = o.cvd_form == "uuid" ? CvdForm::uuid : CvdForm::index;
  try {
    auto rules = RuleSet::load(builtin_rules(), o.rules);
    if (!rules) {
      std::cerr << "gpu-preflight: error: " << rules.error().message << "\n";
      return k_exit_error;
    }
    if (rules_cmd->parsed()) {
      return run_rules_command(rules->rules(), o.rules_format.empty() ? o.format : o.rules_format);
    }
    if (explain_cmd->parsed()) {
      return run_explain_command(*rules, o.explain_id);
    }
    if (exec->parsed()) {
      return run_exec(o, rules->rules());
    }
    if (snapshot->parsed()) {
      return run_snapshot(o);
    }
    return run_check(o, rules->rules());
  } catch (const CheckerFailure& e) {
    std::cerr << "gpu-preflight: error: " << e.what()
              << " (the checker could not run; no verdict)\n";
    return k_exit_error;
  } catch (const std::exception& e) {
    std::cerr << "gpu-preflight: internal error: " << e.what() << "\n";
    return k_exit_error;
  }
}

} // namespace gpf
