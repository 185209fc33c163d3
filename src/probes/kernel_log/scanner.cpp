// The streaming kernel-log scanner. Per read buffer: one pass of a fixed-string prefilter (SSE2
// where available) finds the few lines that can hold a signature or a boot marker; only those
// lines, plus one timestamp sample per 64 KiB, are parsed. Consecutive NVRM lines are held in a
// small window so multi-line messages are matched joined. Events are keyed and counted, so memory
// does not grow with the log. Boot rule and formats: docs/kernel-log.md.
#include "gpf/probes/kernel_log_scanner.hpp"

#include "gpf/probes/kernel_log_format.hpp"
#include "gpf/probes/kernel_log_signatures.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpf {
namespace {

constexpr std::size_t k_chunk = 1 << 20; // bytes read per round
constexpr std::size_t k_slack = 64;      // spare bytes past the data: the SIMD loads may overrun
constexpr std::size_t k_sample_step = 64 * 1024; // a timestamp is sampled at least this often
constexpr std::size_t k_evidence_cap = 1024;     // bytes of a line kept as evidence
constexpr std::size_t k_dict_gap_max = 1024; // /dev/kmsg KEY=value lines allowed between NVRM lines
constexpr double k_reset_drop_s = 1.0;       // a monotonic timestamp falling further is a new boot
constexpr std::uint64_t k_hung_trace_bytes = 8192; // a hung task's call trace follows within this

// The prefilter. Anchors (byte pairs) and the needles they stand for:
//   "nv" in any case → NVRM, nvidia      "uv" → nouveau      "ux" → Linux version
//   "\n-" → a line starting "-- " (journal -- Boot / -- Reboot markers)
//   "BA" → BAR, "DM" → DMAR, "Vi" → AMD-Vi, "vf" → vfio (why a GPU's DMA/BAR set-up failed)
//   "IN" → "INFO: task " (a hung task, whose call trace may name the NVIDIA modules)
//   "Lo" → "Loading of " / "Lockdown: " (the kernel refused a module), "D3" → "D3cold" (a device
//   that did not power up), "pc" → "pcieport" (AER and hot-plug link events of a port)
// Returns the first position in [p, end) where an anchor starts, or end.
const char* next_candidate(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i fold = _mm_set1_epi8(0x20);
  const __m128i n = _mm_set1_epi8('n');
  const __m128i v = _mm_set1_epi8('v');
  const __m128i u = _mm_set1_epi8('u');
  const __m128i x = _mm_set1_epi8('x');
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i dash = _mm_set1_epi8('-');
  const __m128i big_b = _mm_set1_epi8('B');
  const __m128i big_a = _mm_set1_epi8('A');
  const __m128i big_d = _mm_set1_epi8('D');
  const __m128i big_m = _mm_set1_epi8('M');
  const __m128i big_v = _mm_set1_epi8('V');
  const __m128i i = _mm_set1_epi8('i');
  const __m128i f = _mm_set1_epi8('f');
  const __m128i big_i = _mm_set1_epi8('I');
  const __m128i big_n = _mm_set1_epi8('N');
  const __m128i big_l = _mm_set1_epi8('L');
  const __m128i o = _mm_set1_epi8('o');
  const __m128i three = _mm_set1_epi8('3');
  const __m128i pee = _mm_set1_epi8('p');
  const __m128i c = _mm_set1_epi8('c');
  for (; p < end; p += 16) {
    const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1));
    const __m128i nv = _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(b0, fold), n),
                                     _mm_cmpeq_epi8(_mm_or_si128(b1, fold), v));
    const __m128i ux = _mm_and_si128(_mm_cmpeq_epi8(b0, u),
                                     _mm_or_si128(_mm_cmpeq_epi8(b1, v), _mm_cmpeq_epi8(b1, x)));
    const __m128i marker = _mm_and_si128(_mm_cmpeq_epi8(b0, nl), _mm_cmpeq_epi8(b1, dash));
    const __m128i dma = _mm_or_si128(
        _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(b0, big_b), _mm_cmpeq_epi8(b1, big_a)),
                     _mm_and_si128(_mm_cmpeq_epi8(b0, big_d), _mm_cmpeq_epi8(b1, big_m))),
        _mm_or_si128(_mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(b0, big_v), _mm_cmpeq_epi8(b1, i)),
                                  _mm_and_si128(_mm_cmpeq_epi8(b0, v), _mm_cmpeq_epi8(b1, f))),
                     _mm_and_si128(_mm_cmpeq_epi8(b0, big_i), _mm_cmpeq_epi8(b1, big_n))));
    const __m128i cause = _mm_or_si128(
        _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(b0, big_l), _mm_cmpeq_epi8(b1, o)),
                     _mm_and_si128(_mm_cmpeq_epi8(b0, big_d), _mm_cmpeq_epi8(b1, three))),
        _mm_and_si128(_mm_cmpeq_epi8(b0, pee), _mm_cmpeq_epi8(b1, c)));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(_mm_or_si128(nv, ux), _mm_or_si128(marker, dma)), cause)));
    if (mask != 0) {
      const char* hit = p + __builtin_ctz(mask);
      return hit < end ? hit : end;
    }
  }
  return end;
