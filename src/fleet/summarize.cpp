// `gpu-preflight summarize [PATH...]`: many nodes' JSON reports (files, directories of them, JSON
// lines on stdin) read one document at a time into a small record per node; the newest report of
// a node counts, older ones are listed as superseded. Prints nodes per verdict with their primary
// cause, findings by id with the nodes and GPUs they hit, the spread of driver, kernel, CUDA and
// GPU model, and fleet-relative outliers of the figures in k_figures (docs/fleet.md).
#include "fleet/summary.hpp"
#include "gpf/fleet/fleet.hpp"
#include "gpf/util/exit_codes.hpp"
#include "gpf/util/report_file.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <unistd.h>

namespace gpf {
namespace {

namespace fs = std::filesystem;
using fleet::Fleet;
using fleet::Json;
using fleet::read_input;

std::optional<std::int64_t> parse_age(const std::string& text) {
  if (text.empty()) {
    return std::nullopt;
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "s" ? 1
                       : unit == "m"               ? 60
                       : unit == "h"               ? 3600
                       : unit == "d"               ? 86400
                                                   : -1;
  if (scale < 0 || !std::isfinite(value) || value < 0 || value * scale > 1e12) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(value * scale);
}

bool is_report_file(const fs::path& p) {
  const auto ext = p.extension().string();
  return ext == ".json" || ext == ".jsonl" || ext == ".ndjson";
}

} // namespace

CLI::App* add_summarize_command(CLI::App& app, SummarizeOptions& o) {
  auto* cmd = app.add_subcommand(
      "summarize",
      "Summarise many nodes' JSON reports: verdicts, findings, spread, outliers (docs/fleet.md)");
  cmd->add_option(
         "paths", o.paths,
         "Report files, directories of them (*.json, *.jsonl), or - for standard input (the "
         "default): reports one after another, as srun or cat write them, or JSON lines")
      ->type_name("PATH");
  cmd->add_option("--format", o.format,
                  "Output format: text (default), json, or html (one self-contained page: the "
                  "fleet's GPUs coloured by state, grouped by cause)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "json", "html"}));
  cmd->add_option("--max-age", o.max_age,
                  "List reports older than this as stale (not ready): 90s, 30m, 24h, 7d")
      ->type_name("AGE")
      ->check(CLI::Validator(
          [](std::string& v) {
            return parse_age(v) ? std::string()
                                : "expected an age such as 3600, 30m, 24h or 7d, got \"" + v + "\"";
          },
          "AGE"));
  return cmd;
}

int run_summarize(const SummarizeOptions& o) {
  Fleet fleet(parse_age(o.max_age), std::chrono::duration_cast<std::chrono::seconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
  std::vector<std::string> paths = o.paths;
  if (paths.empty()) {
    paths.emplace_back("-");
  }
  const auto read_file = [&fleet](const std::string& path) {
    auto in = open_report_input(path);
    if (!in) {
      fleet.not_a_report();
      fleet.unreadable(path, in.error().message);
      return;
    }
    read_input(**in, path, fleet, true);
  };
  for (const auto& path : paths) {
    if (path == "-") {
      if (::isatty(STDIN_FILENO) == 1) { // not waiting silently for what nobody is typing
        std::cerr << "gpu-preflight: summarize: reading reports from the terminal; end with "
                     "Ctrl-D, or name report files (gpu-preflight summarize reports/)\n";
      }
      read_input(std::cin, "stdin", fleet, false);
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && is_report_file(it->path())) {
          files.push_back(it->path());
        }
      }
      if (ec) {
        fleet.not_a_report();
        fleet.unreadable(path, ec.message());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        read_file(f.string());
      }
      continue;
    }
    read_file(path);
  }
  fleet.finish();
  const std::string out =
      o.format == "json"
          ? fleet.to_json().dump(2, ' ', false, Json::error_handler_t::replace) + "\n"
      : o.format == "html" ? fleet.to_html()
                           : fleet.to_text(o.width);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    std::cerr << "gpu-preflight: error: cannot write the summary\n";
    return k_exit_error;
  }
  return fleet.exit_code();
}

} // namespace gpf
