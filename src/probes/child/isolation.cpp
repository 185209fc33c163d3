// What NVIDIA's user-space libraries do to a host on their own, and how a child stops it:
// - nvmlInit and cuInit unlink and re-create /dev/char/195:255 (strace of the 535 libraries), and
//   they fork/exec the set-user-ID /usr/bin/nvidia-modprobe "when needed" to load the kernel
//   modules and create /dev/nvidia* nodes
//   (https://github.com/NVIDIA/nvidia-modprobe/blob/main/nvidia-modprobe.1.m4).
// - As an ordinary user the only way to change the host is that set-user-ID program: with
//   no_new_privs the kernel runs it without privilege, so it can neither load nor create anything
//   (https://docs.kernel.org/userspace-api/no_new_privs.html).
// - As root the child also gets a private mount namespace in which /dev is read-only and
//   nvidia-modprobe cannot be executed; device nodes on a read-only mount still open read-write,
//   and /dev/shm (a mount of its own) stays writable for CUDA
//   (https://man7.org/linux/man-pages/man2/mount.2.html,
//   https://man7.org/linux/man-pages/man7/mount_namespaces.7.html). Root without CAP_SYS_ADMIN (a
//   container) cannot have that namespace: the child says so.
#include "probes/child/isolation.hpp"

#include "gpf/util/json_read.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace gpf::child {
namespace {

constexpr const char* k_modprobe = "/usr/bin/nvidia-modprobe";

ChildIsolation failed(const char* step) {
  return {false, fmt::format("{}: {}", step, std::strerror(errno))};
}

// The per-mount flags a remount must repeat, or it clears them (mount(2), MS_REMOUNT).
unsigned long kept_flags(const struct statvfs& st) {
  unsigned long flags = 0;
  for (const auto& [st_flag, ms_flag] :
       {std::pair{ST_NOSUID, MS_NOSUID}, std::pair{ST_NODEV, MS_NODEV},
        std::pair{ST_NOEXEC, MS_NOEXEC}, std::pair{ST_NOATIME, MS_NOATIME},
        std::pair{ST_NODIRATIME, MS_NODIRATIME}, std::pair{ST_RELATIME, MS_RELATIME}}) {
    if ((st.f_flag & st_flag) != 0) {
      flags |= ms_flag;
    }
  }
  return flags;
}

} // namespace

ChildIsolation isolate_from_host() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return failed("prctl(PR_SET_NO_NEW_PRIVS)");
  }
  if (::geteuid() != 0) {
    return {true,
            "no_new_privs: set-user-ID programs such as nvidia-modprobe run without privilege"};
  }
  if (::unshare(CLONE_NEWNS) != 0) {
    return failed("unshare(CLONE_NEWNS)");
  }
  // Nothing below may propagate back to the host's mounts.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return failed("mount(/, MS_REC|MS_PRIVATE)");
  }
  struct statvfs st {};
  if (::statvfs("/dev", &st) != 0) {
    return failed("statvfs(/dev)");
  }
  // A bind of /dev onto itself (with its submounts: /dev/shm, /dev/pts stay as they are), then
  // that top mount read-only.
  if (::mount("/dev", "/dev", nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    return failed("mount(/dev, MS_BIND)");
  }
  if (::mount(nullptr, "/dev", nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags(st),
              nullptr) != 0) {
    return failed("mount(/dev, MS_REMOUNT|MS_RDONLY)");
  }
  std::string detail = "private mount namespace: /dev read-only";
  struct stat sb {};
  if (::stat(k_modprobe, &sb) == 0) {
    // exec of a character device fails with EACCES, so the libraries cannot start it
    if (::mount("/dev/null", k_modprobe, nullptr, MS_BIND, nullptr) != 0) {
      return failed("mount(/dev/null on /usr/bin/nvidia-modprobe)");
    }
    detail += ", /usr/bin/nvidia-modprobe cannot run";
  }
  return {true, detail};
}

} // namespace gpf::child
