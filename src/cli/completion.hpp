#pragma once
// Shell completion and "did you mean" suggestions for the command line. The completion scripts are
// generated from a model the CLI builds from its own CLI11 app, so they follow every option added.
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

// What a word after an option may be.
enum class ValueKind { none, word, file, dir, choice };

struct CompletionOption {
  std::vector<std::string> names; // "--root", "-o"
  ValueKind value = ValueKind::none;
  std::vector<std::string> choices; // ValueKind::choice
};

struct CompletionCommand {
  std::string name; // "" = the top level (no subcommand yet)
  std::vector<CompletionOption> options;
  std::vector<std::string> words; // positional candidates: subcommands, rule ids, shells
  // exec: the options, then a command line, completed as the shell completes any command
  bool runs_command = false;
};

struct CompletionModel {
  std::string program;                     // "gpu-preflight"
  std::string function;                    // "_gpu_preflight"
  std::vector<CompletionCommand> commands; // the top level first
};

// The completion script for bash, zsh or fish; "" for another shell.
std::string completion_script(const CompletionModel& model, std::string_view shell);

// Edit distance in bytes (optimal string alignment: a swap of neighbours is one edit).
std::size_t edit_distance(std::string_view a, std::string_view b);
// Up to `max` candidates close to word (few edits for its length, or containing it), closest first.
std::vector<std::string>
suggestions(std::string_view word, const std::vector<std::string>& candidates, std::size_t max = 3);
// " (did you mean \"a\" or \"b\"?)", or "" when there is nothing to suggest.
std::string did_you_mean(const std::vector<std::string>& suggested);

} // namespace gpf
