// `gpu-preflight explain-log FILE|-` (docs/explain-log.md). The log streams through two readers:
// one automaton over the pattern table's texts (case-insensitive, all rows in one pass, reset at
// each line) and the kernel-log scanner, which finds pasted NVRM lines. Memory stays bounded: a
// fixed read buffer, one partial line of at most 64 KiB, one record per table row, and the
// scanner's own caps.
#include "gpf/cli/explain_log.hpp"

#include "gpf/cli/cli.hpp"
#include "gpf/knowledge/cuda_errors.hpp"
#include "gpf/knowledge/xid_catalog.hpp"
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/report/text.hpp"
#include "gpf/rules/xid.hpp"
#include "gpf/util/text.hpp"
#include "gpf/version_info.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <queue>
#include <unistd.h>

namespace gpf {
namespace {

using Json = nlohmann::ordered_json;

// One pass over every row's texts: an Aho-Corasick automaton on lower-cased bytes, its transitions
// tabulated over byte classes (the bytes the texts use, and one class for all others).
class PatternAutomaton {
public:
  PatternAutomaton() {
    const auto rows = log_patterns();
    for (int b = 0; b < 256; ++b) {
      m_class[static_cast<std::size_t>(b)] = 0;
    }
    for (const auto& row : rows) {
      for (const auto text : row.texts) {
        for (const char c : text) {
          auto& cls = m_class[fold(c)];
          if (cls == 0) {
            cls = static_cast<std::uint8_t>(++m_classes);
          }
        }
      }
    }
    ++m_classes; // class 0 included
    for (int b = 0; b < 256; ++b) {
      // upper-case letters share their lower-case class
      m_class[static_cast<std::size_t>(b)] = m_class[fold(static_cast<char>(b))];
    }
    m_goto.assign(m_classes, 0);
    m_out.push_back(0);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      for (const auto text : rows[r].texts) {
        if (text.empty()) {
          continue;
        }
        std::uint32_t state = 0;
        for (const char c : text) {
          const std::size_t cls = m_class[static_cast<unsigned char>(c)];
          std::uint32_t& next = m_goto[state * m_classes + cls];
          if (next == 0) {
            next = static_cast<std::uint32_t>(m_out.size());
            m_out.push_back(0);
            m_goto.resize(m_goto.size() + m_classes, 0);
          }
          state = m_goto[state * m_classes + cls];
        }
        m_out[state] |= std::uint64_t{1} << r;
      }
    }
    // Breadth-first: failure links folded into the table, outputs inherited along them.
    std::vector<std::uint32_t> fail(m_out.size(), 0);
    std::queue<std::uint32_t> todo;
    for (std::size_t cls = 0; cls < m_classes; ++cls) {
      if (const auto next = m_goto[cls]; next != 0) {
        todo.push(next);
      }
    }
    while (!todo.empty()) {
      const auto state = todo.front();
      todo.pop();
      for (std::size_t cls = 0; cls < m_classes; ++cls) {
        std::uint32_t& next = m_goto[state * m_classes + cls];
        const auto via_fail = m_goto[fail[state] * m_classes + cls];
        if (next != 0) {
          fail[next] = via_fail;
          m_out[next] |= m_out[via_fail];
          todo.push(next);
        } else {
          next = via_fail;
        }
      }
    }
    renumber();
  }

  // The rows whose texts occur in line, one bit per row.
  std::uint64_t match(std::string_view line) const {
    std::uint32_t at = 0; // the state's row in the table: state * classes
    std::uint64_t found = 0;
    const std::uint32_t* table = m_table.data();
    for (const char c : line) {
      at = table[at + m_class[static_cast<unsigned char>(c)]];
      if (at >= m_accepting) [[unlikely]] {
        found |= m_found[at / m_classes];
      }
    }
    return found;
  }

private:
  static std::size_t fold(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 'A' && u <= 'Z' ? u + ('a' - 'A') : u;
  }
  std::array<std::uint8_t, 256> m_class{};
  std::size_t m_classes = 0;
  std::vector<std::uint32_t> m_goto; // built by state number
  std::vector<std::uint64_t> m_out;
  // The same automaton renumbered for matching: states that complete no text first, so that one
  // comparison per byte says whether the state reached completes some (m_accepting and above);
  // transitions hold the next state's offset in m_table (state * classes).
  std::vector<std::uint32_t> m_table;
  std::vector<std::uint64_t> m_found;
  std::uint32_t m_accepting = 0;

