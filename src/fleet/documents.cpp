// Reading summarize's inputs: JSON documents one after another, as jq reads them, each parsed
// under a size cap into its node's record; a damaged document costs itself, not the rest of the
// input, and of two reports of one node the newer counts.
#include "fleet/summary.hpp"

#include "gpf/util/exit_codes.hpp"
#include "gpf/util/json_bounded.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <streambuf>

namespace gpf::fleet {

namespace fs = std::filesystem;

// One report's text is parsed only up to this size (a real report is tens of KiB); an input is
// read one document at a time, each under the cap, so memory stays bounded for any input.
constexpr std::size_t k_document_cap = 16u << 20;
constexpr std::size_t k_unreadable_shown = 20;  // unreadable inputs named on stderr
constexpr std::size_t k_unreadable_kept = 1000; // and listed in the summary
// How far ahead of this host's clock a report's checked_at may be (clocks of a fleet drift; NTP
// keeps them within seconds) before it is a future date.
constexpr std::int64_t k_clock_skew_s = 300;

void Fleet::document(std::string_view text, const std::string& source) {
  ++m_reports;
  if (!json_depth_within(text)) {
    return unreadable(source, fmt::format("not a gpu-preflight report (JSON nested deeper than {})",
                                          k_json_max_depth));
  }
  // Only the members a node's record reads are built (report_shape): a 16 MiB report costs
  // the memory of those, not of its whole facts.
  auto parsed =
      parse_json_bounded(text, k_max_json_elements, k_max_json_members, nullptr, &report_shape());
  if (!parsed) {
    // A report cut short is a node whose check crashed, was killed or timed out: no report,
    // for the host it names, if it got that far.
    const std::string_view body = trim(text);
    const CutText cut = cut_short(body);
    if (cut.cut && !body.empty()) {
      return no_report(source, cut.host.value_or(""), "report cut short");
    }
    return unreadable(source, parsed.error().message);
  }
  const nlohmann::json& doc = parsed->doc;
  if (doc.is_array()) { // an array of reports, as `jq -s` writes them
    --m_reports;
    std::size_t i = 0;
    for (const auto& one : doc) {
      ++m_reports;
      add(one, fmt::format("{}[{}]", source, i++));
    }
    return;
  }
  add(doc, source);
}

void Fleet::unreadable(const std::string& source, std::string why) {
  ++m_unreadable_count;
  if (m_unreadable_count <= k_unreadable_shown) {
    std::cerr << "gpu-preflight: summarize: " << printable(quote_evidence(source, 256)) << ": "
              << printable(quote_evidence(why, 512)) << "\n";
  }
  if (m_unreadable.size() < k_unreadable_kept) {
    m_unreadable.push_back({quote_evidence(source, 256), quote_evidence(why, 512)});
  }
}

void Fleet::no_report(const std::string& source, const std::string& host, const std::string& why) {
  ++m_no_report;
  NodeRecord n;
  n.no_report = true;
  n.verdict = "none";
  n.exit_code = k_exit_not_ready;
  n.primary = n.primary_id = why;
  n.source = source;
  if (!host.empty()) {
    n.key = n.name = quote_evidence(host, 256);
  } else {
    n.hostless = true;
  }
  insert(std::move(n));
}

int Fleet::exit_code() const {
  if (m_unreadable_count > 0 || m_nodes.empty()) {
    return k_exit_error;
  }
  for (const auto& [key, n] : m_nodes) {
    if (!ready(n)) {
      return k_exit_not_ready;
    }
  }
  return k_exit_ready;
}

void Fleet::finish() {
  if (m_unreadable_count > k_unreadable_shown) {
    std::cerr << "gpu-preflight: summarize: " << m_unreadable_count - k_unreadable_shown
              << " more unreadable inputs not named here (counted in the summary)\n";
  }
  for (auto& [key, n] : m_nodes) {
    if (m_max_age_s) {
      n.stale = !n.plausible_time() || m_now_s - *n.checked_s > *m_max_age_s;
    }
  }
}

void Fleet::superseded(Superseded s) {
  ++m_superseded_count;
  if (m_superseded.size() < k_unreadable_kept) {
    m_superseded.push_back(std::move(s));
  }
}

void Fleet::add(const nlohmann::json& doc, const std::string& source) {
  auto record = read_record(doc);
  if (!record) {
    return unreadable(source, record.error().message);
  }
  NodeRecord n = std::move(record).value();
  n.source = source;
  n.future = n.checked_s && *n.checked_s > m_now_s + k_clock_skew_s;
  m_future += n.future ? 1 : 0;
  insert(std::move(n));
}

void Fleet::insert(NodeRecord n) {
  n.seq = m_seq++;
  if (n.hostless) {
    n.key = "\x01" + n.source; // never a host name
    n.name = fs::path(n.source).filename().string();
    if (n.name.empty()) {
      n.name = n.source;
    }
  }
  auto [it, inserted] = m_nodes.try_emplace(n.key);
  if (!inserted) {
    NodeRecord& old = it->second;
    // the newer check wins; a report without a plausible time (none readable, or in the
    // future) is older than any with one, and among those the later input wins
    const auto older = [](const NodeRecord& a, const NodeRecord& b) {
      const auto time = [](const NodeRecord& r) {
        return r.plausible_time() ? *r.checked_s : std::numeric_limits<std::int64_t>::min();
      };
      return time(a) != time(b) ? time(a) < time(b) : a.seq < b.seq;
    };
    if (older(n, old)) {
      superseded({n.name, n.source, n.checked_at, old.source, old.checked_at});
      return;
    }
    superseded({old.name, old.source, old.checked_at, n.source, n.checked_at});
  }
  it->second = std::move(n);
}
namespace {

// A stream buffer over an input that keeps the text of the document being read. sax_parse reads
// an istream through its buffer one character at a time and stops after a document's last
// character, so what it consumed since mark() is exactly one document (with the white space
// before it). Text handed to replay() is read again before the rest of the input. At most
// k_document_cap bytes of a document are kept; a longer one is still read to its end.
class DocumentBuffer : public std::streambuf {
public:
  explicit DocumentBuffer(std::istream& in) : m_in(in), m_chunk(1 << 16, '\0') {}

