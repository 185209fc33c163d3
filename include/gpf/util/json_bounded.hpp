#pragma once
// A snapshot's JSON (cuda.json, nvml.json) parsed into a document in one linear pass, with
// bounded width: an array keeps at most max_elements elements and an object at most max_members
// members; the rest are skipped, never built, and counted. A filter may drop an object as it
// ends inside an array (the step lists' cut). nlohmann's parser callback, used before, rescans
// the whole parent array at every element it keeps: quadratic in the objects of one array.
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace gpf {

// Per array being built: how many elements the filter kept, and one flag of its own.
struct JsonArrayState {
  std::size_t kept = 0;
  bool flag = false;
};

// Whether the object that just ended inside the array named array_key stays in it.
using JsonObjectFilter =
    std::function<bool(std::string_view array_key, const nlohmann::json&, JsonArrayState&)>;

// The members worth building, as a tree of names: a reader that needs a few fields of a large
// document (summarize, of a report) builds only those, in memory bounded by what it keeps. A
// member whose shape has no names of its own is kept whole; an array's elements take the array's
// shape; a member not named is parsed and dropped.
struct JsonShape {
  std::map<std::string, JsonShape, std::less<>> members;
};

struct BoundedJson {
  nlohmann::json doc;
  std::size_t dropped_by_filter = 0; // objects the filter dropped
  std::size_t skipped = 0;           // elements and members beyond the width caps
};

// The widths cuda.json and nvml.json are read with: far beyond what a node records (a step list is
// cut to 256, eight GPUs make 56 peer copies), so that a padded file costs little memory.
inline constexpr std::size_t k_max_json_elements = 16384; // per array
inline constexpr std::size_t k_max_json_members = 4096;   // per object

// The error for a file wider than that (skipped: what was left out).
std::string too_wide(std::size_t skipped);

// Error "not valid JSON" (with the parser's byte position) or "nested deeper than N levels".
// shape: only the members it names are built (nullptr: all).
Result<BoundedJson> parse_json_bounded(std::string_view text, std::size_t max_elements,
                                       std::size_t max_members,
                                       const JsonObjectFilter& filter = nullptr,
                                       const JsonShape* shape = nullptr);

} // namespace gpf
