#pragma once
// summarize's fleet: every node's newest record, grouped by cause, finding and identical-node
// group, and written as text, JSON or one HTML page.
#include "fleet/node_record.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::fleet {

using Json = nlohmann::ordered_json;

struct Superseded {
  std::string name;
  std::string source;
  std::string checked_at;
  std::string by_source;
  std::string by_checked_at;
};

struct Unreadable {
  std::string source;
  std::string why;
};

class Fleet {
public:
  // now_s: this host's clock, against which future dates and ages are judged.
  Fleet(std::optional<std::int64_t> max_age_s, std::int64_t now_s)
      : m_max_age_s(max_age_s), m_now_s(now_s) {}

  // One document's text from source: parsed, checked and kept as its node's record.
  void document(std::string_view text, const std::string& source);

  // Counted always; the first k_unreadable_shown named on stderr, the first k_unreadable_kept
  // listed in the summary (a file of millions of bad lines costs neither memory nor a flood).
  void unreadable(const std::string& source, std::string why);
  void not_a_report() { ++m_reports; }

  // An input that should have been a node's report and is not one (empty, cut short): the node,
  // named by its host when the text names one, else by the file, counts as not ready.
  void no_report(const std::string& source, const std::string& host, const std::string& why);

  int exit_code() const;

  // Nodes grouped by primary cause: the ones failing, warning, without a report or stale; with
  // with_ready also the ready ones, as one group.
  struct CauseGroup {
    std::string id;   // the primary cause's id, "no report", "stale", "ready"
    std::string kind; // fail, warn, none (no report), stale, pass: the group's worst
    std::vector<const NodeRecord*> nodes;
  };
  std::vector<CauseGroup> cause_groups(bool with_ready) const;
  std::string detail(const CauseGroup& g, const NodeRecord& n) const;
  static std::string drain_reason(const CauseGroup& g);

  Json to_json() const;
  std::string to_text(std::size_t width) const;
  std::string to_html() const;
  std::string html_cells(const NodeRecord& n) const;
  void finish();

private:
  static bool ready(const NodeRecord& n) { return n.exit_code == 0 && !n.stale; }

  // Counted always, listed up to k_unreadable_kept.
  void superseded(Superseded s);

  void add(const nlohmann::json& doc, const std::string& source);

  // A node's record, superseding or superseded by one of the same key. A no-report record has no
  // time: any report of the node with a plausible time counts before it.
  void insert(NodeRecord n);

  struct FindingGroup {
    std::string severity;
    std::set<std::string> nodes;
    std::vector<std::pair<std::string, std::string>> gpus; // node, bus id
  };
  struct Outlier {
    const NodeRecord* node;
    Figure figure;
    double median;
    double mad;
    std::size_t group;
    std::string model;
    std::string driver;
    const NodeFigure& figure_of() const { return *node->figures[static_cast<std::size_t>(figure)]; }
  };

  // How many nodes have each driver, kernel and CUDA version, and each GPU model's GPUs and nodes:
  // one count for both output formats.
  struct Spreads {
    std::map<std::string, int> drivers;
    std::map<std::string, int> kernels;
    std::map<std::string, int> cudas;
    std::map<std::string, int> model_gpus;
    std::map<std::string, int> model_nodes;
  };

  // Findings grouped by id, most severe first, then by how many nodes they hit.
  std::vector<std::pair<std::string, FindingGroup>> finding_groups() const;
  std::vector<Outlier> outliers() const;
  void add_outliers(Figure figure, std::vector<Outlier>& out) const;
  Spreads spreads() const;
  static std::vector<std::pair<std::string, int>> spread(const std::map<std::string, int>& counts);

  std::optional<std::int64_t> m_max_age_s;
  std::int64_t m_now_s;
  std::map<std::string, NodeRecord> m_nodes;
  std::vector<Superseded> m_superseded; // the first k_unreadable_kept
  std::size_t m_superseded_count = 0;
  std::vector<Unreadable> m_unreadable; // the first k_unreadable_kept
  std::size_t m_unreadable_count = 0;
  std::size_t m_reports = 0;
  std::size_t m_future = 0;    // reports dated in the future, kept or superseded
  std::size_t m_no_report = 0; // inputs empty or cut short, kept or superseded
  std::uint64_t m_seq = 0;
};

// Shared by the text and the HTML outputs.
// One shell word: as it is when it holds only characters no shell treats specially, else in
// single quotes (host names and ids come from reports).
std::string shell_word(const std::string& s);
// A cause group's kind, worst first: fail, warn, none (no report), stale, pass.
int kind_rank(std::string_view kind);
// A group's heading: "FAIL devnode.nvidia-uvm-missing", "NO REPORT", "STALE", "READY".
std::string group_title(const Fleet::CauseGroup& g, std::string_view id);

// One input (a file, standard input): its JSON documents read one at a time into fleet.
void read_input(std::istream& in, const std::string& name, Fleet& fleet, bool file);

} // namespace gpf::fleet