  void renumber() {
    const std::size_t states = m_out.size();
    std::vector<std::uint32_t> order; // new number -> old
    for (std::size_t pass = 0; pass < 2; ++pass) {
      for (std::size_t old = 0; old < states; ++old) {
        if ((m_out[old] != 0) == (pass == 1)) {
          order.push_back(static_cast<std::uint32_t>(old));
        }
      }
      if (pass == 0) {
        m_accepting = static_cast<std::uint32_t>(order.size() * m_classes);
      }
    }
    std::vector<std::uint32_t> renamed(states);
    for (std::size_t n = 0; n < states; ++n) {
      renamed[order[n]] = static_cast<std::uint32_t>(n);
    }
    m_table.resize(states * m_classes);
    m_found.resize(states);
    for (std::size_t n = 0; n < states; ++n) {
      m_found[n] = m_out[order[n]];
      for (std::size_t cls = 0; cls < m_classes; ++cls) {
        m_table[n * m_classes + cls] =
            static_cast<std::uint32_t>(renamed[m_goto[order[n] * m_classes + cls]] * m_classes);
      }
    }
  }
};

const PatternAutomaton& automaton() {
  static const PatternAutomaton a;
  return a;
}

std::string quote_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  std::string out = to_valid_utf8(line.substr(0, k_explain_quote_max));
  // Repair can grow the text (an invalid byte becomes U+FFFD, three bytes): cut again, at the
  // start of a character.
  bool cut = line.size() > k_explain_quote_max;
  if (out.size() > k_explain_quote_max) {
    std::size_t end = k_explain_quote_max;
    while (end > 0 && (static_cast<unsigned char>(out[end]) & 0xC0) == 0x80) {
      --end;
    }
    out.resize(end);
    cut = true;
  }
  if (cut) {
    out += " [...]";
  }
  return out;
}

std::vector<std::string> split_ids(std::string_view ids) {
  std::vector<std::string> out;
  for (const auto id : split(ids, ' ')) {
    if (!id.empty()) {
      out.emplace_back(id);
    }
  }
  return out;
}

struct RowHit {
  std::uint64_t count = 0;
  std::uint64_t line_number = 0;
  std::string line;
};

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The first CUDA error the line names by one of its enums' names (CUDA_ERROR_*, cudaError*), as a
// whole identifier: a longer name or a mere prefix names none; else one whose distinctive printed
// text the line holds. nullptr when the line names none.
const CudaError* cuda_error_in(std::string_view line) {
  const CudaError* first = nullptr;
  std::size_t first_at = std::string_view::npos;
  for (const std::string_view prefix :
       {std::string_view("CUDA_ERROR_"), std::string_view("cudaError")}) {
    for (auto at = line.find(prefix); at != std::string_view::npos && at < first_at;
         at = line.find(prefix, at + 1)) {
      if (at > 0 && identifier_char(line[at - 1])) {
        continue;
      }
      std::size_t end = at + prefix.size();
      while (end < line.size() && identifier_char(line[end])) {
        ++end;
      }
      if (const CudaError* e = find_cuda_error(line.substr(at, end - at))) {
        first = e;
        first_at = at;
        break;
      }
    }
  }
  if (first != nullptr) {
    return first;
  }
  for (const auto& e : cuda_errors()) {
    if (!e.printed.empty() && line.find(e.printed) != std::string_view::npos) {
      return &e;
    }
  }
  return nullptr;
}

LogCause cause_of(CudaErrorClass c) {
  switch (c) {
  case CudaErrorClass::node:
    return LogCause::node;
  case CudaErrorClass::ambiguous:
    return LogCause::ambiguous;
  case CudaErrorClass::none:
  case CudaErrorClass::job:
    return LogCause::job;
  }
  return LogCause::ambiguous;
}

std::string_view cause_word(LogCause c) {
  switch (c) {
  case LogCause::node:
    return "node";
  case LogCause::job:
    return "job";
  case LogCause::ambiguous:
    return "ambiguous";
  }
  return "ambiguous";
}

