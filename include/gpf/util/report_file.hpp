#pragma once
// The checker's own report files, written and read as root safely: only a regular file (or
// nothing) is replaced, only a regular file or a pipe is read, and no open waits.
#include "gpf/util/result.hpp"

#include <istream>
#include <memory>
#include <string>

namespace gpf {

// Writes content to path through a temporary file beside it and a rename, so a reader (a log
// shipper, a dashboard) never sees half a report. The error is the OS reason.
Result<void> write_file_replacing(const std::string& path, const std::string& content);

// A report file named on the command line (summarize, diff), open for reading. Only a regular file
// or a pipe is read, and the open never waits: a FIFO nobody writes to would block the open, a
// terminal or a device the read. A FIFO without a writer reads as empty. The error names the kind.
Result<std::unique_ptr<std::istream>> open_report_input(const std::string& path);

} // namespace gpf