#else
  for (; p < end; ++p) {
    const char c0 = p[0];
    const char c1 = p[1];
    if ((((c0 | 0x20) == 'n') && ((c1 | 0x20) == 'v')) || (c0 == 'u' && (c1 == 'v' || c1 == 'x')) ||
        (c0 == '\n' && c1 == '-') || (c0 == 'B' && c1 == 'A') || (c0 == 'D' && c1 == 'M') ||
        (c0 == 'V' && c1 == 'i') || (c0 == 'v' && c1 == 'f') || (c0 == 'I' && c1 == 'N') ||
        (c0 == 'L' && c1 == 'o') || (c0 == 'D' && c1 == '3') || (c0 == 'p' && c1 == 'c')) {
      return p;
    }
  }
  return end;
#endif
}

// Does needle sit at offset `at` of [begin, end)?
bool has_at(const char* begin, const char* end, std::ptrdiff_t at, std::string_view needle) {
  return at >= 0 && at + static_cast<std::ptrdiff_t>(needle.size()) <= end - begin &&
         std::memcmp(begin + at, needle.data(), needle.size()) == 0;
}

// Confirms the needle behind an anchor at h.
bool is_needle(const char* begin, const char* end, const char* h) {
  const std::ptrdiff_t at = h - begin;
  switch (*h) {
  case 'n':
  case 'N':
    return has_at(begin, end, at, "NVRM") || has_at(begin, end, at, "nvidia") ||
           has_at(begin, end, at, "nv_peer_mem");
  case 'u':
    return has_at(begin, end, at - 2, "nouveau") || has_at(begin, end, at - 3, "Linux version ");
  case '\n':
    return has_at(begin, end, at + 1, "-- ");
  case 'B':
    return has_at(begin, end, at, "BAR");
  case 'D':
    return has_at(begin, end, at, "DMAR") || has_at(begin, end, at, "D3cold");
  case 'L':
    return has_at(begin, end, at, "Loading of ") || has_at(begin, end, at, "Lockdown: ");
  case 'p':
    return has_at(begin, end, at, "pcieport");
  case 'V':
    return has_at(begin, end, at - 4, "AMD-Vi");
  case 'v':
    return has_at(begin, end, at, "vfio");
  case 'I':
    return has_at(begin, end, at, "INFO: task ");
  default:
    return false;
  }
}

const char* find_char(const char* p, const char* end, char c) {
  return p >= end ? nullptr
                  : static_cast<const char*>(std::memchr(p, c, static_cast<std::size_t>(end - p)));
}

const char* find_char_back(const char* begin, const char* p, char c) {
  return p <= begin
             ? nullptr
             : static_cast<const char*>(::memrchr(begin, c, static_cast<std::size_t>(p - begin)));
}

std::string event_key(const LogEvent& e, unsigned epoch) {
  // Repeats of one event share a key; the driver's free text (pids, addresses) is not part of it.
  const bool keep_detail = e.kind != LogEventKind::xid && e.kind != LogEventKind::api_mismatch;
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", epoch, static_cast<int>(e.kind),
                     e.bus_id.value_or(""),
                     e.xid    ? static_cast<long>(*e.xid)
                     : e.sxid ? static_cast<long>(*e.sxid)
                              : -1L,
                     e.init_status ? static_cast<long>(*e.init_status) : -1L,
                     e.rm_status ? static_cast<long>(*e.rm_status) : -1L,
                     e.device_minor ? static_cast<long>(*e.device_minor) : -1L, e.client_version,
                     e.kernel_version, keep_detail ? e.detail : std::string(),
                     e.line_fatal ? (*e.line_fatal ? "fatal" : "non-fatal") : "");
}