  void mark() {
    m_doc.clear();
    m_over = false;
    m_eof = false;
    m_start = gptr();
  }
  // The text consumed since mark(); empty when it was longer than the cap.
  std::string take() {
    keep(gptr());
    m_start = gptr();
    return m_over ? std::string() : std::move(m_doc);
  }
  bool over() const { return m_over; }
  bool eof() const { return m_eof; }
  bool bad() const { return m_in.bad(); }
  void replay(std::string text) {
    keep(gptr());
    text.append(gptr(), egptr()); // what was read ahead and not consumed follows it
    m_replay = std::move(text);
    m_replaying = true;
    setg(m_replay.data(), m_replay.data(), m_replay.data() + m_replay.size());
    m_start = gptr();
  }
  // Consumes the input up to the next line that begins with "{" (a document that went wrong:
  // its rest is skipped, not read line by line as documents). The text skipped, at most the cap.
  // line_start: what was consumed last ended a line.
  std::string skip_to_document(bool line_start) {
    std::string skipped;
    for (int c = sgetc(); c != traits_type::eof(); c = snextc()) {
      if (line_start && c == '{') {
        break;
      }
      line_start = c == '\n';
      if (skipped.size() < k_document_cap) {
        skipped += static_cast<char>(c);
      }
    }
    m_start = gptr();
    return skipped;
  }

protected:
  int_type underflow() override {
    if (gptr() < egptr()) {
      return traits_type::to_int_type(*gptr());
    }
    keep(egptr());
    if (m_replaying) {
      m_replaying = false;
      m_replay.clear();
    }
    m_in.read(m_chunk.data(), static_cast<std::streamsize>(m_chunk.size()));
    const auto n = static_cast<std::size_t>(m_in.gcount());
    setg(m_chunk.data(), m_chunk.data(), m_chunk.data() + n);
    m_start = gptr();
    if (n == 0) {
      m_eof = true;
      return traits_type::eof();
    }
    return traits_type::to_int_type(*gptr());
  }

private:
  void keep(const char* end) {
    if (m_start == nullptr || end == nullptr || end <= m_start) {
      return;
    }
    const auto n = static_cast<std::size_t>(end - m_start);
    if (!m_over && m_doc.size() + n > k_document_cap) {
      m_over = true;
      m_doc.clear();
      m_doc.shrink_to_fit();
    }
    if (!m_over) {
      m_doc.append(m_start, n);
    }
    m_start = end;
  }

  std::istream& m_in;
  std::string m_chunk;
  std::string m_replay;
  bool m_replaying = false;
  std::string m_doc;
  const char* m_start = nullptr;
  bool m_over = false;
  bool m_eof = false;
};

// Accepts any JSON: only where a document ends, and whether it is one, matter.
class AnySax : public nlohmann::json_sax<nlohmann::json> {
public:
  bool null() override { return true; }
  bool boolean(bool /*v*/) override { return true; }
  bool number_integer(number_integer_t /*v*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*v*/) override { return true; }
  bool number_float(number_float_t /*v*/, const string_t& /*s*/) override { return true; }
  bool string(string_t& /*v*/) override { return true; }
  bool binary(binary_t& /*v*/) override { return true; }
  bool start_object(std::size_t /*n*/) override { return true; }
  bool key(string_t& /*k*/) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*n*/) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*e*/) override {
    return false;
  }
};

// Where a document that went wrong holds the start of the next one: a report's opening brace
// ("{" and its first member "schema_version", which check writes first and no nested object
// has), wherever the killed node's output stopped; else a line that begins with "{" (a JSON line,
// or a pretty report's top-level brace). Searched after the document's own first character;
// npos when none.
std::size_t next_document_start(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return std::string_view::npos;
  }
  for (auto at = text.find('{', first + 1); at != std::string_view::npos;
       at = text.find('{', at + 1)) {
    const auto member = text.find_first_not_of(" \t\r\n", at + 1);
    if (member != std::string_view::npos && text.substr(member, 16) == "\"schema_version\"") {
      return at;
    }
  }
  const auto line = text.find("\n{", first + 1);
  return line == std::string_view::npos ? line : line + 1;
}

} // namespace

