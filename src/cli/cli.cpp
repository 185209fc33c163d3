// The command line. CLI11 parses; run_cli maps every outcome to 0/1/2 (CLI11's own codes, which
// start at 100, never leak out). Subcommands: check (default), exec, snapshot, rules, explain,
// help, completion; summarize, diff and explain-log register from their own files. Errors are in
// the tool's words, with a suggestion for a near miss.
#include "gpf/cli/cli.hpp"
#include "gpf/util/plural.hpp"
#include "gpf/util/report_file.hpp"

#include "completion.hpp"
#include "probes/child/runner.hpp"

#include "gpf/capture/snapshot.hpp"
#include "gpf/cli/explain_log.hpp"
#include "gpf/fleet/fleet.hpp"
#include "gpf/host/host.hpp"
#include "gpf/knowledge/kernel_log_tables.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/probes/progress.hpp"
#include "gpf/report/report.hpp"
#include "gpf/report/rules_doc.hpp"
#include "gpf/report/text.hpp"
#include "gpf/rules/user_rules.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/rules/xid.hpp"
#include "gpf/util/checker_failure.hpp"
#include "gpf/util/text.hpp"
#include "gpf/version_info.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpf {
namespace {

struct CliOptions {
  std::vector<std::string> args; // the words after the binary's name, as given
  std::string root;
  std::string format = "text";
  std::string color = "auto";
  std::string libcuda;            // --libcuda (empty: the loader's libcuda.so.1)
  std::string libnvml;            // --libnvml (empty: the loader's libnvidia-ml.so.1)
  std::optional<double> budget_s; // --budget as given (0: none)
  std::string cvd_form = "index";
  std::string nccl_env = "defaults"; // --nccl-env
  std::string json_out;              // --json-out: the JSON report also goes to this file
  std::string prom_out;              // --prom-out: the Prometheus metrics also go to this file
  ProbeOptions probe;
  CheckOptions check;
  RuleOverrides rules;
  std::string rules_format; // `rules --format`
  std::string explain_id;   // `explain ID`
  bool verbose = false;     // --verbose
  ExecOptions exec;
  std::vector<std::string> command; // exec
  CaptureOptions capture;           // snapshot
  std::string capture_dir;
  std::string capture_mode = "0600";
  std::string min_gpus = "1";   // --min-gpus: a number, or "all"
  std::string help_topic;       // `help [CMD]`
  std::string completion_shell; // `completion SHELL`
  // The values of each option that takes one of a few words (for completion).
  std::map<const CLI::Option*, std::vector<std::string>> choices;
  SummarizeOptions summarize;    // summarize (src/fleet/summarize.cpp)
  DiffOptions diff;              // diff (src/fleet/diff.cpp)
  ExplainLogOptions explain_log; // explain-log (src/cli/explain_log.cpp)
};

struct CheckRun {
  Facts facts;
  Assessment assessment;
  int exit_code = 0;
  RunInfo info;
};

bool use_color(const std::string& mode, int fd) {
  if (mode == "always") {
    return true;
  }
  if (mode == "never") {
    return false;
  }
  const char* no_color = std::getenv("NO_COLOR"); // https://no-color.org: any non-empty value
  const char* term = std::getenv("TERM");         // a dumb terminal shows escapes as text
  return (no_color == nullptr || *no_color == '\0') &&
         (term == nullptr || std::string_view(term) != "dumb") && ::isatty(fd) == 1;
}

// A validator whose message is the tool's own ("--min-gpus: \"abc\" is not a number") and which
// adds nothing to the option's metavar in the help.
CLI::Validator validator(std::function<std::string(std::string&)> check) {
  return CLI::Validator(std::move(check), "");
}

// A file the user named is their input, not the node's: a missing one is a usage error (exit 2),
// never a verdict; a FIFO, device or directory where a file is read whole would block or never
// end, so only a regular file is taken (stat(2) only: nothing is opened here).
CLI::Validator user_file(bool regular_only) {
  return validator([regular_only](std::string& v) {
    if (v == "-") {
      return std::string(); // standard input, where the option allows it
    }
    struct stat st {};
    if (::stat(v.c_str(), &st) != 0) {
      return fmt::format("{}: {}", printable(v), std::strerror(errno));
    }
    if (regular_only && !S_ISREG(st.st_mode)) {
      return fmt::format("{}: not a regular file", printable(v));
    }
    return std::string();
  });
}

// --libcuda, --libnvml, --nccl: a path (with '/') must be a regular file (through links: a FIFO or
// a device would block the child's dlopen and read as a driver fault, a node verdict); a bare
// soname goes through the loader's search, as the job's own dlopen would.
CLI::Validator library_file() {
  return validator([](std::string& v) {
    return v.find('/') == std::string::npos ? std::string() : user_file(true)(v);
  });
}

// A number of seconds within [low, high]; CLI::Range would let NaN through (every comparison
// with it is false).
CLI::Validator seconds_within(double low, double high) {
  return validator([low, high](std::string& v) {
    double s = 0;
    if (!CLI::detail::lexical_cast(v, s) || !std::isfinite(s)) {
      return fmt::format("\"{}\" is not a number of seconds", v);
    }
    return s >= low && s <= high ? std::string()
                                 : fmt::format("{} s is outside {} to {} seconds", v, low, high);
  });
}

// The option takes one of a few words: checked with a suggestion, remembered for completion.
CLI::Option* one_of(CliOptions& o, CLI::Option* opt, std::vector<std::string> words) {
  opt->check(validator([words](std::string& v) {
    if (std::find(words.begin(), words.end(), v) != words.end()) {
      return std::string();
    }
    return fmt::format("\"{}\" is not one of {}{}", v, fmt::join(words, ", "),
                       did_you_mean(suggestions(v, words, 1)));
  }));
  o.choices[opt] = std::move(words);
  return opt;
}

// --min-gpus: a count, or "all" (every GPU the driver lists).
std::string check_min_gpus(std::string& v) {
  if (v == "all") {
    return {};
  }
  if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos) {
    return fmt::format("\"{}\" is not a number (a GPU count, or all)", v);
  }
  return std::stoi(v) <= (1 << 16)
             ? std::string()
             : fmt::format("{} is more GPUs than a host has (at most {})", v, 1 << 16);
}