// Distinct events with counts; at most k_log_max_events, later distinct ones only counted.
class EventList {
public:
  void add(LogEvent&& e, const std::string& key) {
    if (auto it = m_index.find(key); it != m_index.end()) {
      LogEvent& into = m_events[it->second];
      into.count += e.count;
      into.last_time = e.last_time;
      into.last_seq = e.last_seq;
      into.last_line = !e.last_line.empty() ? e.last_line
                       : e.lines.empty()    ? std::string()
                                            : e.lines.front();
      if (e.recovery_action) {
        into.recovery_action = e.recovery_action;
      }
      return;
    }
    if (m_events.size() >= k_log_max_events) {
      m_dropped += e.count;
      return;
    }
    m_index.emplace(key, m_events.size());
    m_events.push_back(std::move(e));
  }
  // One more occurrence of the event under key; false when there is none (never kept).
  bool count_again(const std::string& key, std::string_view line, const std::string& time,
                   std::uint64_t seq) {
    const auto it = m_index.find(key);
    if (it == m_index.end()) {
      return false;
    }
    LogEvent& e = m_events[it->second];
    ++e.count;
    e.last_time = time;
    e.last_seq = seq;
    e.last_line = line;
    return true;
  }
  std::vector<LogEvent>& events() { return m_events; }
  std::uint64_t dropped() const { return m_dropped; }
  std::vector<LogEvent> take() {
    m_index.clear();
    return std::exchange(m_events, {});
  }
  void add_dropped(std::uint64_t n) { m_dropped += n; }
  std::uint64_t take_dropped() { return std::exchange(m_dropped, 0); }

private:
  std::vector<LogEvent> m_events;
  std::unordered_map<std::string, std::size_t> m_index;
  std::uint64_t m_dropped = 0;
};

// One physical (or #012-split) line waiting in the multi-line window.
struct PendingLine {
  std::string message; // the kernel message
  std::string line;    // the physical line, verbatim (capped; made valid UTF-8 in finish())
  std::string time;    // its timestamp as printed
  std::uint64_t line_start = 0; // log offset of the physical line
};

// rsyslog escapes embedded newlines as "#012", /dev/kmsg as "\x0a": one record, several lines.
template <class Fn> void for_each_embedded_line(std::string_view message, Fn&& fn) {
  for (;;) {
    const auto cut = std::min(message.find("#012"), message.find("\\x0a"));
    if (cut == std::string_view::npos) {
      fn(message);
      return;
    }
    fn(message.substr(0, cut));
    message.remove_prefix(cut + 4);
    while (!message.empty() && (message.front() == ' ' || message.front() == '\t')) {
      message.remove_prefix(1);
    }
  }
}

// Lets the repeat cache be searched with a string_view (no allocation per line).
struct HeadHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Makes an event's text from the log valid UTF-8, capped (done once per event, not per line).
void sanitize(LogEvent& e) {
  for (auto& l : e.lines) {
    l = quote_evidence(l, k_evidence_cap);
  }
  e.last_line = quote_evidence(e.last_line, k_evidence_cap);
  e.detail = quote_evidence(e.detail, 240);
  e.meaning = to_valid_utf8(e.meaning);
  if (e.recovery_action) {
    e.recovery_action = quote_evidence(*e.recovery_action, 240);
  }
}

} // namespace

class KernelLogScanner::Impl {
public:
  Impl() : m_buf(k_chunk + k_log_max_line + k_slack, '\0') {}

  std::span<char> room() { return {m_buf.data() + m_len, capacity() - m_len}; }

  void commit(std::size_t n) {
    n = std::min(n, capacity() - m_len);
    m_bytes += n;
    m_len += n;
    if (m_skipping) {
      const char* nl = find_char(data(), data() + m_len, '\n');
      if (nl == nullptr) {
        discard(m_len);
        return;
      }
      m_skipping = false;
      discard(static_cast<std::size_t>(nl - data()) + 1);
    }
    if (const char* last = find_char_back(data(), data() + m_len, '\n')) {
      const auto end = static_cast<std::size_t>(last - data()) + 1;
      process_region(data(), data() + end);
      discard(end);
    }
    if (m_len > k_log_max_line) {
      // A line longer than the cap: examine its first 64 KiB, skip the rest up to its '\n'.
      process_region(data(), data() + k_log_max_line);
      ++m_lines_cut;
      discard(m_len);
      m_skipping = true;
    }
  }

  LogFacts finish() {
    if (!m_skipping && m_len > 0) {
      process_region(data(), data() + m_len);
      discard(m_len);
    }
    flush_pending();
    LogFacts facts;
    facts.ran = true;
    facts.formats = m_formats;
    facts.boundary = m_boundary;
    facts.boots_seen = m_boots + (m_bytes > 0 ? 1 : 0);
    facts.bytes = m_bytes;
    facts.lines_cut = m_lines_cut;
    facts.nul_bytes = m_nul;
    facts.events_dropped = m_current.dropped() + m_earlier.dropped();
    for (auto& e : m_current.take()) {
      sanitize(e);
      if (e.bus_id) {
        facts.gpu_events[*e.bus_id].push_back(std::move(e));
      } else {
        facts.host_events.push_back(std::move(e));
      }
    }
    facts.earlier_boot_events = m_earlier.take();
    for (auto& e : facts.earlier_boot_events) {
      sanitize(e);
    }
    facts.gpu_uuids = m_uuids;
    if (m_load.count > 0) {
      facts.driver_load = m_load;
    }
    return facts;
  }

private:
  char* data() { return m_buf.data(); }
  std::size_t capacity() const { return m_buf.size() - k_slack; }
  std::uint64_t offset_of(const char* p) const {
    return m_base + static_cast<std::uint64_t>(p - m_buf.data());
  }