// "CUDA error 220 (CUDA_ERROR_NVLINK_UNCORRECTABLE, cudaErrorNvlinkUncorrectable): ..."
std::string cuda_meaning(const CudaError& e) {
  std::string names(e.driver);
  if (!e.runtime.empty()) {
    names += names.empty() ? std::string(e.runtime) : ", " + std::string(e.runtime);
  }
  return fmt::format("CUDA error {} ({}): {}", e.value, names, e.meaning);
}

} // namespace

bool LogExplanation::node_cause() const {
  return std::any_of(matches.begin(), matches.end(),
                     [](const LogMatch& m) { return m.cause == LogCause::node; });
}

class LogExplainer::Impl {
public:
  Impl()
      : m_rows(log_patterns().size()), m_cuda(cuda_errors().size()),
        m_nccl(nccl_warn_families().size()) {
    m_partial.reserve(4096);
  }

  void feed(std::string_view bytes) {
    m_bytes += bytes.size();
    m_scanner.feed(bytes);
    while (!bytes.empty()) {
      const auto nl = bytes.find('\n');
      const std::string_view piece = bytes.substr(0, nl);
      if (m_skipping) {
        // the rest of a line past the cap
      } else if (m_partial.empty() && nl != std::string_view::npos &&
                 piece.size() <= k_log_max_line) {
        line(piece); // the whole line is in this chunk: no copy
      } else {
        const std::size_t room = k_log_max_line - m_partial.size();
        m_partial.append(piece.substr(0, room));
        if (piece.size() > room) {
          line(m_partial);
          ++m_lines_cut;
          m_partial.clear();
          m_skipping = true;
        } else if (nl != std::string_view::npos) {
          line(m_partial);
          m_partial.clear();
        }
      }
      if (nl == std::string_view::npos) {
        return;
      }
      if (m_skipping) {
        m_skipping = false;
      }
      bytes.remove_prefix(nl + 1);
    }
  }

  LogExplanation finish() {
    if (!m_partial.empty()) {
      line(m_partial);
      m_partial.clear();
    }
    LogExplanation out;
    out.bytes = m_bytes;
    out.lines = m_lines;
    out.lines_cut = m_lines_cut;
    add_kernel_events(m_scanner.finish(), out);
    const auto rows = log_patterns();
    const auto errors = cuda_errors();
    for (const LogCause cause : {LogCause::node, LogCause::ambiguous, LogCause::job}) {
      for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].cause != cause || m_rows[r].count == 0) {
          continue;
        }
        LogMatch m;
        m.pattern = rows[r].id;
        m.cause = rows[r].cause;
        m.rules = split_ids(rows[r].rules);
        m.meaning = rows[r].meaning;
        m.source = rows[r].source;
        m.line = std::move(m_rows[r].line);
        m.line_number = m_rows[r].line_number;
        m.count = m_rows[r].count;
        out.matches.push_back(std::move(m));
      }
      // A CUDA error no pattern row took: named by its enum, whose fault from its class.
      for (std::size_t e = 0; e < errors.size(); ++e) {
        if (cause_of(errors[e].cls) != cause || m_cuda[e].count == 0) {
          continue;
        }
        LogMatch m;
        m.pattern = "cuda-error";
        m.cause = cause;
        m.meaning = cuda_meaning(errors[e]);
        m.detail = errors[e].detail;
        m.source = errors[e].driver.empty() ? k_cuda_runtime_errors_url : k_cuda_driver_errors_url;
        m.line = std::move(m_cuda[e].line);
        m.line_number = m_cuda[e].line_number;
        m.count = m_cuda[e].count;
        out.matches.push_back(std::move(m));
      }
      // An NCCL WARN no pattern row or CUDA error took, known by its family (what its message
      // starts with): as the table's rows, a node match whose rules are the causes to rule out
      // (--check confirms or rejects them); the meaning says a peer's failure can be the cause.
      const auto families = nccl_warn_families();
      for (std::size_t f = 0; f < families.size(); ++f) {
        if (cause != LogCause::node || m_nccl[f].count == 0) {
          continue;
        }
        LogMatch m;
        m.pattern = "nccl-warn-" + std::string(families[f].id);
        m.cause = cause;
        m.rules = split_ids(families[f].rules);
        m.meaning = fmt::format("NCCL WARN of its {} family: {}; the node rules below are the "
                                "causes to rule out (a rank that failed first makes its peers "
                                "warn too)",
                                families[f].name, families[f].meaning);
        m.source = families[f].source;
        m.line = std::move(m_nccl[f].line);
        m.line_number = m_nccl[f].line_number;
        m.count = m_nccl[f].count;
        out.matches.push_back(std::move(m));
      }
    }
    // Kernel-log matches of the job (application Xids) go after the node causes and either's too.
    const auto rank = [](const LogMatch& m) {
      return m.cause == LogCause::node ? 0 : m.cause == LogCause::ambiguous ? 1 : 2;
    };
    std::stable_sort(out.matches.begin(), out.matches.end(),
                     [&](const LogMatch& a, const LogMatch& b) { return rank(a) < rank(b); });
    return out;
  }

