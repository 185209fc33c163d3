// The Host's byte streams: a file or stdin read in pieces (pipes and terminals under a deadline),
// and the live kernel log through /dev/kmsg or klogctl. Nothing here blocks without a limit.
#include "streams.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace gpf {
namespace {

std::string os_error(int err) {
  return std::strerror(err);
}

class FdStream final : public ByteStream {
public:
  FdStream(int fd, std::string name, bool owned)
      : m_fd(fd), m_name(std::move(name)), m_owned(owned) {
    struct stat st {};
    m_wait = ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode);
  }
  ~FdStream() override {
    if (m_owned) {
      ::close(m_fd);
    }
  }
  FdStream(const FdStream&) = delete;
  FdStream& operator=(const FdStream&) = delete;

  Result<std::size_t> read(char* buf, std::size_t size) override {
    for (;;) {
      if (m_wait) {
        pollfd p{m_fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, k_stream_idle_timeout_s * 1000);
        if (ready == 0) {
          return Error{m_name + ": no data for " + std::to_string(k_stream_idle_timeout_s) + " s"};
        }
        if (ready < 0) {
          if (errno == EINTR) {
            continue;
          }
          return Error{m_name + ": " + os_error(errno)};
        }
      }
      const ssize_t n = ::read(m_fd, buf, size);
      if (n >= 0) {
        return static_cast<std::size_t>(n);
      }
      if (errno == EINTR || (errno == EAGAIN && m_wait)) {
        continue;
      }
      return Error{m_name + ": " + os_error(errno)};
    }
  }
  std::string name() const override { return m_name; }

private:
  int m_fd;
  std::string m_name;
  bool m_owned;
  bool m_wait = false; // not a regular file: poll with a deadline before reading
};

constexpr unsigned k_kmsg_major =
    1; // /dev/kmsg's device number (Documentation/admin-guide/devices.txt)
constexpr unsigned k_kmsg_minor = 11;

// /dev/kmsg: every read(2) returns one record; EAGAIN (non-blocking) means the ring buffer is
// drained; EPIPE means records were overwritten while reading (reading goes on after them).
class KmsgStream final : public ByteStream {
public:
  explicit KmsgStream(int fd) : m_fd(fd) {}
  ~KmsgStream() override { ::close(m_fd); }
  KmsgStream(const KmsgStream&) = delete;
  KmsgStream& operator=(const KmsgStream&) = delete;

  Result<std::size_t> read(char* buf, std::size_t size) override {
    static constexpr std::size_t k_record_max = 8192; // the kernel's largest /dev/kmsg record
    std::size_t total = 0;
    while (!m_done && size - total >= k_record_max) {
      const ssize_t n = ::read(m_fd, buf + total, size - total);
      if (n > 0) {
        total += static_cast<std::size_t>(n);
      } else if (n == 0 || errno == EAGAIN) {
        m_done = true;
      } else if (errno != EINTR && errno != EPIPE) {
        if (total > 0) {
          break;
        }
        return Error{"/dev/kmsg: " + os_error(errno)};
      }
    }
    return total;
  }
  std::string name() const override { return "/dev/kmsg"; }

private:
  int m_fd;
  bool m_done = false;
};

// klogctl(SYSLOG_ACTION_READ_ALL) gives the whole ring buffer at once ("<6>[  1.23] msg" lines).
class KlogStream final : public ByteStream {
public:
  explicit KlogStream(std::string data) : m_data(std::move(data)) {}
  Result<std::size_t> read(char* buf, std::size_t size) override {
    const std::size_t n = std::min(size, m_data.size() - m_pos);
    std::memcpy(buf, m_data.data() + m_pos, n);
    m_pos += n;
    return n;
  }
  std::string name() const override { return "klogctl"; }

private:
  std::string m_data;
  std::size_t m_pos = 0;
};

constexpr int k_syslog_action_read_all = 3;     // SYSLOG_ACTION_READ_ALL (klogctl(3))
constexpr int k_syslog_action_size_buffer = 10; // SYSLOG_ACTION_SIZE_BUFFER

// head first, then inner.
class PrependStream final : public ByteStream {
public:
  PrependStream(std::string head, std::unique_ptr<ByteStream> inner, std::optional<double> first)
      : m_head(std::move(head)), m_inner(std::move(inner)), m_first(first) {}
  Result<std::size_t> read(char* buf, std::size_t size) override {
    if (m_pos < m_head.size()) {
      const std::size_t n = std::min(size, m_head.size() - m_pos);
      std::memcpy(buf, m_head.data() + m_pos, n);
      m_pos += n;
      return n;
    }
    return m_inner->read(buf, size);
  }
  std::string name() const override { return m_inner->name(); }
  std::optional<double> first_seconds() const override { return m_first; }

private:
  std::string m_head;
  std::size_t m_pos = 0;
  std::unique_ptr<ByteStream> m_inner;
  std::optional<double> m_first;
};

