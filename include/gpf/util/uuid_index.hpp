#pragma once
// UUIDs looked up by case-insensitive prefix in O(log n): CUDA_VISIBLE_DEVICES names GPUs by UUID
// or a unique UUID prefix, and a job may list thousands of entries against thousands of GPUs, so a
// scan of every GPU per entry (quadratic) is not an option.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpf {

class UuidIndex {
public:
  // value: the caller's position of the GPU (kept with its UUID). Call build() after the last add.
  void add(std::string_view uuid, std::size_t value) { m_rows.emplace_back(lower(uuid), value); }
  void build() { std::sort(m_rows.begin(), m_rows.end()); }

  // The value of the one UUID that starts with prefix; nullopt when none or several do.
  std::optional<std::size_t> unique(std::string_view prefix) const {
    const std::string key = lower(prefix);
    auto it = lower_bound(key);
    if (it == m_rows.end() || !starts(*it, key)) {
      return std::nullopt;
    }
    const auto next = std::next(it);
    if (next != m_rows.end() && starts(*next, key)) {
      return std::nullopt;
    }
    return it->second;
  }
  // The smallest value among the UUIDs that start with prefix (the first such GPU in the caller's
  // order); nullopt when none does. Answers are kept per prefix: a GPU's UUID has at most ~40
  // prefixes, so all lookups together scan each row at most that often.
  std::optional<std::size_t> first(std::string_view prefix) const {
    std::string key = lower(prefix);
    if (auto hit = m_first.find(key); hit != m_first.end()) {
      return hit->second;
    }
    std::optional<std::size_t> best;
    for (auto it = lower_bound(key); it != m_rows.end() && starts(*it, key); ++it) {
      best = best ? std::min(*best, it->second) : it->second;
    }
    m_first.emplace(std::move(key), best);
    return best;
  }

private:
  using Row = std::pair<std::string, std::size_t>;
  static std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
      c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return out;
  }
  static bool starts(const Row& row, const std::string& key) {
    return row.first.compare(0, key.size(), key) == 0;
  }
  std::vector<Row>::const_iterator lower_bound(const std::string& key) const {
    return std::lower_bound(m_rows.begin(), m_rows.end(), key,
                            [](const Row& row, const std::string& k) { return row.first < k; });
  }
  std::vector<Row> m_rows;
  mutable std::unordered_map<std::string, std::optional<std::size_t>> m_first;
};

} // namespace gpf
