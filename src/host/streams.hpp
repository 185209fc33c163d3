#pragma once
// The Host's byte streams (internal to src/host): files, stdin and the live kernel log. Reads of
// anything but regular files wait at most k_stream_idle_timeout_s for data.
#include "gpf/host/host.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace gpf {

// Takes ownership of fd (open for reading). Error: "<name>: <OS reason>" when fd is a directory.
Result<std::unique_ptr<ByteStream>> fd_stream(int fd, const std::string& name);
// Opens path (a path of the invoking machine) read-only. Error: "<name>: <OS reason>".
Result<std::unique_ptr<ByteStream>> open_file_stream(const std::filesystem::path& path,
                                                     const std::string& name);
// Standard input (not closed at the end).
std::unique_ptr<ByteStream> stdin_stream();
// kmsg is the host's /dev/kmsg: read non-blocking until EAGAIN; when it cannot be opened,
// klogctl(SYSLOG_ACTION_READ_ALL). Error names both failures.
Result<std::unique_ptr<ByteStream>> open_live_kernel_log(const std::filesystem::path& kmsg);

} // namespace gpf