  void discard(std::size_t n) {
    keep_gap_state(n);
    std::memmove(data(), data() + n, m_len - n);
    m_len -= n;
    m_base += n;
  }

  // [rb, re) holds whole lines (the last one may lack its '\n').
  void process_region(const char* rb, const char* re) {
    if (!m_nul && std::memchr(rb, '\0', static_cast<std::size_t>(re - rb)) != nullptr) {
      m_nul = true;
    }
    sample(rb, rb, re);
    std::size_t next_sample = k_sample_step; // offset in the region
    const char* p = rb;
    for (;;) {
      const char* h = next_candidate(p, re);
      for (const auto h_offset = static_cast<std::size_t>(h - rb); next_sample < h_offset;
           next_sample += k_sample_step) {
        sample(rb, rb + next_sample, re);
      }
      if (h == re) {
        break;
      }
      if (!is_needle(rb, re, h)) {
        p = h + 1;
        continue;
      }
      const char* ls = *h == '\n' ? h + 1 : h;
      if (*h != '\n') {
        const char* prev_nl = find_char_back(rb, h, '\n');
        ls = prev_nl ? prev_nl + 1 : rb;
      }
      const char* nl = find_char(ls, re, '\n');
      const char* le = nl ? nl : re;
      observe(ls, le, true);
      if (le >= re) {
        break;
      }
      p = le; // its '\n' may be the anchor of a "-- Boot" line after it
    }
    // The region's last line, so a timestamp reset across two reads is placed exactly.
    if (re > rb) {
      const char* last_nl = find_char_back(rb, re[-1] == '\n' ? re - 1 : re, '\n');
      sample(rb, last_nl ? last_nl + 1 : rb, re);
    }
  }

  // Observes the line containing point (timestamps and boot markers only).
  void sample(const char* rb, const char* point, const char* re) {
    if (point >= re) {
      return;
    }
    const char* lo =
        point - rb > static_cast<std::ptrdiff_t>(k_log_max_line) ? point - k_log_max_line - 1 : rb;
    const char* prev_nl =
        point > rb && point[-1] == '\n' ? point - 1 : find_char_back(lo, point, '\n');
    if (prev_nl == nullptr && lo != rb) {
      // Inside a line longer than the cap: count it once, by where it ends.
      const char* nl = find_char(point, re, '\n');
      note_cut(offset_of(nl ? nl : re));
      return;
    }
    const char* ls = prev_nl ? prev_nl + 1 : rb;
    const char* nl = find_char(ls, re, '\n');
    observe(ls, nl ? nl : re, false);
  }

  void note_cut(std::uint64_t line_end) {
    if (line_end != m_last_cut_end) {
      m_last_cut_end = line_end;
      ++m_lines_cut;
    }
  }

  void note_format(LogFormat f) {
    const auto bit = 1u << static_cast<unsigned>(f);
    if ((m_format_bits & bit) == 0) {
      m_format_bits |= bit;
      m_formats.push_back(f);
    }
  }

  // One line [ls, le): boot boundaries and timestamps always; signatures when it is a prefilter
  // hit. A line may be seen twice (as a sample, then as a prefilter hit): its boot markers and
  // timestamp count once, its signatures only on the hit.
  void observe(const char* ls, const char* le, bool hit) {
    const std::uint64_t start = offset_of(ls);
    const std::uint64_t end = offset_of(le);
    const bool seen = start < m_observed_until;
    if ((seen && !hit) || (hit && start < m_matched_until)) {
      return;
    }
    m_observed_until = std::max(m_observed_until, end + 1);
    if (hit) {
      m_matched_until = end + 1;
    }
    std::string_view raw(ls, static_cast<std::size_t>(le - ls));
    if (raw.size() > k_log_max_line) {
      note_cut(end);
      raw = raw.substr(0, k_log_max_line);
    }
    const LogLine line = parse_log_line(raw);
    if (line.marker != LineMarker::none) {
      if (!seen) {
        note_marker(line, raw, start, end);
      }
      return;
    }
    std::string time = line.continuation ? m_last_time
                       : line.format == LogFormat::kmsg && line.monotonic
                           ? fmt::format("{:.6f}", *line.monotonic)
                           : std::string(line.time);
    const bool trusted = trusted_line(line, ls, start, end);
    const bool banner = trusted && !line.continuation && linux_banner(line.message);
    if (!seen) {
      if (line.format) {
        note_format(*line.format);
      }
      if (!line.continuation) {
        m_last_time = time;
      }
      if (banner) {
        start_boot(BootBoundaryKind::linux_version, raw, start, end);
        m_last_mono = line.monotonic;
        m_last_mono_next = end + 1;
      } else if (line.monotonic) {
        check_reset(*line.monotonic, raw, ls, start, end);
      }
    }
    if (!hit || banner || !trusted) {
      return;
    }
    // Raw, a little past the cap; made valid UTF-8 (and marked as cut) once per event in finish().
    const std::string_view evidence = raw.substr(0, k_evidence_cap + 4);
    // A record's later lines (after an escaped newline) are the driver's only when its head is.
    const bool nvrm_head = starts_with(line.message, "NVRM:");
    bool head = true;
    for_each_embedded_line(line.message, [&](std::string_view part) {
      const bool first = std::exchange(head, false);
      if (!first && !nvrm_head) {
        return;
      }
      if (hung_task_line(part, evidence, time, start, end)) {
        return;
      }
      const bool xid = starts_with(part, "NVRM: Xid (");
      if (!xid && starts_with(part, "NVRM:")) {
        add_pending({std::string(part), std::string(evidence), time, start}, end);
        return;
      }
      // Anything else, Xid lines included, is one line: what waits in the window ends before it.
      flush_pending();
      const std::string_view head = xid ? xid_head(part) : std::string_view();
      if (!head.empty() && count_repeat(head, evidence, time)) {
        return;
      }
      const std::array<std::string_view, 1> one{part};
      if (auto rec = match_signature(one)) {
        const PendingLine single{std::string(part), std::string(evidence), time, start};
        const std::array<const PendingLine*, 1> lines{&single};
        std::string key = record(std::move(*rec), lines);
        if (!head.empty() && !key.empty()) {
          remember_repeat(head, std::move(key));
        }
      }
    });
  }