// Whether the locale asks for UTF-8 (LC_ALL, else LC_CTYPE, else LANG; unset is the C locale).
bool utf8_locale() {
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') {
      const std::string l = to_lower(v);
      return contains(l, "utf-8") || contains(l, "utf8");
    }
  }
  return false;
}

} // namespace

// The text report's width: COLUMNS when it holds a sensible number, else the terminal's, else 80.
std::size_t text_width(int fd) {
  if (const char* c = std::getenv("COLUMNS"); c != nullptr) {
    if (const auto n = parse_uint(c); n && *n >= 20 && *n <= 1000) {
      return *n;
    }
  }
  winsize ws{};
  if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return ws.ws_col;
  }
  return 80;
}

namespace {

TextOptions text_options(const CliOptions& o, int fd) {
  return TextOptions{.color = use_color(o.color, fd),
                     .width = text_width(fd),
                     .verbose = o.verbose,
                     .utf8 = utf8_locale()};
}

// The progress line on stderr while slow probes run: only on a terminal, overwritten in place and
// cleared before anything else is written. Nothing of it reaches a pipe or a file.
class Progress {
public:
  explicit Progress(bool utf8) : m_on(::isatty(STDERR_FILENO) == 1), m_utf8(utf8) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { clear(); }
  void show(const std::string& text) {
    if (!m_on) {
      return;
    }
    std::string line = m_utf8 ? text : ascii_punctuation(text);
    clear();
    std::cerr << line << std::flush;
    m_shown = line.size();
  }
  void clear() {
    if (m_shown > 0) {
      std::cerr << '\r' << std::string(m_shown, ' ') << '\r' << std::flush;
      m_shown = 0;
    }
  }

private:
  bool m_on;
  bool m_utf8;
  std::size_t m_shown = 0;
};

void add_check_options(CLI::App& app, CliOptions& o) {
  app.add_option("--root", o.root,
                 "Judge a snapshot directory laid out like the host instead of this host")
      ->type_name("DIR")
      ->check(validator([](std::string& v) {
        return v.empty() ? std::string("an empty value names no directory") : std::string();
      }));
  one_of(o,
         app.add_option("--format", o.format,
                        "Output format: text (default), json, env, line, prometheus")
             ->type_name("FORMAT"),
         {"text", "json", "env", "line", "prometheus"});
  app.add_flag("--strict", o.check.strict, "Treat warnings as not ready (exit 1)");
  app.add_option("--min-gpus", o.min_gpus,
                 "GPUs the job needs, or 'all' for every GPU the driver lists (fewer usable: "
                 "fail; default 1)")
      ->type_name("N")
      ->check(validator(check_min_gpus));
  one_of(o,
         app.add_option("--color", o.color, "Colour in text output: auto (default), always, never")
             ->type_name("WHEN"),
         {"auto", "always", "never"});
  app.add_flag("--verbose", o.verbose,
               "Text report: list every informational finding, even on a pass");
  app.add_flag("--expect-idle", o.check.expect_idle,
               "The node should be idle: a process already on a GPU warns, and that GPU "
               "leaves the recommendation");
  app.add_option(
         "--dmesg", o.probe.dmesg_file,
         "Read the kernel log from FILE ('-' = stdin) instead of the live log or the snapshot's dmesg.txt")
      ->type_name("FILE")
      ->check(user_file(false));
  app.add_option(
         "--expect-cuda", o.probe.expect_cuda,
         "CUDA version the job was built with, e.g. torch.version.cuda (default: the installed toolkit's)")
      ->type_name("X.Y")
      ->check(validator([](std::string& v) {
        const auto parsed = Version::parse_exact(v);
        const bool ok = parsed && parsed->parts().size() >= 2 && parsed->parts().size() <= 3 &&
                        parsed->str().size() <= v.size();
        return ok ? std::string()
                  : fmt::format("\"{}\" is not a CUDA version (X.Y or X.Y.Z, e.g. 12.4)", v);
      }));
  app.add_option("--rules", o.rules.rules_file, "Site rules file (JSON, see docs/user-rules.md)")
      ->type_name("FILE")
      ->check(user_file(true));
  // These two are on the top level and on check: each appends, so that `--disable a check
  // --disable b` turns off both (a bound vector would keep only the last option's values).
  const auto append_to = [](std::vector<std::string>& to) {
    return [&to](const std::vector<std::string>& v) { to.insert(to.end(), v.begin(), v.end()); };
  };
  app.add_option_function<std::vector<std::string>>("--disable", append_to(o.rules.disable),
                                                    "Turn a rule off (repeatable)")
      ->type_name("ID")
      ->allow_extra_args(false);
  app.add_option_function<std::vector<std::string>>(
         "--severity", append_to(o.rules.severity),
         "Change a rule's severity: ID=info|warn|fail (repeatable)")
      ->type_name("ID=LEVEL")
      ->allow_extra_args(false);
  app.add_flag("--no-cuda", o.probe.no_cuda, "Skip the live CUDA probe");
  app.add_flag("--no-nvml", o.probe.no_nvml, "Skip the live NVML health probe");
  app.add_option(
         "--libnvml", o.libnvml,
         "The NVML library to probe (default: libnvidia-ml.so.1 through the loader); with --root, runs the "
         "live probe against it instead of replaying the snapshot's nvml.json")
      ->type_name("FILE")
      ->check(library_file());
  app.add_flag(
      "--skip-busy", o.probe.skip_busy,
      "Skip the live CUDA probe when a process (other than NVIDIA's daemons) has a GPU device node open");
  app.add_option(
         "--timeout,--cuda-timeout", o.probe.cuda_timeout_s,
         "Deadline of the CUDA and of the NVML stage (they run side by side), in seconds (default 30)")
      ->type_name("SEC")
      ->check(seconds_within(0.1, 3600.0));
  app.add_flag(
      "--no-bandwidth", o.probe.no_bandwidth,
      "Skip the timed copies (host-to-GPU, GPU-to-host, GPU-to-GPU bandwidth) of the CUDA stage");
  app.add_flag("--no-active", o.probe.no_active,
               "Skip the active step of the CUDA stage (memory patterns and a compute checksum on "
               "each idle GPU)");
  app.add_option("--active-time", o.probe.active_seconds,
                 "Seconds of test kernels per GPU in the CUDA stage's active step, the GPUs in "
                 "parallel (default 2; --budget counts it)")
      ->type_name("SEC")
      ->check(seconds_within(0.1, 600.0));
  app.add_option("--budget", o.budget_s,
                 "Seconds the whole check may take: a timed stage starts only when its cost "
                 "estimate fits what is left, and one that does not is reported not checked "
                 "(default 60, or twice --cuda-timeout when that is more, plus --nccl-timeout with "
                 "--nccl; 0: no budget)")
      ->type_name("SEC")
      ->check(seconds_within(0, 86400.0));
  app.add_option(
         "--libcuda", o.libcuda,
         "The CUDA driver library to probe (default: libcuda.so.1 through the loader); with --root, runs the "
         "live probe against it instead of replaying the snapshot's cuda.json")
      ->type_name("FILE")
      ->check(library_file());
  // --nccl alone searches where the job would find libnccl.so.2; --nccl=PATH names the library.
  app.add_option_function<std::string>(
         "--nccl", [&o](const std::string& v) { o.probe.nccl = v; },
         "Also start NCCL on the usable GPUs (off by default): ncclCommInitAll and one checked "
         "all-reduce, under --nccl-timeout. PATH: the libnccl.so.2 to load (default: where the job "
         "finds it: LD_LIBRARY_PATH, the Python environment's nvidia-nccl wheel, the loader's "
         "search; with --root and --libcuda PATH is required: nothing of a snapshot is loaded)")
      ->type_name("[=PATH]")
      ->expected(0, 1)
      ->check(library_file());
  one_of(o,
         app.add_option("--nccl-env", o.nccl_env,
                        "NCCL's environment for --nccl: defaults (NCCL's own; the job's NCCL_* "
                        "variables are ignored, the default) or job (the job's NCCL_* variables)")
             ->type_name("MODE"),
         {"defaults", "job"});
  app.add_option("--nccl-timeout", o.probe.nccl_timeout_s,
                 "Deadline of the --nccl test, in seconds (default 60)")
      ->type_name("SEC")
      ->check(seconds_within(0.1, 3600.0));
  one_of(o,
         app.add_option(
                "--cvd-form", o.cvd_form,
                "Recommend CUDA_VISIBLE_DEVICES as GPU indices (default) or UUIDs: index, uuid")
             ->type_name("FORM"),
         {"index", "uuid"});
  app.add_option("--json-out", o.json_out,
                 "Also write the JSON report to FILE (replaced whole), whatever --format says")
      ->type_name("FILE");
  app.add_option("--prom-out", o.prom_out,
                 "Also write the Prometheus metrics to FILE (replaced whole, mode 0644; left as "
                 "it was when the checker cannot run), whatever --format says: node_exporter's "
                 "textfile collector")
      ->type_name("FILE");
}

constexpr const char* k_top_footer = R"text(Examples:
  gpu-preflight                          check this host (check is the default)
  gpu-preflight --min-gpus 8 && torchrun --nproc-per-node=8 train.py
  eval "$(gpu-preflight --format env)"   export the usable GPUs
  gpu-preflight exec -- python train.py  check, then run on the usable GPUs
  gpu-preflight snapshot -o node17       capture this host; then, anywhere:
  gpu-preflight --root node17            judge the capture
  gpu-preflight explain 79               what Xid 79 means and what to do

Exit status:
  0  ready: pass, or warn without --strict
  1  not ready: fail, or warn with --strict (exec: the command's own status)
  2  the checker could not do its job (a bad option, an unusable --root, an
     internal error)

Environment: CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER (the job's GPUs), NO_COLOR,
TERM=dumb (no colour), COLUMNS (report width), LANG/LC_ALL (UTF-8 or ASCII).
More: gpu-preflight help CMD, man gpu-preflight, /usr/share/doc/gpu-preflight/)text";

constexpr const char* k_check_footer = R"(Examples:
  gpu-preflight check --min-gpus all --strict
  gpu-preflight check --root node17 --format json --no-cuda
  gpu-preflight check --dmesg saved-dmesg.txt --expect-cuda 12.4

Exit status: 0 ready, 1 not ready, 2 the checker could not do its job.)";

// Words joined into lines of at most `width` columns, '\n' between them.
std::string wrap_words(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t col = 0;
  for (const auto word : split(text, ' ')) {
    if (col > 0 && col + 1 + word.size() > width) {
      out += '\n';
      col = 0;
    } else if (col > 0) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
  }
  return out;
}

constexpr const char* k_summarize_footer = R"text(Examples:
  gpu-preflight summarize reports/              one JSON report per node
  srun -N64 gpu-preflight --format json | gpu-preflight summarize -
  cat reports/*.json | gpu-preflight summarize -
  gpu-preflight summarize --max-age 1h reports/ older reports count as stale
  gpu-preflight summarize --format html reports/ >fleet.html  a picture

Exit status:
  0  every node ready
  1  a node not ready (fail, or warn with --strict on that node), stale, or
     whose report is empty or cut short
  2  an input that is no node's report, a PATH that does not exist, or no
     report at all
More: docs/fleet.md)text";

constexpr const char* k_diff_footer = R"text(Examples:
  gpu-preflight diff snapshots/node-22 snapshots/node-17   a good node against a bad one
  gpu-preflight diff before.json after.json                two reports of one node

Exit status:
  0  nothing differs
  1  something differs
  2  an input is neither a snapshot nor a gpu-preflight report
More: docs/fleet.md)text";

// CLI11's layout with the descriptions wrapped under their column, so that the help fits an
// 80-column terminal (scripts/gen-manpage.sh reads the continuation lines back).
class HelpFormatter : public CLI::Formatter {
public:
  static constexpr std::size_t k_width = 80;
  // The metavar in words ("FORMAT"), without what CLI11 appends from validators
  // ("TEXT:{text,json}"): the description lists the values.
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string opts = CLI::Formatter::make_option_opts(opt);
    const auto colon = opts.find(':');
    if (colon != std::string::npos) {
      const auto end = opts.find(' ', colon);
      opts.erase(colon, end == std::string::npos ? std::string::npos : end - colon);
    }
    return opts;
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrap_words(CLI::Formatter::make_option_desc(opt), k_width - get_column_width());
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true),
                             wrap_words(sub->get_description(), k_width - get_column_width()),
                             get_column_width());
    return out.str();
  }
};

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
  Progress progress(utf8_locale());
  const ProgressFn previous =
      set_progress_listener([&progress](const std::string& text) { progress.show(text); });
  run.facts = collect_facts(host, o.probe);
  set_progress_listener(previous);
  progress.clear();
  CheckOptions check = o.check;
  // "all": every GPU the driver lists (at least one, so a host without GPUs is not ready).
  check.min_gpus = o.min_gpus == "all" ? std::max(1, static_cast<int>(run.facts.gpus.size()))
                                       : std::stoi(o.min_gpus);
  run.assessment = assess(run.facts, rules, check);
  run.exit_code = exit_code_for(run.assessment.verdict, check.strict);
  run.info = RunInfo{host.hostname(),     std::chrono::system_clock::now(),
                     check.min_gpus,      check.strict,
                     o.probe.expect_cuda, o.rules.disable};
  if (run.info.host_name && run.info.host_name->empty()) {
    run.info.host_name.reset();
  }
  return run;
}

// A deadline asked for that can never fit --budget leaves its stage out (probe.stage-over-budget
// says so in the report): said at once on stderr too, naming both values, so that a wrapper's
// settings that drop a stage are seen where they are set. A deadline equal to the budget never fits
// either: the probes before the stage take time.
void warn_deadlines_over_budget(const CliOptions& o) {
  if (!o.probe.budget_s) {
    return;
  }
  const double budget = *o.probe.budget_s;
  // the stages that run live under --cuda-timeout (with --root, only against a library named)
  const bool cuda_live = !o.probe.no_cuda && (o.root.empty() || o.probe.libcuda);
  const bool nvml_live = !o.probe.no_nvml && (o.root.empty() || o.probe.libnvml);
  if ((cuda_live || nvml_live) && o.probe.cuda_timeout_s >= budget) {
    const std::string stages = cuda_live && nvml_live ? "the CUDA and NVML stages"
                               : cuda_live            ? "the CUDA stage"
                                                      : "the NVML stage";
    std::cerr << fmt::format(
        "gpu-preflight: warning: --cuda-timeout {:g} does not fit --budget {:g}: "
        "{} will not be checked (give --budget more than {:g}, or a shorter "
        "--cuda-timeout)\n",
        o.probe.cuda_timeout_s, budget, stages, o.probe.cuda_timeout_s);
  }
  if (o.probe.nccl && !o.probe.no_cuda && o.probe.nccl_timeout_s >= budget) {
    std::cerr << fmt::format(
        "gpu-preflight: warning: --nccl-timeout {:g} does not fit --budget {:g}: "
        "the NCCL test will not run (give --budget more than {:g}, or a "
        "shorter --nccl-timeout)\n",
        o.probe.nccl_timeout_s, budget, o.probe.nccl_timeout_s);
  }
}

int write_stdout(const std::string& out) {
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
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

// --prom-out: false (after printing why) when the file cannot be written. The file is written
// by this process as the JSON report is (an O_EXCL temporary beside it, fchmod on its descriptor,
// rename), so a script run as root never touches a path in the collector's directory itself.
bool write_prom_out(const CliOptions& o, const Report& report) {
  if (o.prom_out.empty()) {
    return true;
  }
  if (auto w = write_file_replacing(o.prom_out, render_prometheus(report)); !w) {
    std::cerr << "gpu-preflight: error: cannot write " << o.prom_out << ": " << w.error().message
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
  const Report report{run.facts, run.assessment, run.exit_code, run.info};
  if (!write_json_out(o, report) || !write_prom_out(o, report)) {
    return k_exit_error;
  }
  std::string out;
  if (o.format == "json") {
    write_json(report, stdout); // streamed: the text of a large report is never held whole
  } else if (o.format == "env") {
    out = render_env(report);
    // eval swallows the comments: the reason (and the GPUs chosen) must reach the terminal.
    std::cerr << render_summary(report, true);
  } else if (o.format == "line") {
    out = render_line(report);
  } else if (o.format == "prometheus") {
    out = render_prometheus(report);
  } else {
    out = render_text(report, text_options(o, STDOUT_FILENO));
  }
  const int written = write_stdout(out);
  return written != 0 ? written : run.exit_code;
}

// exec: check, then refuse (exit 1, report on stderr) or replace this process with the command.
int run_exec(const CliOptions& o, std::span<const Rule> rules) {
  if (o.command.empty()) {
    // Said before any probe runs: a launch line without its command is the caller's mistake,
    // and neither a verdict nor a whole live check should come first.
    return exec_command(o.command, {});
  }
  auto host = open_host(o);
  if (!host) {
    return k_exit_error;
  }
  const CheckRun run = perform_check(*host, o, rules);
  const Report report{run.facts, run.assessment, run.exit_code, run.info};
  if (!write_json_out(o, report) || !write_prom_out(o, report)) {
    return k_exit_error;
  }
  if (run.exit_code != 0) {
    std::cerr << render_text(report, text_options(o, STDERR_FILENO));
    std::cerr << "gpu-preflight: not starting " << printable(o.command.front()) << "\n";
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
    std::cerr << render_summary(report, !o.exec.keep_env);
  }
  return exec_command(o.command, env);
}

// "proc/4242/fd: Permission denied" for every process is one line with a count: the per-process
// part of a path (proc/<pid>/) is replaced, and equal lines are counted, in first-seen order.
std::vector<std::string> grouped_unreadable(const std::vector<std::string>& lines) {
  std::vector<std::pair<std::string, std::size_t>> groups;
  for (const auto& line : lines) {
    std::string key = line;
    if (key.rfind("proc/", 0) == 0) {
      const auto end = key.find('/', 5);
      if (end != std::string::npos && end > 5 && key.find_first_not_of("0123456789", 5) == end) {
        key.replace(5, end - 5, "<pid>");
      }
    }
    const auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.emplace_back(std::move(key), 1);
    } else {
      ++it->second;
    }
  }
  std::vector<std::string> out;
  for (const auto& [key, count] : groups) {
    out.push_back(count == 1 ? key : fmt::format("{} ({} processes)", key, count));
  }
  return out;
}

// A word of a command to copy: quoted where the shell would read it otherwise, so that options
// and plain paths stay readable.
std::string shell_word(const std::string& a) {
  const bool plain =
      !a.empty() && a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                        "qrstuvwxyz0123456789_./=:,+-@%") == std::string::npos;
  return plain ? a : shell_quote(a);
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
    std::cerr << "gpu-preflight: error: " << printable(report.error().message) << "\n";
    return k_exit_error;
  }
  // Paths and OS messages from the host and the snapshot: escaped like every terminal text, and
  // wrapped as the check's text is.
  const std::size_t width = text_width(STDOUT_FILENO);
  std::string out =
      wrap_text(fmt::format("captured {} into {}", counted(report->captured.size(), "file"),
                            printable(o.capture_dir)),
                0, 2, width);
  for (const auto& line : grouped_unreadable(report->unreadable)) {
    out += "  not readable: " + wrap_text(printable(line), 16, 4, width);
  }
  if (!report->unreadable.empty() && ::geteuid() != 0) {
    // The user's own command as root, which runs as given: the binary by its own path (sudo's
    // secure_path may not hold it), every option kept, and --force (DIR now holds a snapshot).
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    std::vector<std::string> words{"sudo", ec || self.empty() ? std::string("gpu-preflight")
                                                              : self.string()};
    const bool forced = std::find(o.args.begin(), o.args.end(), "--force") != o.args.end();
    for (const auto& a : o.args) {
      words.push_back(shell_word(a));
      if (a == "snapshot" && !forced) {
        words.emplace_back("--force");
      }
    }
    words[1] = shell_word(words[1]);
    const char* user = std::getenv("USER");
    out += "  " +
           wrap_text(
               fmt::format("(an ordinary user cannot read these; as root the snapshot holds "
                           "them: `{}`, then `sudo chown -R {} {}` to replay it as yourself)",
                           printable(fmt::format("{}", fmt::join(words, " "))),
                           printable(shell_word(user && *user ? user : std::to_string(::getuid()))),
                           printable(shell_word(o.capture_dir))),
               2, 3, width);
  }
  for (const auto& t : report->truncated) {
    out += "  cut at the size cap: " + wrap_text(printable(t), 22, 4, width);
  }
  out += wrap_text(fmt::format("replay it with: gpu-preflight check --root {}",
                               printable(shell_word(o.capture_dir))),
                   0, 2, width);
  return write_stdout(out);
}

int run_rules_command(std::span<const Rule> rules, const std::string& format) {
  std::string out;
  if (format == "json") {
    out = rules_json(rules).dump(2) + "\n";
  } else if (format == "markdown") {
    out = render_rules_markdown(rules);
  } else if (format == "text") {
    out = render_rules_text(rules, text_width(STDOUT_FILENO));
  } else {
    std::cerr << "gpu-preflight: error: rules: --format " << format
              << " is not supported (text, json, markdown)\n";
    return k_exit_error;
  }
  return write_stdout(out);
}

// "79", "xid.79", "xid79", "Xid 79": the Xid number a rule id stands for; nullopt otherwise.
std::optional<unsigned> xid_number(std::string_view id) {
  if (id.size() > 3 &&
      (id.substr(0, 3) == "xid" || id.substr(0, 3) == "Xid" || id.substr(0, 3) == "XID")) {
    id.remove_prefix(3);
    if (id.front() == '.' || id.front() == ' ' || id.front() == '-' || id.front() == '_') {
      id.remove_prefix(1);
    }
  }
  if (id.empty() || id.size() > 4 || id.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return static_cast<unsigned>(std::stoul(std::string(id)));
}

// "  label:  value" lines for explain's catalog rows, wrapped under the values; empty values
// skipped.
std::string catalog_lines(std::initializer_list<std::pair<std::string_view, std::string>> rows) {
  std::string out;
  for (const auto& [label, value] : rows) {
    if (value.empty()) {
      continue;
    }
    const std::string head = fmt::format("  {:<16}", std::string(label) + ":");
    out += head + wrap_text(value, head.size(), head.size(), 80); // ends with a newline
  }
  return out;
}

// "sxid.22003", "sxid22003", "SXid 22003": the SXid number; nullopt otherwise.
std::optional<unsigned> sxid_number(std::string_view id) {
  if (id.size() < 5 ||
      (id.substr(0, 4) != "sxid" && id.substr(0, 4) != "SXid" && id.substr(0, 4) != "SXID")) {
    return std::nullopt;
  }
  id.remove_prefix(4);
  if (id.front() == '.' || id.front() == ' ' || id.front() == '-' || id.front() == '_') {
    id.remove_prefix(1);
  }
  if (id.empty() || id.size() > 5 || id.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return static_cast<unsigned>(std::stoul(std::string(id)));
}

int run_explain_command(const RuleSet& rules, const std::string& id) {
  if (const Rule* rule = rules.find(id)) {
    return write_stdout(render_explain(*rule));
  }
  if (const auto xid = xid_number(id)) {
    const auto own = fmt::format("xid.{}", *xid); // a site's row for this Xid, if any
    const Rule* rule = rules.find(own) ? rules.find(own) : rules.find(xid_rule_id(*xid));
    if (rule) {
      const XidInfo* info = find_xid(*xid);
      if (!info) {
        return write_stdout(
            wrap_text(fmt::format("Xid {} is not in the Xid catalog this build knows ({}); rule "
                                  "{} judges it, and xid.reset-required when its line says "
                                  "Fatal.",
                                  *xid, k_xid_catalog_url, rule->id),
                      0, 0, 80) +
            "\n" + render_explain(*rule));
      }
      const std::string head = fmt::format("Xid {} ({}): {}", *xid, info->mnemonic, info->meaning);
      return write_stdout(
          wrap_text(head, 0, 2, 80) +
          catalog_lines(
              {{"NVIDIA",
                fmt::format("{}; immediate action {}, investigatory action {}",
                            info->description.empty() ? "not in the catalog" : info->description,
                            info->immediate.empty() ? "none given" : info->immediate,
                            info->investigatory.empty() ? "none given" : info->investigatory)},
               {"gpu-preflight", std::string(xid_class_word(info->cls))},
               {"why it differs", std::string(info->note)},
               {"judged by", std::string(rule->id)},
               {"source", info->source == k_xid_catalog_url
                              ? fmt::format("{} ({})", info->source, k_xid_catalog_version)
                              : std::string(info->source)}}) +
          "\n" + render_explain(*rule));
    }
  }
  if (const auto sxid = sxid_number(id)) {
    const SxidInfo* info = find_sxid(*sxid);
    const auto own = fmt::format("sxid.{}", *sxid);
    // The rows that judge it, as its line may say Fatal or not (the rows' own .events).
    const auto judge = [&](bool fatal) {
      return log_event_rule_id(code_event(LogEventKind::sxid, *sxid, fatal));
    };
    const Rule* rule = rules.find(own) ? rules.find(own) : rules.find(judge(false));
    if (rule) {
      if (!info) {
        return write_stdout(
            wrap_text(fmt::format("SXid {} is not in the SXid catalog this build knows ({}); its "
                                  "line's own word decides: Fatal is {}, otherwise {}.",
                                  *sxid, k_sxid_catalog_url, judge(true), rule->id),
                      0, 0, 80) +
            "\n" + render_explain(*rule));
      }
      return write_stdout(
          fmt::format("SXid {} ({})\n", *sxid, info->name) +
          catalog_lines(
              {{"NVIDIA", fmt::format("{}; recovery: {}", sxid_guide_word(info->guide),
                                      info->recovery.empty() ? "not applicable" : info->recovery)},
               {"gpu-preflight", std::string(sxid_class_word(info->cls))},
               {"why it differs", std::string(info->note)},
               {"judged by", std::string(rule->id)},
               {"source", info->source == k_sxid_catalog_url
                              ? fmt::format("{} ({})", info->source, k_sxid_catalog_version)
                              : std::string(info->source)}}) +
          "\n" + render_explain(*rule));
    }
  }
  std::vector<std::string> ids;
  for (const auto& r : rules.rules()) {
    ids.emplace_back(r.id);
  }
  std::cerr
      << "gpu-preflight: error: explain: no rule \"" << printable(id) << "\""
      << did_you_mean(suggestions(id, ids))
      << " (gpu-preflight rules lists them; an Xid number such as 79 or an SXid such as sxid.22003 works too)\n";
  return k_exit_error;
}

// Every option name of a command (and of the top level, which its options fall through to).
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) {
      out.push_back("--" + l);
    }
    for (const auto& sn : opt->get_snames()) {
      out.push_back("-" + sn);
    }
  }
  return out;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands({})) {
    out.push_back(sub->get_name());
  }
  return out;
}

// A parse error in the tool's words: an unknown command or option gets a suggestion.
std::string parse_error_text(CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // CLI11 says "--x: At Most 1 required but received 2" and "--x: 1 required N missing".
    const std::string_view what = e.what();
    const std::string_view name = what.substr(0, what.find(": "));
    if (const auto at = what.find(" required but received ");
        at != std::string_view::npos && what.find("At Most") != what.npos) {
      return fmt::format("{} was given {} times; give it once", name,
                         what.substr(at + std::string_view(" required but received ").size()));
    }
    if (what.ends_with(" missing")) {
      return fmt::format("{} needs a value", name);
    }
    return std::string(what);
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) {
    return e.what();
  }
  const auto extras = app.remaining(true);
  if (extras.empty()) {
    return e.what();
  }
  const std::string& word = extras.front();
  const CLI::App* in = &app;
  for (const CLI::App* sub : app.get_subcommands()) {
    in = sub; // the subcommand given, if any
  }
  if (!word.empty() && word[0] == '-' && word != "-") {
    const std::string name = word.substr(0, word.find('='));
    // What other tools spell this way: a near miss by edit distance would mislead ("-v" is one
    // edit from "-h").
    static const std::map<std::string, std::string, std::less<>> k_spelled_elsewhere = {
        {"-v", "--verbose"},       {"--json", "--format json"},    {"-j", "--format json"},
        {"-q", "--format line"},   {"--quiet", "--format line"},   {"--debug", "--verbose"},
        {"-o", "--json-out FILE"}, {"--output", "--json-out FILE"}};
    if (const auto alias = k_spelled_elsewhere.find(name); alias != k_spelled_elsewhere.end()) {
      const bool has_quiet = in->get_option_no_throw("--quiet") != nullptr; // exec
      return fmt::format("unknown option \"{}\" (did you mean \"{}\"?)", printable(name),
                         name == "-q" && has_quiet ? std::string("--quiet") : alias->second);
    }
    if (name.size() == 2) {
      return fmt::format("unknown option \"{}\"", printable(name));
    }
    auto names = option_names(*in);
    if (in != &app) {
      const auto top = option_names(app);
      names.insert(names.end(), top.begin(), top.end());
    }
    return fmt::format("unknown option \"{}\"{}", printable(name),
                       did_you_mean(suggestions(name, names)));
  }
  if (in == &app) {
    return fmt::format("unknown command \"{}\"{}", printable(word),
                       did_you_mean(suggestions(word, command_names(app))));
  }
  return fmt::format("{}: unexpected argument \"{}\"", in->get_name(), printable(word));
}

// What completion offers, read from the app itself so that it follows every option added.
CompletionModel completion_model(const CLI::App& app, const CliOptions& o,
                                 std::span<const Rule> rules) {
  const auto options_of = [&](const CLI::App& a) {
    std::vector<CompletionOption> out;
    for (const CLI::Option* opt : a.get_options()) {
      if (opt->get_positional() && opt->get_lnames().empty() && opt->get_snames().empty()) {
        continue;
      }
      CompletionOption c;
      for (const auto& l : opt->get_lnames()) {
        c.names.push_back("--" + l);
      }
      for (const auto& sn : opt->get_snames()) {
        c.names.push_back("-" + sn);
      }
      if (c.names.empty()) {
        continue;
      }
      const std::string type = opt->get_type_name();
      if (const auto it = o.choices.find(opt); it != o.choices.end()) {
        c.value = ValueKind::choice;
        c.choices = it->second;
      } else if (type == "ID" || type == "ID=LEVEL") { // --disable, --severity: the rule ids
        c.value = ValueKind::choice;
        for (const auto& r : rules) {
          if (type == "ID") {
            c.choices.emplace_back(r.id);
            continue;
          }
          for (const char* level : {"info", "warn", "fail"}) {
            c.choices.push_back(fmt::format("{}={}", r.id, level));
          }
        }
      } else if (opt->get_expected_max() == 0) {
        c.value = ValueKind::none;
      } else {
        c.value = type == "DIR"    ? ValueKind::dir
                  : type == "FILE" ? ValueKind::file
                                   : ValueKind::word;
      }
      out.push_back(std::move(c));
    }
    return out;
  };
  CompletionModel m{"gpu-preflight", "_gpu_preflight", {}};
  CompletionCommand top{"", options_of(app), command_names(app)};
  m.commands.push_back(top);
  for (const CLI::App* sub : app.get_subcommands({})) {
    CompletionCommand c{sub->get_name(), options_of(*sub), {}};
    if (sub->get_name() == "exec") {
      c.options.insert(c.options.end(), top.options.begin(), top.options.end());
      c.runs_command = true;
    } else if (sub->get_name() == "explain") {
      for (const auto& r : rules) {
        c.words.emplace_back(r.id);
      }
    } else if (sub->get_name() == "help") {
      c.words = command_names(app);
    } else if (sub->get_name() == "completion") {
      c.words = {"bash", "zsh", "fish"};
    }
    m.commands.push_back(std::move(c));
  }
  return m;
}

int run_help_command(const CLI::App& app, const std::string& topic) {
  // app.help() would show the help of the subcommand given, which is `help` itself
  if (topic.empty()) {
    return write_stdout(
        app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal));
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == topic) {
      return write_stdout(sub->help(app.get_name()));
    }
  }
  std::cerr << "gpu-preflight: error: help: no command \"" << printable(topic) << "\""
            << did_you_mean(suggestions(topic, command_names(app))) << " (see --help)\n";
  return k_exit_error;
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
  // The program's own process: helpers a driver library starts are adopted and stopped with the
  // stage (run_cli is main's; tests run the binary).
  child::adopt_helpers();
  CliOptions o;
  CLI::App app{"gpu-preflight: can this machine train right now, on which GPUs, and if not,\n"
               "why and what fixes it.",
               "gpu-preflight"};
  app.formatter(std::make_shared<HelpFormatter>()); // before the subcommands, which copy it
  app.set_version_flag("--version", std::string(k_tool_name) + " " + k_tool_version);
  app.fallthrough();
  add_check_options(app, o);
  // check is the default command: its help shows the same options, which it takes after its name.
  auto* check = app.add_subcommand("check", "Run the checks and print a verdict (the default)");
  add_check_options(*check, o);
  check->footer(k_check_footer);
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
      ->type_name("DIR")
      ->required();
  snapshot->add_flag("--force", o.capture.force,
                     "Replace a previous snapshot in DIR (a directory holding capture.json)");
  snapshot
      ->add_option(
          "--mode", o.capture_mode,
          "Mode of the files written, octal (default 0600; directories 0700 plus search where read is granted)")
      ->type_name("OCTAL")
      ->check(validator([](std::string& v) {
        const bool ok = !v.empty() && v.size() <= 4 &&
                        v.find_first_not_of("01234567") == std::string::npos &&
                        std::stoul(v, nullptr, 8) <= 0777;
        return ok ? std::string()
                  : fmt::format("\"{}\" is not an octal file mode such as 0600 or 0640", v);
      }));
  snapshot->add_flag(
      "--redact", o.capture.redact,
      "Replace host and user names, IP and MAC addresses, serial numbers and GPU UUIDs consistently");
  auto* rules_cmd =
      app.add_subcommand("rules", "List every rule: id, severity, what it checks, source");
  one_of(o,
         rules_cmd->add_option("--format", o.rules_format, "Output format: text, json, markdown")
             ->type_name("FORMAT"),
         {"text", "json", "markdown"});
  auto* explain_cmd =
      app.add_subcommand("explain", "Explain one rule: meaning, evidence, remedy, sources");
  explain_cmd
      ->add_option("id", o.explain_id,
                   "Rule id (e.g. devnode.nvidia-uvm-missing), or an Xid number (e.g. 79)")
      ->type_name("ID")
      ->required();
  auto* help_cmd = app.add_subcommand("help", "Show the help of gpu-preflight or of one command");
  help_cmd->add_option("command", o.help_topic, "The command, e.g. check")->type_name("CMD");
  auto* completion_cmd = app.add_subcommand(
      "completion",
      "Print the shell completion script: bash, zsh or fish (the package installs them)");
  one_of(o,
         completion_cmd->add_option("shell", o.completion_shell, "bash, zsh or fish")
             ->type_name("SHELL")
             ->required(),
         {"bash", "zsh", "fish"});
  completion_cmd->footer(
      "Example: source <(gpu-preflight completion bash)   (zsh: source <(gpu-preflight completion zsh),\n"
      "after compinit)");
  auto* summarize_cmd = add_summarize_command(app, o.summarize);
  summarize_cmd->footer(k_summarize_footer);
  auto* diff_cmd = add_diff_command(app, o.diff);
  diff_cmd->footer(k_diff_footer);
  auto* explain_log_cmd = add_explain_log_command(app, o.explain_log);
  app.footer(k_top_footer); // after every subcommand: each would inherit it
  app.require_subcommand(0, 1);
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  o.args = args;
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
    std::cerr << "gpu-preflight: error: " << parse_error_text(app, e) << " (see --help)\n";
    return k_exit_error;
  }
  // A check option given with a command that does not use it is an error, not silently ignored
  // (`gpu-preflight --format json explain 79` would print text): each command names the check
  // options it takes; exec, snapshot and check take them all.
  {
    const std::pair<CLI::App*, std::vector<std::string_view>> takes[] = {
        {summarize_cmd, {}},
        {diff_cmd, {}},
        {help_cmd, {}},
        {completion_cmd, {"--rules", "--disable", "--severity"}},
        {explain_cmd, {"--rules", "--disable", "--severity"}},
        {rules_cmd, {"--rules", "--disable", "--severity", "--format"}},
    };
    for (const auto& [cmd, allowed] : takes) {
      if (!cmd->parsed()) {
        continue;
      }
      for (const CLI::Option* opt : app.get_options()) {
        const std::string name = opt->get_name();
        if (opt->count() == 0 || name == "--help" || name == "--version" ||
            std::find(allowed.begin(), allowed.end(), name) != allowed.end()) {
          continue;
        }
        std::cerr << "gpu-preflight: error: " << cmd->get_name() << " takes no " << name
                  << " (an option of check; see gpu-preflight " << cmd->get_name() << " --help)\n";
        return k_exit_error;
      }
    }
    // snapshot writes files, not a report: the report's form and copies would be ignored.
    if (snapshot->parsed()) {
      for (const char* name : {"--format", "--json-out", "--prom-out"}) {
        if (app.get_option(name)->count() > 0) {
          std::cerr << "gpu-preflight: error: snapshot takes no " << name
                    << " (it writes files, not a report: replay them with check --root DIR " << name
                    << " ...)\n";
          return k_exit_error;
        }
      }
    }
    // explain-log runs a check only with --check, and then takes the check's options; its output
    // format is its own option, so the check's --format before it would be ignored.
    if (explain_log_cmd->parsed()) {
      if (!o.explain_log.root.empty() && !o.explain_log.check) {
        std::cerr << "gpu-preflight: error: explain-log takes --root only with --check\n";
        return k_exit_error;
      }
      for (const CLI::Option* opt : app.get_options()) {
        const std::string name = opt->get_name();
        if (opt->count() == 0 || name == "--help" || name == "--version" || name == "--rules" ||
            name == "--disable" || name == "--severity" ||
            (o.explain_log.check && name != "--format")) {
          continue;
        }
        std::cerr << "gpu-preflight: error: explain-log takes no " << name
                  << (name == "--format" ? " before it (give explain-log --format json)"
                                         : " without --check (an option of the check it runs)")
                  << "\n";
        return k_exit_error;
      }
    }
  }
  if (!o.libcuda.empty()) {
    o.probe.libcuda = o.libcuda;
  }
  if (!o.libnvml.empty()) {
    o.probe.libnvml = o.libnvml;
  }
  // Without --budget: 60 s, or twice a longer --cuda-timeout, and --nccl-timeout on top with
  // --nccl, so that a deadline asked for explicitly is never refused by the default
  // (docs/usage.md#time-budget).
  o.probe.budget_s =
      o.budget_s ? (*o.budget_s > 0 ? o.budget_s : std::nullopt)
                 : std::optional<double>(std::max(k_default_budget_s, 2 * o.probe.cuda_timeout_s) +
                                         (o.probe.nccl ? o.probe.nccl_timeout_s : 0));
  warn_deadlines_over_budget(o);
  o.check.cvd_form = o.cvd_form == "uuid" ? CvdForm::uuid : CvdForm::index;
  o.probe.nccl_job_env = o.nccl_env == "job";
  if (!o.root.empty() && !o.libcuda.empty() && o.probe.nccl && o.probe.nccl->empty()) {
    // Nothing of a snapshot is executed: the library the snapshot's environment leads to
    // (LD_LIBRARY_PATH, VIRTUAL_ENV, CONDA_PREFIX) is inside the snapshot.
    std::cerr << "gpu-preflight: error: --nccl with --root needs the library to load "
                 "(--nccl=PATH): a library found through the snapshot's environment is never "
                 "loaded (see --help)\n";
    return k_exit_error;
  }
  try {
    if (summarize_cmd->parsed()) {
      o.summarize.width = text_width(STDOUT_FILENO);
      return run_summarize(o.summarize);
    }
    if (diff_cmd->parsed()) {
      return run_diff(o.diff);
    }
    auto rules = RuleSet::load(builtin_rules(), o.rules);
    if (!rules) {
      std::cerr << "gpu-preflight: error: " << rules.error().message << "\n";
      return k_exit_error;
    }
    if (explain_log_cmd->parsed()) {
      if (!o.explain_log.root.empty()) {
        o.root = o.explain_log.root;
      }
      const auto check = [&]() -> std::optional<ExplainLogChecked> {
        auto host = open_host(o);
        if (!host) {
          return std::nullopt;
        }
        CheckRun run = perform_check(*host, o, rules->rules());
        return ExplainLogChecked{std::move(run.assessment), std::move(run.facts.probes)};
      };
      return run_explain_log(o.explain_log, rules->rules(), check);
    }
    if (help_cmd->parsed()) {
      return run_help_command(app, o.help_topic);
    }
    if (completion_cmd->parsed()) {
      return write_stdout(
          completion_script(completion_model(app, o, rules->rules()), o.completion_shell));
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