private:
  void line(std::string_view text) {
    ++m_lines;
    const std::uint64_t found = automaton().match(text);
    RowHit* hit_of_line = nullptr;
    if (found != 0) {
      // The most specific row (the first in the table) takes the line.
      hit_of_line = &m_rows[static_cast<std::size_t>(__builtin_ctzll(found))];
    } else if (const CudaError* e = cuda_error_in(text)) {
      hit_of_line = &m_cuda[static_cast<std::size_t>(e - cuda_errors().data())];
    } else if (const NcclWarnFamily* f = nccl_warn_family(text)) {
      hit_of_line = &m_nccl[static_cast<std::size_t>(f - nccl_warn_families().data())];
    } else {
      return;
    }
    RowHit& hit = *hit_of_line;
    if (hit.count++ == 0) {
      hit.line_number = m_lines;
      hit.line = quote_line(text);
    }
  }

  // Events of one rule are one match; an application or informational Xid is the job's.
  static void add_kernel_events(const LogFacts& facts, LogExplanation& out) {
    std::vector<const LogEvent*> events;
    for (const auto& [bus, list] : facts.gpu_events) {
      for (const auto& e : list) {
        events.push_back(&e);
      }
    }
    for (const auto& e : facts.host_events) {
      events.push_back(&e);
    }
    for (const auto& e : facts.earlier_boot_events) {
      events.push_back(&e);
    }
    std::sort(events.begin(), events.end(),
              [](const LogEvent* a, const LogEvent* b) { return a->first_seq < b->first_seq; });
    std::map<std::string, std::size_t> by_rule;
    for (const LogEvent* e : events) {
      const std::string rule(log_event_rule_id(*e));
      if (rule.empty()) {
        continue;
      }
      if (const auto it = by_rule.find(rule); it != by_rule.end()) {
        out.matches[it->second].count += e->count;
        continue;
      }
      LogMatch m;
      m.pattern = "kernel-log";
      // the job's own Xids (and the informational ones) point at no node condition
      const XidInfo* info = e->kind == LogEventKind::xid && e->xid ? find_xid(*e->xid) : nullptr;
      const bool job =
          info && (info->cls == XidClass::application || info->cls == XidClass::informational);
      m.cause = job ? LogCause::job : LogCause::node;
      if (!job) {
        m.rules.push_back(rule);
      }
      m.meaning = e->meaning.empty() ? "kernel log: " + rule : e->meaning;
      m.line = e->lines.empty() ? std::string() : quote_line(e->lines.front());
      m.count = e->count;
      by_rule.emplace(rule, out.matches.size());
      out.matches.push_back(std::move(m));
    }
  }

  std::vector<RowHit> m_rows;
  std::vector<RowHit> m_cuda; // one per CUDA error row
  std::vector<RowHit> m_nccl; // one per NCCL WARN family
  std::string m_partial;
  bool m_skipping = false;
  std::uint64_t m_bytes = 0;
  std::uint64_t m_lines = 0;
  std::uint64_t m_lines_cut = 0;
  KernelLogScanner m_scanner;
};

LogExplainer::LogExplainer() : m_impl(std::make_unique<Impl>()) {}
LogExplainer::~LogExplainer() = default;

void LogExplainer::feed(std::string_view bytes) {
  m_impl->feed(bytes);
}

LogExplanation LogExplainer::finish() {
  return m_impl->finish();
}

LogExplanation explain_log_text(std::string_view text) {
  LogExplainer explainer;
  explainer.feed(text);
  return explainer.finish();
}

