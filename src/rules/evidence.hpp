#pragma once
// How a finding quotes the kernel-log events it rests on: when they happened, what they mean and
// their lines, bounded. Internal to src/rules.
#include "gpf/facts/facts.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace gpf {

constexpr std::size_t k_max_evidence = 12;

using EventPtrs = std::vector<const LogEvent*>;

inline std::string when(const LogEvent& e) {
  const auto stamp = [](const std::string& t) {
    return t.empty() ? std::string() : fmt::format(" at [{}]", t);
  };
  if (e.count == 1) {
    return stamp(e.first_time);
  }
  if (e.first_time.empty()) {
    return fmt::format(", {} times", e.count);
  }
  return fmt::format(", {} times, first at [{}], last at [{}]", e.count, e.first_time, e.last_time);
}

inline std::string describe(const EventPtrs& events) {
  std::vector<std::string> parts;
  for (const auto* e : events) {
    parts.push_back(e->meaning + when(*e));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

inline std::vector<std::string> evidence_of(const EventPtrs& events) {
  std::vector<std::string> lines;
  for (const auto* e : events) {
    for (const auto& l : e->lines) {
      if (lines.size() < k_max_evidence) {
        lines.push_back(l);
      }
    }
    if (e->count > 1 && !e->last_line.empty() && e->last_line != e->lines.front() &&
        lines.size() < k_max_evidence) {
      lines.push_back(e->last_line);
    }
  }
  return lines;
}

inline bool listed(const Facts& f, const std::string& bus) {
  return f.gpu_by_bus(bus) != nullptr;
}

} // namespace gpf
