// Names of the kernel log's facts, for the reports.
#include "gpf/facts/log_names.hpp"

#include "gpf/util/enum_names.hpp"

namespace gpf {

std::string_view log_format_name(LogFormat format) {
  static constexpr auto k_names =
      enum_names<LogFormat::bare>({"dmesg", "dmesg-ctime", "dmesg-iso", "dmesg-reltime", "kmsg",
                                   "syslog", "syslog-iso", "rfc5424", "journal", "bare"});
  return k_names(format);
}

} // namespace gpf
