#pragma once
// The fleet subcommands: `summarize` reads many nodes' JSON reports and answers which nodes are
// out and why; `diff` compares two snapshots or two reports of one node. Each registers itself on
// the CLI11 app and runs when parsed; both return the exit-code contract's 0/1/2.
#include <cstddef>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace gpf {

struct SummarizeOptions {
  std::vector<std::string> paths; // files, directories, "-" (stdin); none: stdin
  std::string format = "text";    // text | json | html
  std::string max_age;            // "24h", "30m", "2d", "3600" (seconds); "" = no limit
  std::size_t width = 80;         // the text output wraps to this (the command line's terminal)
};

CLI::App* add_summarize_command(CLI::App& app, SummarizeOptions& options);
// 0 every node ready; 1 any node not ready (or stale); 2 any input unreadable or none read.
int run_summarize(const SummarizeOptions& options);

struct DiffOptions {
  std::string before; // a snapshot directory or a JSON report
  std::string after;
  std::string format = "text"; // text | json
};

CLI::App* add_diff_command(CLI::App& app, DiffOptions& options);
// 0 nothing that matters differs; 1 something differs; 2 an input cannot be read.
int run_diff(const DiffOptions& options);

} // namespace gpf
