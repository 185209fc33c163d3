#pragma once
// Names of the kernel log's facts, as the reports print them.
#include "gpf/facts/log_facts.hpp"

#include <string_view>

namespace gpf {

// "dmesg", "dmesg-ctime", ...: the names the report gives the formats it read.
std::string_view log_format_name(LogFormat format);

// "xid", "rm-init-failed", ...: the names facts.log gives the event kinds.
std::string_view log_event_kind_name(LogEventKind kind);

} // namespace gpf
