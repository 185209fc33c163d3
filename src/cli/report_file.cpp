// --json-out: the report file is replaced whole (temporary file + rename in the same directory),
// so log shippers and dashboards never read a half-written report. Something that is not a
// regular file (/dev/stderr, a FIFO) is written in place instead.
#include "gpf/cli/cli.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpf {
namespace {

Error os_error() {
  return Error{std::strerror(errno)};
}

bool write_all(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

} // namespace

Result<bool> write_file_replacing(const std::string& path, const std::string& content) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      return os_error();
    }
    const bool ok = write_all(fd, content);
    const Error err = os_error();
    ::close(fd);
    return ok ? Result<bool>(true) : Result<bool>(err);
  }
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    return os_error();
  }
  // mkstemp makes 0600; a report is meant to be read by log collectors.
  bool ok = ::fchmod(fd, 0644) == 0 && write_all(fd, content);
  Error err = os_error();
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = os_error();
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return err;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const Error rename_err = os_error();
    ::unlink(tmp.c_str());
    return rename_err;
  }
  return true;
}

} // namespace gpf