namespace {

struct Candidate {
  std::string id;
  const Rule* rule = nullptr; // nullptr: turned off (--disable) or unknown
  CandidateState state = CandidateState::hypothesis;
  std::vector<const Finding*> findings; // --check: this rule's findings
};

std::string_view state_name(CandidateState s) {
  switch (s) {
  case CandidateState::hypothesis:
    return "hypothesis";
  case CandidateState::confirmed:
    return "confirmed";
  case CandidateState::rejected:
    return "rejected";
  case CandidateState::not_checked:
    return "not checked";
  }
  return "hypothesis";
}

const Rule* rule_in(std::span<const Rule> rules, std::string_view id) {
  const auto it =
      std::find_if(rules.begin(), rules.end(), [&](const Rule& r) { return r.id == id; });
  return it == rules.end() ? nullptr : &*it;
}

// Whether every probe the rule reads (its row's `.reads`) ran and gave its facts: when one did
// not (skipped, failed: a kernel log a non-root user cannot read), no finding is no evidence,
// and the candidate is "not checked" rather than rejected.
bool inputs_read(const ExplainLogChecked& checked, const Rule& rule) {
  return unread_probes(rule, checked.probes).empty();
}

std::vector<Candidate> candidates_of(const LogMatch& m, std::span<const Rule> rules,
                                     const ExplainLogChecked* checked) {
  std::vector<Candidate> out;
  for (const auto& id : m.rules) {
    Candidate c;
    c.id = id;
    c.rule = rule_in(rules, id);
    if (checked != nullptr) {
      for (const auto& f : checked->assessment.findings) {
        if (f.id == id) {
          c.findings.push_back(&f);
        }
      }
      c.state = !c.findings.empty()                                    ? CandidateState::confirmed
                : c.rule == nullptr || !inputs_read(*checked, *c.rule) ? CandidateState::not_checked
                                                                       : CandidateState::rejected;
    }
    out.push_back(std::move(c));
  }
  return out;
}

// The first PCI address the quoted line names ("PCI:0000:44:00", "0000:b3:00.0"), normalised;
// "" when none. A token is tried only with a "PCI:" prefix or a function after its last colon, so
// that a time of day (13:13:04) is no address.
std::string bus_in_line(std::string_view line) {
  const auto address_char = [](char ch) {
    return std::isxdigit(static_cast<unsigned char>(ch)) != 0 || ch == ':' || ch == '.' ||
           ch == 'P' || ch == 'C' || ch == 'I';
  };
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && !address_char(line[i])) {
      ++i;
    }
    std::size_t end = i;
    while (end < line.size() && address_char(line[end])) {
      ++end;
    }
    std::string_view token = line.substr(i, end - i);
    i = end;
    while (!token.empty() && (token.back() == ':' || token.back() == '.')) {
      token.remove_suffix(1);
    }
    const auto colon = token.rfind(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    const bool pci = starts_with(token, "PCI:");
    if (!pci && token.find('.', colon) == std::string_view::npos) {
      continue;
    }
    if (const auto bus = normalize_bus_id(token)) {
      return *bus;
    }
  }
  return {};
}

// The rule's remedy, or the first finding's remedy with real values when --check found it; the
// rule's with the bus id the quoted line names in place of its "<bus id>".
std::string remedy_of(const Candidate& c, const LogMatch& m) {
  if (!c.findings.empty() && !c.findings.front()->remedy.empty()) {
    return c.findings.front()->remedy;
  }
  const Rule* rule = c.rule != nullptr ? c.rule : find_rule(c.id);
  if (rule == nullptr) {
    return {};
  }
  std::string remedy(rule->remedy);
  if (const std::string bus = bus_in_line(m.line); !bus.empty()) {
    constexpr std::string_view k_placeholder = "<bus id>";
    for (auto at = remedy.find(k_placeholder); at != std::string::npos;
         at = remedy.find(k_placeholder, at + bus.size())) {
      remedy.replace(at, k_placeholder.size(), bus);
    }
  }
  return remedy;
}

std::string title_of(const Candidate& c) {
  const Rule* r = c.rule != nullptr ? c.rule : find_rule(c.id);
  return r != nullptr ? std::string(r->title) : std::string();
}