  // Provenance (docs/kernel-log.md "Provenance"): is this line the kernel's own, and may it be a
  // driver's? Not a program's syslog line (its tag or facility), not a process's own record
  // ("<comm>[pid]: segfault ... in <file>") nor any line of it: the lines after an embedded newline
  // (an indented continuation, or a line with the same timestamp where every line is prefixed)
  // belong to the record they continue, and only an NVRM record's continuations are the driver's.
  bool trusted_line(const LogLine& line, const char* ls, std::uint64_t start, std::uint64_t end) {
    if (m_trust_known && start == m_trust_start) {
      return m_trust; // the same line again (a sample first, then a prefilter hit)
    }
    m_trust_known = true;
    m_trust_start = start;
    m_trust = judge_line(line, ls, start, end);
    return m_trust;
  }

  // The key that ties the lines of one record where each carries the prefix: the kernel's own
  // timestamp to the microsecond (never /dev/kmsg, whose records are whole; never a syslog time
  // to the second, which unrelated lines share).
  static std::optional<double> record_key(const LogLine& line) {
    return line.format == LogFormat::kmsg ? std::nullopt : line.monotonic;
  }

  // Is an earlier line of the buffer, with the same record key and no other line between, a
  // process's record? (Its head need not have been a prefilter hit.)
  bool continues_process_record(const char* ls, double key) {
    const char* begin = data();
    const char* next = ls;
    for (int i = 0; i < 8 && next > begin; ++i) {
      const char* le = next - 1; // the previous line's '\n'
      const char* lb = le;
      while (lb > begin && lb[-1] != '\n' && le - lb <= 8192) {
        --lb;
      }
      const LogLine prev = parse_log_line(std::string_view(lb, static_cast<std::size_t>(le - lb)));
      if (!prev.continuation) {
        if (!prev.monotonic || *prev.monotonic != key) {
          return false;
        }
        if (task_record(prev.message)) {
          return true;
        }
      }
      next = lb;
    }
    return false;
  }

  bool judge_line(const LogLine& line, const char* ls, std::uint64_t start, std::uint64_t end) {
    if (line.continuation) {
      const bool ok = m_nvrm_record_next == start;
      m_nvrm_record_next = ok ? end + 1 : 0;
      return ok;
    }
    const bool task = task_record(line.message);
    const auto key = record_key(line);
    const bool same_record =
        !task && key && ((m_task_key && *m_task_key == *key) || continues_process_record(ls, *key));
    if (task || same_record) {
      m_task_key = key;
    } else {
      m_task_key.reset();
    }
    const bool ok = line.kernel && !task && !same_record;
    m_nvrm_record_next = ok && starts_with(line.message, "NVRM:") ? end + 1 : 0;
    return ok;
  }

  // The boot banner, "Linux version <release> (<builder>) ... #<n> ...", in its whole shape: a
  // process named "Linux version 6" must not start a new boot and hide the errors before it.
  static bool linux_banner(std::string_view message) {
    if (!starts_with(message, "Linux version ") || task_record(message)) {
      return false;
    }
    const std::string_view rest = message.substr(14);
    const auto space = rest.find(' ');
    return !rest.empty() && rest.front() >= '0' && rest.front() <= '9' &&
           space != std::string_view::npos && starts_with(rest.substr(space), " (") &&
           contains(rest, " #");
  }