std::optional<double> seconds_of(std::string_view digits_dot_digits) {
  while (!digits_dot_digits.empty() && digits_dot_digits.front() == ' ') {
    digits_dot_digits.remove_prefix(1);
  }
  const auto dot = digits_dot_digits.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot + 1 >= digits_dot_digits.size() ||
      digits_dot_digits.size() > 24) {
    return std::nullopt;
  }
  double whole = 0;
  double frac = 0;
  double scale = 1;
  for (std::size_t i = 0; i < digits_dot_digits.size(); ++i) {
    const char c = digits_dot_digits[i];
    if (i == dot) {
      continue;
    }
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    if (i < dot) {
      whole = whole * 10 + (c - '0');
    } else {
      scale /= 10;
      frac += (c - '0') * scale;
    }
  }
  return whole + frac;
}

} // namespace

std::optional<double> first_line_seconds(std::string_view text) {
  text = text.substr(0, text.find('\n'));
  if (text.size() > 3 && text.front() == '<') {
    const auto close = text.find('>');
    if (close != std::string_view::npos && close <= 4) {
      text.remove_prefix(close + 1);
    }
  }
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    return close == std::string_view::npos ? std::nullopt : seconds_of(text.substr(1, close - 1));
  }
  // /dev/kmsg: "PRIO,SEQ,USEC,FLAGS;msg"
  const auto semi = text.find(';');
  const auto c1 = text.find(',');
  const auto c2 = c1 == std::string_view::npos ? c1 : text.find(',', c1 + 1);
  const auto c3 = c2 == std::string_view::npos ? c2 : text.find(',', c2 + 1);
  if (semi == std::string_view::npos || c3 == std::string_view::npos || c3 > semi || c3 - c2 < 2 ||
      c3 - c2 > 20) {
    return std::nullopt;
  }
  std::uint64_t usec = 0;
  for (char c : text.substr(c2 + 1, c3 - c2 - 1)) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    usec = usec * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return static_cast<double>(usec) / 1e6;
}

std::unique_ptr<ByteStream> prepend(std::string head, std::unique_ptr<ByteStream> inner) {
  const auto first = first_line_seconds(head);
  return std::make_unique<PrependStream>(std::move(head), std::move(inner), first);
}

Result<std::unique_ptr<ByteStream>> fd_stream(int fd, const std::string& name) {
  struct stat st {};
  const bool stated = ::fstat(fd, &st) == 0;
  if (stated && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error{name + ": " + os_error(EISDIR)};
  }
  // The kernel log device itself (1:11, --dmesg /dev/kmsg): read as the live log is, to the end
  // of its ring buffer, not waited on for more records as a pipe would be
  if (stated && S_ISCHR(st.st_mode) && major(st.st_rdev) == k_kmsg_major &&
      minor(st.st_rdev) == k_kmsg_minor) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_NONBLOCK) == 0) {
      ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    }
    return std::unique_ptr<ByteStream>(std::make_unique<KmsgStream>(fd));
  }
  return std::unique_ptr<ByteStream>(std::make_unique<FdStream>(fd, name, true));
}

Result<std::unique_ptr<ByteStream>> open_file_stream(const std::filesystem::path& path,
                                                     const std::string& name) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return Error{name + ": " + os_error(errno)};
  }
  return fd_stream(fd, name);
}

std::unique_ptr<ByteStream> stdin_stream() {
  return std::make_unique<FdStream>(STDIN_FILENO, "stdin", false);
}

Result<std::unique_ptr<ByteStream>> open_live_kernel_log(const std::filesystem::path& kmsg) {
  const int fd = ::open(kmsg.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0) {
    return std::unique_ptr<ByteStream>(std::make_unique<KmsgStream>(fd));
  }
  const std::string kmsg_error = kmsg.string() + ": " + os_error(errno);
  const int size = ::klogctl(k_syslog_action_size_buffer, nullptr, 0);
  if (size >= 0) {
    std::string data(static_cast<std::size_t>(size), '\0');
    const int n = ::klogctl(k_syslog_action_read_all, data.data(), size);
    if (n >= 0) {
      data.resize(static_cast<std::size_t>(n));
      return std::unique_ptr<ByteStream>(std::make_unique<KlogStream>(std::move(data)));
    }
  }
  return Error{kmsg_error + "; klogctl: " + os_error(errno)};
}

} // namespace gpf
