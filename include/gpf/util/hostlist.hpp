#pragma once
// Slurm hostlist expressions (https://slurm.schedmd.com/scontrol.html, "HOSTLIST"): names that end
// in a number compressed per prefix and zero-padding, node001..node003,node007 ->
// node[001-003,007]. summarize prints one per cause, ready for `scontrol update nodename=...`.
// Pure.
#include <cstddef>
#include <string>
#include <vector>

namespace gpf {

// The terms of the hostlist of names (duplicates dropped), sorted by prefix: "node[001-003,007]",
// "gpu-a[1-2]", "login". A name that does not end in digits, or holds a character of the syntax
// ('[', ']', ','), stays a term of its own. With max_chars > 0 a prefix's ranges are split over
// several terms of at most that many characters where a single range allows.
std::vector<std::string> hostlist_terms(const std::vector<std::string>& names,
                                        std::size_t max_chars = 0);

// The terms joined by commas: one expression for the whole set.
std::string hostlist(const std::vector<std::string>& names);

} // namespace gpf
