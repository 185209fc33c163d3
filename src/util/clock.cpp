#include "gpf/util/clock.hpp"

#include <fmt/format.h>

#include <ctime>

namespace gpf {

std::string rfc3339_utc(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  if (::gmtime_r(&secs, &tm) == nullptr) {
    return "1970-01-01T00:00:00Z"; // out of gmtime's range: cannot happen for a clock reading
  }
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

} // namespace gpf