std::vector<std::string> valid_lines(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (const auto& l : lines) {
    out.push_back(to_valid_utf8(l));
  }
  return out;
}

Json explanation_json(const ExplainLogOptions& o, const LogExplanation& ex,
                      std::span<const Rule> rules, const ExplainLogChecked* checked,
                      int exit_code) {
  Json doc;
  doc["schema_version"] = 1;
  doc["tool"] = {{"name", k_tool_name}, {"version", k_tool_version}};
  doc["input"] = {{"name", to_valid_utf8(o.path == "-" ? "stdin" : o.path)},
                  {"bytes", ex.bytes},
                  {"lines", ex.lines},
                  {"lines_cut", ex.lines_cut}};
  doc["node_cause"] = ex.node_cause();
  doc["checked"] = checked != nullptr;
  if (checked != nullptr) {
    doc["check"] = {{"verdict", verdict_name(checked->assessment.verdict)},
                    {"root", o.root.empty() ? Json(nullptr) : Json(to_valid_utf8(o.root))}};
  }
  Json matches = Json::array();
  for (const auto& m : ex.matches) {
    Json jm;
    jm["pattern"] = m.pattern;
    jm["cause"] = cause_word(m.cause);
    jm["meaning"] = m.meaning;
    if (!m.detail.empty()) {
      jm["detail"] = m.detail;
    }
    jm["source"] = m.source.empty() ? Json(nullptr) : Json(m.source);
    jm["line"] = m.line;
    jm["line_number"] = m.line_number == 0 ? Json(nullptr) : Json(m.line_number);
    jm["count"] = m.count;
    Json cands = Json::array();
    for (const auto& c : candidates_of(m, rules, checked)) {
      Json jc;
      jc["rule"] = c.id;
      jc["title"] = title_of(c);
      jc["remedy"] = remedy_of(c, m);
      jc["state"] = state_name(c.state);
      Json found = Json::array();
      for (const Finding* f : c.findings) {
        found.push_back({{"severity", severity_name(f->severity)},
                         {"message", to_valid_utf8(f->message)},
                         {"gpu", f->gpu ? Json(*f->gpu) : Json(nullptr)},
                         {"evidence", valid_lines(f->evidence)}});
      }
      jc["findings"] = std::move(found);
      cands.push_back(std::move(jc));
    }
    jm["candidates"] = std::move(cands);
    matches.push_back(std::move(jm));
  }
  doc["matches"] = std::move(matches);
  doc["exit_code"] = exit_code;
  return doc;
}

