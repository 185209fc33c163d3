// Linked only into gpu-preflight-hooked, the test build's second binary (tests/CMakeLists.txt):
// with GPF_TEST_CAPTURE_PAUSE=FILE a snapshot writes its private directory's path to FILE and
// waits (60 s at most) until FILE is removed, while the test plants links. The installed
// gpu-preflight has no such code. FILE is created new, never through a link.
#include "gpf/capture/snapshot.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

void pause_until_removed(const std::filesystem::path& work_dir) {
  const char* file = std::getenv("GPF_TEST_CAPTURE_PAUSE");
  if (file == nullptr || *file == '\0') {
    return;
  }
  const int fd = ::open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return;
  }
  const std::string line = work_dir.string() + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  for (int i = 0; written && i < 6000 && ::access(file, F_OK) == 0; ++i) {
    ::usleep(10000);
  }
}

// Set before main runs: this object is linked into the executable itself, never from an archive.
const bool k_installed = [] {
  gpf::g_capture_pause_hook = pause_until_removed;
  return true;
}();

} // namespace
