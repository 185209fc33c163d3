#pragma once
// Wall-clock times as reports and snapshots write them. Pure; never throw.
#include <chrono>
#include <string>

namespace gpf {

// "2026-12-01T10:15:00Z": RFC 3339 in UTC, whole seconds.
std::string rfc3339_utc(std::chrono::system_clock::time_point t);

} // namespace gpf