// One input: a stream of JSON documents, as jq reads them: one report (or an array of them, as
// `jq -s` writes it), reports one after another (`cat reports/*.json`, `srun … --format json`),
// or JSON lines. A document is parsed by nlohmann's SAX parser, which stops at its end; a
// document that goes wrong (cut short by a killed check, a damaged line) is the input up to the
// next line that starts a document, and reading goes on from there. An input whose first document
// is no JSON at all is one damaged report. A source is the input's name when it holds one
// document, "name:line" for each of several.
void read_input(std::istream& in, const std::string& name, Fleet& fleet, bool file) {
  DocumentBuffer buffer(in);
  std::istream stream(&buffer);
  std::size_t line = 1;  // the line the next consumed text starts on
  std::size_t count = 0; // documents met
  // The first document, until a second (a plain struct: GCC 12 sees an optional<pair<string, …>>
  // as maybe uninitialised here, a false positive).
  struct Held {
    bool present = false;
    std::string text;
    std::size_t line = 0;
  } held;
  const auto source = [&](std::size_t at) { return fmt::format("{}:{}", name, at); };
  const auto release_held = [&] {
    if (held.present) {
      fleet.document(held.text, source(held.line));
      held = Held{};
    }
  };
  // The line a document starts on, from its text (leading white space included).
  const auto start_line = [&](std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    return line +
           static_cast<std::size_t>(std::count(
               text.begin(),
               text.begin() + static_cast<std::ptrdiff_t>(std::min(first, text.size())), '\n'));
  };
  for (;;) {
    buffer.mark();
    AnySax sax;
    const bool ok =
        nlohmann::json::sax_parse(stream, &sax, nlohmann::json::input_format_t::json, false);
    const bool at_end = buffer.eof();
    const bool over = buffer.over();
    std::string text = buffer.take();
    stream.clear();
    if (buffer.bad()) {
      release_held();
      fleet.not_a_report();
      return fleet.unreadable(name, "read error");
    }
    if (!over && !ok && at_end && trim(text).empty()) { // nothing but white space left
      break;
    }
    ++count;
    if (over) {
      release_held();
      fleet.not_a_report();
      fleet.unreadable(count == 1 ? name : source(line),
                       fmt::format("a document longer than {} MiB", k_document_cap >> 20));
      if (!ok && !at_end) {
        const std::string skipped = buffer.skip_to_document(false);
        line += static_cast<std::size_t>(std::count(skipped.begin(), skipped.end(), '\n'));
      }
      if (!ok && at_end) {
        break;
      }
      continue;
    }
    const std::size_t at = start_line(text);
    if (ok) {
      line += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
      if (count == 1) {
        held = Held{true, std::move(text), at};
      } else {
        release_held();
        fleet.document(text, source(at));
      }
      continue;
    }
    // It went wrong: up to the next document's start, or to the end of its line. A little of
    // what follows is read ahead, so that a report starting at the very character that went
    // wrong ("...,{" where a killed node's output stopped) is found; it is given back otherwise.
    std::size_t ahead = 0;
    if (!at_end) {
      std::string more(64, '\0');
      stream.read(more.data(), static_cast<std::streamsize>(more.size()));
      ahead = static_cast<std::size_t>(stream.gcount());
      stream.clear();
      text.append(more.data(), ahead);
    }
    const auto next = next_document_start(text);
    if (next == std::string::npos && ahead > 0) {
      buffer.replay(text.substr(text.size() - ahead));
      text.resize(text.size() - ahead);
    }
    if (next != std::string::npos) {
      buffer.replay(text.substr(next));
      text.resize(next);
    } else if (count == 1 && !at_end) {
      // the first document is no JSON at all: the input is one damaged report (or not ours),
      // named by its own parse error when it fits the cap
      const std::size_t rest = k_document_cap + 1 - std::min(text.size(), k_document_cap + 1);
      std::string more(rest, '\0');
      stream.read(more.data(), static_cast<std::streamsize>(more.size()));
      text.append(more.data(), static_cast<std::size_t>(stream.gcount()));
      if (text.size() > k_document_cap) {
        fleet.not_a_report();
        return fleet.unreadable(
            name, "not valid JSON (neither one report, reports one after another, nor JSON lines)");
      }
      return fleet.document(text, name);
    } else if (!at_end) {
      text += buffer.skip_to_document(!text.empty() && text.back() == '\n');
    }
    line += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    const bool only = count == 1 && at_end && next == std::string::npos;
    if (only && trim(text).empty()) {
      break;
    }
    release_held();
    fleet.document(text, only ? name : source(at));
    if (at_end && next == std::string::npos) {
      break;
    }
  }
  if (held.present) { // one document: the input's own name
    fleet.document(held.text, count == 1 ? name : source(held.line));
    held = Held{};
  }
  if (count == 0) {
    fleet.not_a_report();
    // an empty file is a node whose check wrote nothing; empty standard input is no input
    return file ? fleet.no_report(name, "", "empty report") : fleet.unreadable(name, "empty");
  }
}

} // namespace gpf::fleet
