#pragma once
// Facts from the opt-in NCCL probe (--nccl): one child loads libnccl.so.2 where the job would find
// it, initialises one communicator over the GPUs the CUDA stage found usable (ncclCommInitAll),
// runs one all-reduce of a known pattern and checks the sum, under a deadline. Live, or replayed
// from a snapshot's nccl.json. Its field lists below are the one description of its JSON (the
// report's facts.nccl and nccl.json).
#include "gpf/util/json_fields.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace gpf {

// One timed step of the NCCL child ("load_cuda", "cuInit", "buffers", "load_nccl",
// "ncclGetVersion", "init", "all_reduce", "check"; docs/nccl-probe.md).
struct NcclStep {
  std::string name;
  bool ok = false;
  bool timed_out = false; // it began and did not finish before the deadline
  double duration_ms = 0;
  std::optional<int> error_code; // ncclResult_t or CUresult when the step failed
  std::string error_name;        // "ncclInvalidUsage", "WRONG_SUM", "CHILD_DIED", ...
  std::string error_text;        // ncclGetErrorString (+ ncclGetLastError), or what went wrong

  bool operator==(const NcclStep&) const = default;
};

// The steps whose hang or failure the rules name: NCCL's own two.
inline constexpr std::string_view k_nccl_init_step = "init";
inline constexpr std::string_view k_nccl_all_reduce_step = "all_reduce";
inline constexpr std::string_view k_nccl_check_step = "check";

struct NcclFacts {
  bool ran = false;
  std::string source;       // "live" or "nccl.json"
  std::string library;      // what the child opened: a path, or "libnccl.so.2" (loader search)
  std::string library_from; // why that one: "--nccl", "LD_LIBRARY_PATH", "python wheel", "loader"
  std::string library_path; // the file the loader picked, symlinks resolved
  std::string load_error;   // dlopen's error
  std::vector<std::string> missing_symbols;
  std::optional<int> version_code; // ncclGetVersion
  std::string version;             // "2.21.5"
  std::string env_mode;            // "defaults" (NCCL's own) or "job" (the job's NCCL_*)
  std::vector<std::string>
      job_env; // the job's NCCL_* variables, NAME=value (used only in job mode); a value whose
               // name says it is a secret (TOKEN, PASSWORD, KEY, ...) as REDACTED
  // under --root with --nccl-env job: the snapshot's NCCL_* variables that name a file, a
  // directory or a plugin (NCCL_TOPO_FILE, NCCL_NET_PLUGIN, ...), kept from the child
  std::vector<std::string> env_withheld;
  std::vector<std::string> gpus; // bus ids, in rank order (CUDA order)
  double timeout_s = 0;
  double wall_ms = 0;
  bool deadline_hit = false;
  std::vector<NcclStep> steps;
  std::vector<std::string> transports; // NCCL's connection lines ("... via P2P/CUMEM"), distinct
  std::vector<std::string> log;        // its NCCL_DEBUG=INFO lines, the first k_nccl_log_lines
  std::size_t log_lines_dropped = 0;
  std::string child_error; // the child ended without finishing, or spoke garbage
  bool ok = false;         // every step passed and the sum was right

  const NcclStep* step(std::string_view name) const {
    for (const auto& s : steps) {
      if (s.name == name) {
        return &s;
      }
    }
    return nullptr;
  }
  // The step's time when it passed.
  std::optional<double> step_ms(std::string_view name) const {
    const NcclStep* s = step(name);
    return s && s->ok ? std::optional<double>(s->duration_ms) : std::nullopt;
  }
  bool operator==(const NcclFacts&) const = default;
};

// NCCL INFO lines kept in the facts (a large node prints hundreds: the rest are counted).
inline constexpr std::size_t k_nccl_log_lines = 200;

namespace json_fields {

template <> struct List<NcclStep> {
  static constexpr auto fields = std::to_array<Field<NcclStep>>({
      member<&NcclStep::name>("name"),
      member<&NcclStep::ok>("ok"),
      member<&NcclStep::duration_ms>("duration_ms"),
      member<&NcclStep::timed_out>("timed_out", [](const NcclStep& s) { return s.timed_out; }),
      member<&NcclStep::error_code>("error_code", [](const NcclStep& s) { return !s.ok; }),
      member<&NcclStep::error_name>("error_name", [](const NcclStep& s) { return !s.ok; }),
      member<&NcclStep::error_text>("error_text", [](const NcclStep& s) { return !s.ok; }),
  });
};

template <> struct List<NcclFacts> {
  static constexpr auto fields = std::to_array<Field<NcclFacts>>({
      member<&NcclFacts::ran>("ran"),
      member<&NcclFacts::source>("source"),
      member<&NcclFacts::library>("library"),
      member<&NcclFacts::library_from>("library_from"),
      member<&NcclFacts::library_path>("library_path"),
      member<&NcclFacts::load_error>("load_error"),
      member<&NcclFacts::missing_symbols>("missing_symbols"),
      member<&NcclFacts::version_code>("version_code"),
      member<&NcclFacts::version>("version"),
      member<&NcclFacts::env_mode>("env_mode"),
      member<&NcclFacts::job_env>("job_env"),
      member<&NcclFacts::env_withheld>("env_withheld"),
      member<&NcclFacts::gpus>("gpus"),
      member<&NcclFacts::timeout_s>("timeout_s"),
      member<&NcclFacts::wall_ms>("wall_ms"),
      member<&NcclFacts::deadline_hit>("deadline_hit"),
      member<&NcclFacts::ok>("ok"),
      {.key = "init_ms",
       .write = [](const NcclFacts& n) { return to_json(n.step_ms(k_nccl_init_step)); }},
      {.key = "all_reduce_ms",
       .write = [](const NcclFacts& n) { return to_json(n.step_ms(k_nccl_all_reduce_step)); }},
      member<&NcclFacts::steps>("steps"),
      member<&NcclFacts::transports>("transports"),
      member<&NcclFacts::log>("log"),
      member<&NcclFacts::log_lines_dropped>("log_lines_dropped"),
      member<&NcclFacts::child_error>("child_error"),
  });
};

} // namespace json_fields

} // namespace gpf
