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

std::string_view log_event_kind_name(LogEventKind k) {
  static constexpr auto k_names =
      enum_names<LogEventKind::driver_failure>({"xid",
                                                "rm-init-failed",
                                                "rm-init-minor",
                                                "api-mismatch",
                                                "fallen-off-bus",
                                                "bar-invalid",
                                                "probe-not-called",
                                                "probe-failed",
                                                "no-gpu-initialized",
                                                "not-supported",
                                                "not-supported-open-module",
                                                "power-cables",
                                                "gsp-firmware",
                                                "crash-dump",
                                                "nouveau",
                                                "dma-setup",
                                                "sxid",
                                                "hung-task",
                                                "module-refused",
                                                "power-state",
                                                "link-down",
                                                "module-symbol",
                                                "driver-failure"});
  return k_names(k);
}

} // namespace gpf