// Wrapped to `width` as the check's text is (hanging indents, commands kept whole); everything
// the log or the host wrote is shown with its control characters escaped, never obeyed.
std::string explanation_text(const ExplainLogOptions& o, const LogExplanation& ex,
                             std::span<const Rule> rules, const ExplainLogChecked* checked,
                             std::size_t width) {
  // `lead` at `indent`, then text, continued `hang` columns in
  const auto field = [&](std::size_t indent, std::string_view lead, std::string_view text,
                         std::size_t hang) {
    return std::string(indent, ' ') + std::string(lead) +
           wrap_text(text, indent + lead.size(), hang, width);
  };
  std::string out =
      field(0, "explain-log: ",
            fmt::format("{} ({} lines, {} bytes{})", printable(o.path == "-" ? "stdin" : o.path),
                        ex.lines, ex.bytes,
                        ex.lines_cut > 0 ? fmt::format(", {} cut at 64 KiB", ex.lines_cut)
                                         : std::string()),
            2);
  if (ex.matches.empty()) {
    out += "\n" + wrap_text("No known error text: this says nothing about the node.", 0, 2, width);
    return out;
  }
  std::vector<std::string> named;
  std::vector<std::string> confirmed;
  std::vector<std::string> unchecked;
  std::vector<std::string> unread; // the probes the unchecked candidates read
  const auto add_once = [](std::vector<std::string>& list, const std::string& id) {
    if (std::find(list.begin(), list.end(), id) == list.end()) {
      list.push_back(id);
    }
  };
  bool node_unruled = false; // a node cause named by no rule (a CUDA error's conditions)
  bool either = false;
  for (const auto& m : ex.matches) {
    const bool node = m.cause == LogCause::node;
    out += "\n" + field(0,
                        node                             ? "NODE: "
                        : m.cause == LogCause::ambiguous ? "NODE OR JOB: "
                                                         : "JOB: ",
                        printable(m.meaning), 2);
    if (!m.line.empty()) {
      const std::string lead =
          m.line_number > 0 ? fmt::format("line {}: ", m.line_number) : "kernel log: ";
      out += field(2, lead, printable(m.line), 4);
    }
    if (m.count > 1) {
      out += fmt::format("  ({} times in all)\n", m.count);
    }
    if (m.cause == LogCause::ambiguous) {
      either = true;
      out += field(2, "what tells: ", printable(m.detail), 4);
    } else if (!node) {
      out += "  The job's own error: no node rule explains it.\n";
    } else if (m.rules.empty()) {
      node_unruled = true;
      out += field(2, "on the node: ", printable(m.detail), 4);
    } else {
      out += "  Candidate rules, most specific first:\n";
      for (const auto& c : candidates_of(m, rules, checked)) {
        const std::string state =
            checked != nullptr ? fmt::format(" [{}]", state_name(c.state)) : std::string();
        out += field(4, fmt::format("{}{}: ", c.id, state), printable(title_of(c)), 8);
        for (const Finding* f : c.findings) {
          out += field(6, "found: ", printable(f->message), 8);
        }
        if (checked == nullptr || c.state != CandidateState::rejected) {
          out += field(6, "remedy: ", printable(remedy_of(c, m)), 8);
        }
        add_once(named, c.id);
        if (c.state == CandidateState::confirmed) {
          add_once(confirmed, c.id);
        }
        if (c.state == CandidateState::not_checked) {
          add_once(unchecked, c.id);
          if (c.rule != nullptr) {
            for (const auto word : c.rule->reads.names()) {
              add_once(unread, std::string(word));
            }
          }
        }
      }
    }
    if (!m.source.empty()) {
      out += field(2, "source: ", printable(m.source), 4);
    }
  }
  out += "\n";
  if (named.empty() && node_unruled) {
    out += wrap_text("The node causes above are named by the error itself and no rule checks "
                     "them: look at the node for the conditions listed.",
                     0, 2, width);
  } else if (named.empty() && either) {
    out += wrap_text("No node rule is named: for the errors that may be either the node's or the "
                     "job's, \"what tells\" says how to decide.",
                     0, 2, width);
  } else if (named.empty()) {
    out +=
        wrap_text("Nothing points at the node: the errors above are the job's own.", 0, 2, width);
  } else if (checked == nullptr) {
    out += wrap_text(
        fmt::format("Node causes named (hypotheses until checked): {}.", fmt::join(named, ", ")), 0,
        2, width);
    out += wrap_text(fmt::format("Confirm them on the node: `gpu-preflight explain-log --check {}`",
                                 printable(o.path)),
                     0, 2, width);
  } else {
    if (confirmed.empty()) {
      out += wrap_text(fmt::format("The check ({}) confirms none of the candidates{}",
                                   verdict_name(checked->assessment.verdict),
                                   unchecked.empty() ? ": look at the job, or check the node the "
                                                       "job ran on."
                                                     : "."),
                       0, 2, width);
    } else {
      out += wrap_text(fmt::format("Confirmed on this node: {}.", fmt::join(confirmed, ", ")), 0, 2,
                       width);
    }
    if (!unchecked.empty()) {
      // what the check could not read, so that "none confirmed" is not read as "none there"
      std::vector<std::string> missing;
      for (const auto& p : checked->probes) {
        if (p.state != ProbeState::ok &&
            std::find(unread.begin(), unread.end(), p.name) != unread.end()) {
          const std::string_view why = p.message;
          missing.push_back(printable(fmt::format(
              "{} ({})", p.what.empty() ? p.name : p.what,
              why.empty()
                  ? std::string_view(p.state == ProbeState::skipped ? "skipped" : "unreadable")
                  : why.substr(0, why.find(" (")))));
        }
      }
      out += wrap_text(fmt::format("Not checked: {}; what they read could not be read here{}. "
                                   "Run the check as root, or on a snapshot taken as root.",
                                   fmt::join(unchecked, ", "),
                                   missing.empty() ? std::string()
                                                   : fmt::format(": {}", fmt::join(missing, "; "))),
                       0, 2, width);
    }
  }
  return out;
}