  // A hung-task report: "INFO: task <name>:<pid> blocked for more than N seconds." (the name may
  // hold ':', the pid follows the last one), then its call trace. The first trace line within
  // k_hung_trace_bytes that names a function of the NVIDIA modules ("[nvidia]", "[nvidia_uvm]",
  // ...) makes it one event: the driver has been stuck. True when the part was used.
  bool hung_task_line(std::string_view part, std::string_view evidence, const std::string& time,
                      std::uint64_t start, std::uint64_t end) {
    if (starts_with(part, "INFO: task ")) {
      const auto blocked = part.find(" blocked for more than ");
      if (blocked == std::string_view::npos) {
        return false;
      }
      const auto task = part.substr(11, blocked - 11);
      const auto colon = task.rfind(':');
      if (colon == std::string_view::npos || colon == 0 || colon + 1 == task.size()) {
        return false;
      }
      flush_pending();
      m_hung = PendingLine{std::string(task.substr(0, 128)), std::string(evidence), time, start};
      m_hung_until = end + k_hung_trace_bytes;
      return true;
    }
    if (!m_hung || start > m_hung_until) {
      m_hung.reset();
      return false;
    }
    const auto module = part.find(" [nvidia");
    if (module == std::string_view::npos) {
      return false;
    }
    auto function = trim(part.substr(0, module));
    if (const auto space = function.rfind(' '); space != std::string_view::npos) {
      function.remove_prefix(space +
                             1); // 4.x kernels: "[<ffffffffc0a1b2c3>] os_acquire_mutex+0x..."
    }
    if (const auto plus = function.find('+'); plus != std::string_view::npos) {
      function = function.substr(0, plus);
    }
    const auto close = part.find(']', module);
    const auto mod = close == std::string_view::npos ? std::string_view("nvidia")
                                                     : part.substr(module + 2, close - module - 2);
    flush_pending();
    Recognised rec;
    rec.event.kind = LogEventKind::hung_task;
    rec.event.detail = m_hung->message;
    const auto& task = m_hung->message;
    const auto colon = task.rfind(':');
    rec.event.meaning =
        quote_evidence(fmt::format("task {} (pid {}) was blocked in the NVIDIA driver ({} in {})",
                                   task.substr(0, colon), task.substr(colon + 1),
                                   function.substr(0, 80), mod.substr(0, 32)),
                       k_evidence_cap);
    const PendingLine trace{std::string(part), std::string(evidence), time, start};
    const std::array<const PendingLine*, 2> lines{&*m_hung, &trace};
    record(std::move(rec), lines);
    m_hung.reset();
    return true;
  }

  // "NVRM: Xid (PCI:0000:3b:00): 13" — what decides an Xid line's event; empty for Xid 154, whose
  // every occurrence carries a recovery action to decode.
  static std::string_view xid_head(std::string_view part) {
    const auto close = part.find("): ");
    if (close == std::string_view::npos) {
      return {};
    }
    std::size_t end = close + 3;
    while (end < part.size() && part[end] >= '0' && part[end] <= '9') {
      ++end;
    }
    const std::string_view number = part.substr(close + 3, end - close - 3);
    // 154 carries an action, and a line with its own Fatal / Nonfatal word (144-150 always, an
    // unknown Xid maybe) is judged by it: no fast path for them, or a Fatal line repeating a
    // Nonfatal one's head would only be counted.
    const std::string_view tail = part.substr(end);
    const bool own_word =
        tail.find("atal") != std::string_view::npos || tail.find("ATAL") != std::string_view::npos;
    return number.empty() || number == "154" || own_word ? std::string_view() : part.substr(0, end);
  }

  // Xid storms repeat one (GPU, Xid) thousands of times: a repeat only raises its event's count.
  bool count_repeat(std::string_view head, std::string_view evidence, const std::string& time) {
    const auto it = m_repeats.find(head);
    if (it == m_repeats.end() || !m_current.count_again(it->second, evidence, time, m_seq + 1)) {
      return false;
    }
    ++m_seq;
    return true;
  }

  void remember_repeat(std::string_view head, std::string key) {
    if (m_repeats.size() >= k_log_max_events) {
      m_repeats.clear();
    }
    m_repeats.emplace(std::string(head), std::move(key));
  }

  void note_marker(const LogLine& line, std::string_view raw, std::uint64_t start,
                   std::uint64_t end) {
    note_format(LogFormat::journal);
    if (line.marker == LineMarker::journal_other) {
      if (start <= m_marker_end) {
        m_marker_end = end + 1; // a journal header right after a marker is not a boot's content
      }
      return;
    }
    start_boot(line.marker == LineMarker::journal_boot ? BootBoundaryKind::journal_boot
                                                       : BootBoundaryKind::journal_reboot,
               raw, start, end);
    m_last_mono.reset();
  }

