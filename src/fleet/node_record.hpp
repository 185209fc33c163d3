#pragma once
// What summarize keeps of one node's report: a record of a few KiB whatever the report's size,
// the figures compared between identical nodes, and the reading of a report's JSON into it.
#include "gpf/util/json_bounded.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::fleet {

inline constexpr std::size_t k_node_findings_kept = 256; // per node: the record stays small
inline constexpr std::size_t k_node_models_kept = 16;
inline constexpr std::size_t k_node_gpus_kept = 64; // bus ids per node, for the HTML grid

// The figures compared between identical nodes; a node's figure is that of its worst GPU.
enum class Figure : std::size_t {
  cuda_startup,
  pcie_width,
  temperature,
  h2d_bandwidth,
  d2h_bandwidth,
  peer_bandwidth,
  sm_clock
};
struct FigureInfo {
  const char* metric; // the JSON name
  const char* what;   // the text's words
  const char* unit;
  bool fixed; // one decimal always (milliseconds); else as few as needed (a median of 35.5 C)
  // The least distance from the median that matters to a job, whatever the fleet's spread: a
  // fraction of the median and an amount in the unit (the larger counts). Identical nodes differ
  // by a few per cent in start-up and bandwidth from run to run; that is no outlier.
  double min_fraction;
  double min_amount;
  // Which side of the median is worse: a node that starts CUDA faster, or runs cooler, than its
  // identical peers is no outlier to act on.
  bool higher_is_worse;
};
inline constexpr std::array<FigureInfo, 7> k_figures{{
    {"cuda_startup_ms", "CUDA start-up", "ms", true, 0.2, 0, true},
    {"pcie_link_width", "PCIe link width", "lanes", false, 0, 0.5, false},
    {"gpu_temperature_c", "GPU temperature", "C", false, 0, 5, true},
    {"h2d_gbps", "host-to-device bandwidth", "GB/s", true, 0.1, 0, false},
    {"d2h_gbps", "device-to-host bandwidth", "GB/s", true, 0.1, 0, false},
    {"peer_gbps", "peer copy bandwidth", "GB/s", true, 0.1, 0, false},
    {"sm_clock_mhz", "SM clock under load", "MHz", false, 0.1, 0, false},
}};
static_assert(static_cast<std::size_t>(Figure::sm_clock) + 1 == k_figures.size());

inline const FigureInfo& info(Figure f) {
  return k_figures[static_cast<std::size_t>(f)];
}

// A node's figure and the GPU it comes from.
struct NodeFigure {
  double value = 0;
  std::string gpu;
};

struct NodeFinding {
  std::string id;
  std::string severity;
  std::string gpu; // "" for the node
};

// What summarize keeps of one report: a few KiB at most, whatever the report's size.
struct NodeRecord {
  std::string key;  // the host, or the source for a report without one
  std::string name; // shown: the host, or the file name
  bool hostless = false;
  std::string source;
  std::string checked_at;
  std::optional<std::int64_t> checked_s; // checked_at parsed, seconds since the epoch
  std::uint64_t seq = 0;                 // input order: the later of two equal times wins
  std::string verdict;
  int exit_code = 0;
  std::string primary;     // "id" or "id bus_id"; "" for pass
  std::string primary_id;  // the id alone
  std::string primary_gpu; // its GPU's bus id, "" for the node
  // The part of the node that causes it when that is no GPU ("ACS 0000:17:00.0"), "" when none
  // is named (or the report is older than the member).
  std::string primary_where;
  std::string remedy; // the primary cause's finding's remedy
  // No report: the input was empty or cut short (the check crashed, was killed, timed out).
  bool no_report = false;
  int usable = 0;
  int total = 0;
  std::vector<NodeFinding> findings;
  std::string driver;                // "550.54.14 (open)" or "none"
  std::string driver_version;        // "550.54.14" or ""
  std::string kernel;                // release
  std::string cuda;                  // the driver's CUDA version, "" when not probed
  std::map<std::string, int> models; // GPU model -> count
  std::vector<std::string> gpus;     // bus ids, the first k_node_gpus_kept
  // By Figure: each the node's worst GPU's (the slowest CUDA start-up, the narrowest PCIe link on a
  // GPU's path, the hottest GPU, ...).
  std::array<std::optional<NodeFigure>, k_figures.size()> figures;
  bool stale = false;
  // checked_at is later than summarize's clock plus k_clock_skew_s: a wrong clock, not a time;
  // such a report never supersedes one with a plausible time, and never counts as recent.
  bool future = false;
  bool plausible_time() const { return checked_s && !future; }
  // warn made not ready by the check's --strict (its exit code says so)
  bool strict() const { return verdict == "warn" && exit_code != 0; }

  // Keeps a GPU's value as the node's figure when it is worse than the one kept so far.
  template <class Worse> void keep(Figure f, double value, const std::string& gpu, Worse worse) {
    auto& kept = figures[static_cast<std::size_t>(f)];
    if (!kept || worse(value, kept->value)) {
      kept = NodeFigure{value, gpu};
    }
  }
};

// checked_at's RFC 3339 time (UTC only, as check writes it) in seconds since the epoch.
std::optional<std::int64_t> parse_rfc3339(std::string_view s);
// The node's GPU models joined ("no GPU" for none): nodes compare only within one.
std::string model_key(const NodeRecord& n);
// The report's members summarize needs; Error when it is not a gpu-preflight report.
Result<NodeRecord> read_record(const nlohmann::json& doc);
// What read_record() reads of a report (and, for `jq -s` arrays, of each element).
const JsonShape& report_shape();

// A text that is no JSON document: whether it was cut short (the parser ran out of input, not
// into a wrong character), and the report's top-level "host" when the text got that far.
struct CutText {
  bool cut = false;
  std::optional<std::string> host;
};
CutText cut_short(std::string_view body);

} // namespace gpf::fleet
