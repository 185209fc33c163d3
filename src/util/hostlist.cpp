#include "gpf/util/hostlist.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace gpf {
namespace {

// Numbers this long still fit an unsigned long long; a longer run of digits is part of the name.
constexpr std::size_t k_max_digits = 18;

struct Split {
  std::string prefix;
  std::string digits; // "" when the name does not end in a number
};

Split split_name(const std::string& name) {
  if (name.find_first_of("[],") != std::string::npos) {
    return {name, ""};
  }
  std::size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') {
    --i;
  }
  if (i == name.size() || name.size() - i > k_max_digits) {
    return {name, ""};
  }
  return {name.substr(0, i), name.substr(i)};
}

// "001-003" or "007", numbers printed at least `width` digits wide (0: as they are).
std::string range_text(unsigned long long lo, unsigned long long hi, std::size_t width) {
  return lo == hi ? fmt::format("{:0{}}", lo, width)
                  : fmt::format("{:0{}}-{:0{}}", lo, width, hi, width);
}

} // namespace

std::vector<std::string> hostlist_terms(const std::vector<std::string>& names,
                                        std::size_t max_chars) {
  // (prefix, width): width is the digits' count when they are zero-padded, 0 when not; a number
  // whose length equals a padded width of its prefix (node100 beside node099) joins that group.
  std::map<std::pair<std::string, std::size_t>, std::set<unsigned long long>> groups;
  std::set<std::string> alone;
  std::vector<Split> numbered;
  std::set<std::pair<std::string, std::size_t>> padded;
  for (const auto& name : std::set<std::string>(names.begin(), names.end())) {
    Split s = split_name(name);
    if (s.digits.empty()) {
      alone.insert(name);
      continue;
    }
    if (s.digits.size() > 1 && s.digits[0] == '0') {
      padded.emplace(s.prefix, s.digits.size());
    }
    numbered.push_back(std::move(s));
  }
  for (const auto& s : numbered) {
    const bool zero_led = s.digits.size() > 1 && s.digits[0] == '0';
    const std::size_t width =
        zero_led || padded.count({s.prefix, s.digits.size()}) != 0 ? s.digits.size() : 0;
    groups[{s.prefix, width}].insert(std::stoull(s.digits));
  }
  // one sorted list of (sort key, term): a prefix's groups beside its plain names
  std::vector<std::pair<std::string, std::string>> terms;
  for (const auto& name : alone) {
    terms.emplace_back(name, name);
  }
  for (const auto& [key, numbers] : groups) {
    const std::string prefix = key.first; // copied: clang 14 cannot capture a structured binding
    const std::size_t width = key.second;
    std::vector<std::string> ranges;
    for (auto it = numbers.begin(); it != numbers.end();) {
      const unsigned long long lo = *it;
      unsigned long long hi = lo;
      for (++it; it != numbers.end() && *it == hi + 1; ++it) {
        hi = *it;
      }
      ranges.push_back(range_text(lo, hi, width));
    }
    if (numbers.size() == 1) {
      terms.emplace_back(prefix, prefix + ranges.front());
      continue;
    }
    // ranges packed into terms of at most max_chars: prefix[a,b,...]
    std::string term;
    const auto flush = [&] {
      if (!term.empty()) {
        terms.emplace_back(prefix, fmt::format("{}[{}]", prefix, term));
        term.clear();
      }
    };
    for (const auto& r : ranges) {
      if (max_chars > 0 && !term.empty() &&
          prefix.size() + term.size() + 1 + r.size() + 2 > max_chars) {
        flush();
      }
      if (!term.empty()) {
        term += ',';
      }
      term += r;
    }
    flush();
  }
  std::stable_sort(terms.begin(), terms.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  out.reserve(terms.size());
  for (auto& t : terms) {
    out.push_back(std::move(t.second));
  }
  return out;
}

std::string hostlist(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(hostlist_terms(names), ","));
}

} // namespace gpf