// Whether the check leaves a node cause standing: a candidate confirmed, or one it could not
// check (exit 0 only when every candidate was checked and rejected).
bool node_not_cleared(const LogExplanation& ex, std::span<const Rule> rules,
                      const ExplainLogChecked& a) {
  for (const auto& m : ex.matches) {
    for (const auto& c : candidates_of(m, rules, &a)) {
      if (c.state == CandidateState::confirmed || c.state == CandidateState::not_checked) {
        return true;
      }
    }
  }
  return false;
}

// Reads path ("-" = stdin) through the explainer; the OS reason on failure.
std::optional<std::string> stream_file(const std::string& path, LogExplainer& explainer) {
  const bool stdin_input = path == "-";
  if (stdin_input && ::isatty(STDIN_FILENO) == 1) { // not waiting silently for nobody's typing
    std::cerr << "gpu-preflight: explain-log: reading the job's log from the terminal; paste it "
                 "and end with Ctrl-D, or name the log file (gpu-preflight explain-log job.log)\n";
  }
  const int fd = stdin_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    return std::string(std::strerror(errno));
  }
  std::vector<char> buf(256 * 1024);
  std::optional<std::string> error;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      error = std::strerror(errno);
      break;
    }
    if (n == 0) {
      break;
    }
    explainer.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
  if (!stdin_input) {
    ::close(fd);
  }
  return error;
}

} // namespace

CLI::App* add_explain_log_command(CLI::App& app, ExplainLogOptions& o) {
  auto* cmd = app.add_subcommand(
      "explain-log",
      "From a failed job's log to the node conditions that cause its errors (FILE or - for stdin)");
  cmd->add_option("file", o.path, "The job's log or stderr ('-' = stdin)")->type_name("FILE");
  cmd->add_option("--format", o.format, "Output format: text (default), json")
      ->type_name("FORMAT")
      // the tool's own message, and nothing added to the metavar (the man page reads the help)
      ->check(CLI::Validator(
          [](std::string& v) {
            return v == "text" || v == "json"
                       ? std::string()
                       : fmt::format("\"{}\" is not one of text, json", printable(v));
          },
          ""));
  cmd->add_flag("--check", o.check,
                "Then run the check on this host (or --root DIR) and mark each candidate "
                "confirmed or rejected");
  cmd->add_option("--root", o.root, "With --check: judge this snapshot instead of this host")
      ->type_name("DIR");
  cmd->footer(
      "Examples:\n"
      "  gpu-preflight explain-log slurm-1234.out\n"
      "  kubectl logs trainer-0 | gpu-preflight explain-log - --check\n"
      "  gpu-preflight explain-log job.log --check --root node17 --format json\n\n"
      "Exit status: 0 no node cause named (no known error text says nothing about the\n"
      "node; with --check: every candidate checked and rejected), 1 a node cause is named (with --check: confirmed, or not checked\n"
      "because an input it reads could not be read), 2 the log could not be read or\n"
      "the check could not run.");
  return cmd;
}

int run_explain_log(const ExplainLogOptions& o, std::span<const Rule> rules,
                    const ExplainLogCheck& check) {
  LogExplainer explainer;
  if (const auto error = stream_file(o.path, explainer)) {
    std::cerr << "gpu-preflight: error: explain-log: cannot read "
              << printable(o.path == "-" ? "stdin" : o.path) << ": " << *error << "\n";
    return k_exit_error;
  }
  const LogExplanation ex = explainer.finish();
  std::optional<ExplainLogChecked> assessed;
  if (o.check) {
    assessed = check();
    if (!assessed) {
      return k_exit_error;
    }
  }
  const ExplainLogChecked* checked = assessed ? &*assessed : nullptr;
  const bool node = checked != nullptr ? node_not_cleared(ex, rules, *checked) : ex.node_cause();
  const int exit_code = node ? k_exit_not_ready : k_exit_ready;
  std::string out = o.format == "json"
                        ? explanation_json(o, ex, rules, checked, exit_code).dump(2) + "\n"
                        : explanation_text(o, ex, rules, checked, text_width(STDOUT_FILENO));
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << "gpu-preflight: error: cannot write the report\n";
    return k_exit_error;
  }
  return exit_code;
}

} // namespace gpf