  // A monotonic timestamp falling by more than a second starts a new boot; the exact first line
  // of that boot is looked for between the previous timestamp seen and this line [ls, raw).
  void check_reset(double mono, std::string_view raw, const char* ls, std::uint64_t start,
                   std::uint64_t end) {
    if (m_last_mono && mono + k_reset_drop_s < *m_last_mono) {
      std::string_view first = raw;
      std::uint64_t first_start = start;
      std::uint64_t first_end = end;
      if (m_last_mono_next >= m_base && m_last_mono_next < start) {
        double prev = *m_last_mono;
        for (const char* p = data() + (m_last_mono_next - m_base); p < ls;) {
          const char* nl = find_char(p, ls, '\n');
          const char* e = nl ? nl : ls;
          const auto length = static_cast<std::size_t>(e - p);
          const LogLine l = parse_log_line(std::string_view(p, std::min(length, k_log_max_line)));
          if (l.monotonic && *l.monotonic + k_reset_drop_s < prev) {
            first = std::string_view(p, std::min(length, k_log_max_line));
            first_start = offset_of(p);
            first_end = offset_of(e);
            break;
          }
          if (l.monotonic) {
            prev = *l.monotonic;
          }
          p = e + 1;
        }
      }
      start_boot(BootBoundaryKind::timestamp_reset, first, first_start, first_end);
    }
    m_last_mono = mono;
    m_last_mono_next = end + 1;
  }

  void start_boot(BootBoundaryKind kind, std::string_view raw, std::uint64_t start,
                  std::uint64_t end) {
    if (m_boundary && m_boundary->offset == start) {
      return; // the same line seen again (sample, then prefilter hit)
    }
    flush_pending();
    if (start > m_marker_end) {
      ++m_boots; // something came before: it was an earlier boot
    }
    m_marker_end = end + 1;
    for (auto& e : m_current.take()) {
      const std::string key = event_key(e, 0);
      m_earlier.add(std::move(e), key);
    }
    m_earlier.add_dropped(m_current.take_dropped());
    m_boundary = BootBoundary{kind, quote_evidence(raw, k_evidence_cap), start};
    m_load = {};
    m_epoch = 0;
    m_repeats.clear();
  }

  void add_pending(PendingLine&& line, std::uint64_t line_end) {
    if (!m_pending.empty()) {
      const bool same_line = m_pending.back().line_start == line.line_start;
      const bool next_line =
          line.line_start == m_pending_next || only_dict_lines(m_pending_next, line.line_start);
      if (!same_line && !next_line) {
        flush_pending();
      }
    }
    m_pending.push_back(std::move(line));
    m_pending_next = line_end + 1;
    if (m_pending.size() >= k_signature_window) {
      match_front();
    }
  }

  // /dev/kmsg records may carry " KEY=value" lines between two NVRM records. The gap may have
  // begun in bytes already discarded: what they held was noted then (keep_gap_state), so the
  // answer does not depend on where the reads ended.
  bool only_dict_lines(std::uint64_t from, std::uint64_t to) {
    if (to <= from || to - from > k_dict_gap_max || to - m_base > m_len) {
      return false;
    }
    std::uint64_t checked = from;
    if (from < m_base) {
      if (m_gap_from != from || m_gap_until != m_base) {
        return false;
      }
      checked = m_base;
    }
    return dict_lines(data() + (checked - m_base), data() + (to - m_base));
  }

  static bool dict_lines(const char* p, const char* end) {
    while (p < end) {
      if (*p != ' ' && *p != '\t') {
        return false;
      }
      const char* nl = find_char(p, end, '\n');
      if (nl == nullptr) {
        return false;
      }
      p = nl + 1;
    }
    return true;
  }

  // Before the first n bytes go: whether the gap after the last pending line, up to them, holds
  // only dictionary lines ([m_gap_from, m_gap_until) when it does).
  void keep_gap_state(std::size_t n) {
    const std::uint64_t until = m_base + n;
    const bool open =
        !m_pending.empty() && m_pending_next <= until && until - m_pending_next <= k_dict_gap_max;
    std::uint64_t from = m_pending_next;
    if (open && m_pending_next < m_base) {
      from = m_gap_from == m_pending_next && m_gap_until == m_base ? m_base : until + 1;
    }
    if (open && from <= until && dict_lines(data() + (from - m_base), data() + n)) {
      m_gap_from = m_pending_next;
      m_gap_until = until;
    } else {
      m_gap_from = std::numeric_limits<std::uint64_t>::max();
      m_gap_until = 0;
    }
  }

