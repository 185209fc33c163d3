#pragma once
// The Host's byte streams (internal to src/host): files, stdin and the live kernel log. Reads of
// anything but regular files wait at most k_stream_idle_timeout_s for data.
#include "gpf/host/host.hpp"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

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

// An owned file descriptor, closed with its owner.
class OwnedFd {
public:
  explicit OwnedFd(int fd) : m_fd(fd) {}
  ~OwnedFd() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }
  OwnedFd(OwnedFd&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
  OwnedFd& operator=(OwnedFd&&) = delete;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int get() const { return m_fd; }
  // Hands the descriptor over (to a journal that closes it); this object no longer closes it.
  int release() {
    const int fd = m_fd;
    m_fd = -1;
    return fd;
  }

private:
  int m_fd;
};

// Which journal to read for the kernel's messages of the current boot.
struct JournalInput {
  bool live = false;            // the system journal of this machine (sd_journal_open)
  bool live_dirs_exist = false; // live: /var/log/journal or /run/log/journal exists
  std::vector<std::pair<std::string, OwnedFd>> files; // snapshot: *.journal files, open read-only
  std::string boot_id; // the boot to read ("" = live: the running boot; snapshot: the
                       // boot of the journal's last kernel message)
  std::string name;    // for messages, e.g. "systemd journal"
};
// The kernel transport's entries of that boot as dmesg lines, after a "-- Kernel messages of boot
// <id> from the <name> --" line. nullptr: there is no journal (no files, or no journal directory
// live). Error: "<name>: <OS reason>" (no system journal file readable by this user: EACCES). A
// snapshot file sd-journal rejects is left out and named in errors ("<path>: <reason>").
Result<std::unique_ptr<ByteStream>> open_journal_kernel_log(JournalInput& input,
                                                            std::vector<std::string>& errors);

// Seconds since boot of the first line in text, for the dmesg ("[ 1.5] ", "<6>[ 1.5] ") and
// /dev/kmsg ("6,1,1500000,-;") forms; nullopt for any other text.
std::optional<double> first_line_seconds(std::string_view text);

// A stream that hands out head first, then the rest of inner (head was read from inner already).
std::unique_ptr<ByteStream> prepend(std::string head, std::unique_ptr<ByteStream> inner);

} // namespace gpf
