// --json-out: the report file is replaced whole (a temporary file beside it, then a rename), so log
// shippers and dashboards never read a half-written report. As root this must be safe against
// whatever is at the path: only a regular file (or nothing) is replaced; a link, a device, a FIFO
// or a directory is refused without being opened (a FIFO would block, a device would be written
// raw).
#include "gpf/util/report_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpf {
namespace {

Error os_error(int err) {
  return Error{std::strerror(err)};
}

bool write_all(int fd, const std::string& content, int& err) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) {
    return "a symbolic link";
  }
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "a device node";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "not a regular file";
}

// An input stream over a descriptor it owns; a read error ends the stream like its end.
class FdBuffer : public std::streambuf {
public:
  explicit FdBuffer(int fd) : m_fd(fd), m_chunk(1 << 16) {}
  FdBuffer(const FdBuffer&) = delete;
  FdBuffer& operator=(const FdBuffer&) = delete;
  ~FdBuffer() override { ::close(m_fd); }

protected:
  int_type underflow() override {
    ssize_t n = 0;
    do {
      n = ::read(m_fd, m_chunk.data(), m_chunk.size());
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      return traits_type::eof();
    }
    setg(m_chunk.data(), m_chunk.data(), m_chunk.data() + n);
    return traits_type::to_int_type(*gptr());
  }

private:
  int m_fd;
  std::vector<char> m_chunk;
};

class FdStream : public std::istream {
public:
  explicit FdStream(int fd) : std::istream(nullptr), m_buffer(fd) { rdbuf(&m_buffer); }

private:
  FdBuffer m_buffer;
};

} // namespace

Result<std::unique_ptr<std::istream>> open_report_input(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return os_error(errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return os_error(err);
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    ::close(fd);
    return Error{std::string("it is ") + kind_of(st.st_mode) + ", not a report file"};
  }
  // Reads wait for a pipe's writer again; with none, the first read is the end.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd);
    return os_error(err);
  }
  return std::unique_ptr<std::istream>(std::make_unique<FdStream>(fd));
}

Result<void> write_file_replacing(const std::string& path, const std::string& content) {
  if (path.empty()) {
    return Error{"an empty file name"};
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      return Error{std::string("it is ") + kind_of(st.st_mode) +
                   ", not a regular file: refusing to replace it"};
    }
  } else if (errno != ENOENT) {
    return os_error(errno);
  }
  // The temporary sibling FILE.XXXXXX is created exclusively: never an existing file or a link.
  std::string tmp;
  int fd = -1;
  errno = 0;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    static const char k_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char noise[6] = {};
    if (::getrandom(noise, sizeof noise, 0) != static_cast<ssize_t>(sizeof noise)) {
      break;
    }
    tmp = path + ".";
    for (const unsigned char c : noise) {
      tmp += k_chars[c % (sizeof(k_chars) - 1)];
    }
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
      break;
    }
  }
  if (fd < 0) {
    return os_error(errno != 0 ? errno : EEXIST);
  }
  int err = 0;
  // A report is meant to be read by log collectors.
  bool ok = ::fchmod(fd, 0644) == 0 || ((err = errno), false);
  ok = ok && write_all(fd, content, err);
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  // rename replaces the name, never what a link there points to; a directory swapped in is EISDIR.
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
  }
  return ok ? Result<void>() : Result<void>(os_error(err));
}

} // namespace gpf