  void match_front() {
    std::array<std::string_view, k_signature_window> messages{};
    const std::size_t n = std::min(m_pending.size(), messages.size());
    for (std::size_t i = 0; i < n; ++i) {
      messages[i] = m_pending[i].message;
    }
    std::size_t used = 1;
    if (auto rec = match_signature(std::span<const std::string_view>(messages.data(), n))) {
      used = std::min(rec->consumed, n);
      std::array<const PendingLine*, k_signature_window> lines{};
      for (std::size_t i = 0; i < used; ++i) {
        lines[i] = &m_pending[i];
      }
      record(std::move(*rec), std::span<const PendingLine* const>(lines.data(), used));
    }
    m_pending.erase(m_pending.begin(), m_pending.begin() + static_cast<std::ptrdiff_t>(used));
  }

  void flush_pending() {
    while (!m_pending.empty()) {
      match_front();
    }
  }

  // Returns the event's key ("" for companion lines).
  std::string record(Recognised&& rec, std::span<const PendingLine* const> lines) {
    switch (rec.what) {
    case Recognised::What::gpu_uuid:
      m_uuids[*rec.event.bus_id] = quote_evidence(rec.uuid, 80);
      return {};
    case Recognised::What::driver_load: {
      const unsigned count = m_load.count + 1;
      m_load = std::move(rec.load);
      m_load.line = quote_evidence(lines.front()->line, k_evidence_cap);
      m_load.count = count;
      ++m_epoch; // events before a reload are kept apart from the same events after it
      for (auto& e : m_current.events()) {
        e.before_driver_load = true;
      }
      m_repeats.clear(); // keys carry the load epoch
      return {};
    }
    case Recognised::What::event:
      break;
    }
    LogEvent e = std::move(rec.event);
    for (const auto* l : lines) {
      if (e.lines.empty() || e.lines.back() != l->line) {
        e.lines.push_back(l->line);
      }
    }
    e.first_time = e.last_time = lines.front()->time;
    e.first_seq = e.last_seq = ++m_seq;
    std::string key = event_key(e, m_epoch);
    m_current.add(std::move(e), key);
    return key;
  }

  std::vector<char> m_buf;
  std::size_t m_len = 0;    // bytes in m_buf
  std::uint64_t m_base = 0; // log offset of m_buf[0]
  bool m_skipping = false;  // inside a cut line: discard up to its '\n'
  std::uint64_t m_bytes = 0;
  std::uint64_t m_lines_cut = 0;
  std::uint64_t m_last_cut_end = ~std::uint64_t{0};
  bool m_nul = false;
  std::uint64_t m_observed_until = 0; // lines starting before this offset were looked at
  std::uint64_t m_matched_until = 0;  // ... and matched against the signatures (prefilter hits)
  unsigned m_format_bits = 0;
  std::vector<LogFormat> m_formats;
  std::string m_last_time;
  bool m_trust_known = false; // the last line judged, its offset and whether it was trusted
  std::uint64_t m_trust_start = 0;
  bool m_trust = false;
  std::optional<double> m_task_key;     // the record key of the last process record seen
  std::uint64_t m_nvrm_record_next = 0; // where a continuation of a trusted NVRM record starts

  std::optional<double> m_last_mono;  // the last monotonic timestamp seen
  std::uint64_t m_last_mono_next = 0; // offset of the line after it
  std::optional<BootBoundary> m_boundary;
  std::uint64_t m_marker_end = 0; // offset after the last boot marker (content after it = a boot)
  unsigned m_boots = 0;           // boots closed by a later boundary

  std::deque<PendingLine> m_pending;
  std::uint64_t m_pending_next = 0; // offset where the next consecutive line would start
  std::uint64_t m_gap_from = std::numeric_limits<std::uint64_t>::max(); // discarded dict lines
  std::uint64_t m_gap_until = 0;
  std::optional<PendingLine> m_hung; // the last hung-task line whose trace is still to come
  std::uint64_t m_hung_until = 0;    // its trace ends before this offset
  std::uint64_t m_seq = 0;
  unsigned m_epoch = 0; // driver loads in the current boot
  EventList m_current;
  EventList m_earlier;
  std::map<std::string, std::string> m_uuids;
  // Xid line head → its event's key, for the repeat fast path (cleared at loads and boots).
  std::unordered_map<std::string, std::string, HeadHash, std::equal_to<>> m_repeats;
  LogDriverLoad m_load;
};

KernelLogScanner::KernelLogScanner() : m_impl(std::make_unique<Impl>()) {}
KernelLogScanner::~KernelLogScanner() = default;

std::span<char> KernelLogScanner::room() {
  return m_impl->room();
}
void KernelLogScanner::commit(std::size_t n) {
  m_impl->commit(n);
}

void KernelLogScanner::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto space = room();
    const std::size_t n = std::min(space.size(), bytes.size());
    std::memcpy(space.data(), bytes.data(), n);
    commit(n);
    bytes.remove_prefix(n);
  }
}

LogFacts KernelLogScanner::finish() {
  return m_impl->finish();
}

LogFacts scan_kernel_log(std::string_view text) {
  KernelLogScanner scanner;
  scanner.feed(text);
  return scanner.finish();
}

} // namespace gpf
