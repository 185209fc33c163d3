#include "gpf/host/host.hpp"

#include "gpf/util/enum_names.hpp"
#include "gpf/util/json_read.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"
#include "streams.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>

extern char** environ; // POSIX: the process environment (read only here, for the live host)

namespace gpf {
namespace fs = std::filesystem;

namespace {

std::string os_error(int err) {
  return std::strerror(err);
}

// Root-relative paths only, without ".." (a probe cannot climb out of the root).
bool is_safe_relative(std::string_view path) {
  if (path.empty() || path.front() == '/') {
    return false;
  }
  for (auto part : split(path, '/')) {
    if (part == "..") {
      return false;
    }
  }
  return true;
}

// Whether a failed read of path says the path is not there (ENOENT, ENOTDIR), as absent() would,
// without asking the host again. A path unreadable.json names is unreadable, never absent.
bool says_absent(const std::map<std::string, std::string>& unreadable, std::string_view path,
                 const Error& error) {
  return unreadable.count(std::string(path)) == 0 &&
         (error.message == os_error(ENOENT) || error.message == os_error(ENOTDIR));
}

NodeType node_type(mode_t mode) {
  if (S_ISCHR(mode)) {
    return NodeType::char_device;
  }
  if (S_ISBLK(mode)) {
    return NodeType::block_device;
  }
  if (S_ISREG(mode)) {
    return NodeType::regular_file;
  }
  if (S_ISDIR(mode)) {
    return NodeType::directory;
  }
  return NodeType::other;
}

// devices.json of a snapshot: {"dev/nvidiactl": {"type": "char", "major": 195, "minor": 255,
// "mode": "0666", "rw_access": true}, ...}. Unknown members are ignored; a mistyped one is an
// error naming it (json_read.hpp).
Result<std::map<std::string, NodeInfo>> parse_manifest(const std::string& text) {
  if (!json_depth_within(text)) {
    return Error{"devices.json nests deeper than " + std::to_string(k_json_max_depth) + " levels"};
  }
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Error{"devices.json is not a JSON object"};
  }
  std::map<std::string, NodeInfo> manifest;
  for (const auto& [path, value] : doc.items()) {
    if (!value.is_object()) {
      continue;
    }
    const JsonIn entry(value, path);
    NodeInfo info;
    info.type = NodeType::other;
    std::string type;
    std::string mode;
    const auto read = [&]() -> Result<void> {
      TRY(entry["type"].get(type));
      TRY(entry["major"].get(info.major));
      TRY(entry["minor"].get(info.minor));
      TRY(entry["mode"].get(mode));
      TRY(entry["rw_access"].get(info.rw_access));
      return {};
    };
    if (auto r = read(); !r) {
      return Error{"devices.json: " + r.error().message};
    }
    info.type = parse_node_type_word(type).value_or(NodeType::other);
    if (auto m = parse_uint(mode, 8)) {
      info.mode = static_cast<unsigned>(*m & 07777);
    }
    std::string key = path;
    while (!key.empty() && key.front() == '/') {
      key.erase(0, 1);
    }
    manifest[key] = info;
  }
  return manifest;
}

// statvfs.json of a snapshot: {"dev/shm": {"size_bytes": 67108864, "available_bytes": 67108864},
// "other": {"exists": false}}. Entries that are not objects are ignored.
std::map<std::string, FsSpace> parse_fs_records(const std::string& text) {
  std::map<std::string, FsSpace> records;
  if (!json_depth_within(text)) {
    return records;
  }
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return records;
  }
  for (const auto& [path, value] : doc.items()) {
    if (!value.is_object()) {
      continue;
    }
    const JsonIn entry(value, path);
    FsSpace space;
    space.exists = entry["exists"].lenient<bool>().value_or(space.exists);
    const auto size = entry["size_bytes"].lenient<std::uint64_t>();
    if (space.exists && !size) {
      continue; // neither a size nor "exists": false
    }
    if (space.exists) {
      space.size_bytes = *size;
      space.available_bytes =
          entry["available_bytes"].lenient<std::uint64_t>().value_or(space.size_bytes);
    }
    records[path] = space;
  }
  return records;
}

// Why an open file of a snapshot is not read: it is not a regular file (a directory reads as
// EISDIR, as read(2) would say). nullopt for a regular file.
std::optional<std::string> not_regular(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return os_error(errno);
  }
  if (S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    return os_error(EISDIR);
  }
  const char* what = S_ISFIFO(st.st_mode)   ? "a FIFO"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a plain file";
  return std::string("not a regular file (") + what + "): a snapshot holds regular files only";
}

// A file opened for reading only when it is a regular file: looked at first through an O_PATH
// descriptor (path_fd), which opens nothing (no device's open routine runs, no FIFO is touched),
// then the same inode reopened through /proc/self/fd. Without /proc, open_direct() opens it and
// it is checked after. Returns the fd or -errno; odd says why a file that is not regular was
// refused (-EINVAL).
template <class OpenDirect>
int open_regular(int path_fd, const OpenDirect& open_direct, std::optional<std::string>& odd) {
  if (path_fd < 0) {
    return path_fd;
  }
  if (auto why = not_regular(path_fd)) {
    ::close(path_fd);
    odd = std::move(why);
    return -EINVAL;
  }
  const std::string proc = fmt::format("/proc/self/fd/{}", path_fd);
  int fd = ::open(proc.c_str(), O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  const int err = errno;
  ::close(path_fd);
  if (fd >= 0) {
    return fd;
  }
  if (err != ENOENT) {
    return -err;
  }
  fd = open_direct();
  if (fd >= 0) {
    if (auto why = not_regular(fd)) {
      ::close(fd);
      odd = std::move(why);
      return -EINVAL;
    }
  }
  return fd;
}

// openat2(2) with RESOLVE_IN_ROOT (Linux 5.6+); -ENOSYS where the kernel lacks it.
int open_in_root(int root_fd, std::string_view rel, int flags) {
  open_how how{};
  how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const std::string relative(rel);
  const long fd = ::syscall(SYS_openat2, root_fd, relative.c_str(), &how, sizeof how);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

// Fallback for kernels without openat2: open, then refuse a file whose real path left the root.
int open_checked(const fs::path& root, const fs::path& full, int flags) {
  const int fd = ::open(full.c_str(), flags | O_CLOEXEC);
  if (fd < 0) {
    return -errno;
  }
  std::error_code ec;
  const auto real_root = fs::canonical(root, ec);
  const auto real = fs::canonical(fs::path("/proc/self/fd") / std::to_string(fd), ec);
  const auto rel = real.lexically_relative(real_root);
  if (ec || rel.empty() || *rel.begin() == "..") {
    ::close(fd);
    return -EXDEV;
  }
  return fd;
}

} // namespace

namespace {
constexpr auto k_node_type_words =
    enum_names<NodeType::other>({"missing", "char", "block", "file", "dir", "other"});
} // namespace

std::string_view node_type_word(NodeType type) {
  return k_node_type_words(type);
}

std::optional<NodeType> parse_node_type_word(std::string_view word) {
  return k_node_type_words.parse(word);
}

std::optional<std::string> join_link_target(std::string_view link_path, std::string_view target) {
  std::vector<std::string_view> parts;
  if (!target.empty() && target.front() != '/') {
    for (auto p : split(link_path, '/')) {
      parts.push_back(p);
    }
    if (!parts.empty()) {
      parts.pop_back(); // the link's own name
    }
  }
  for (auto p : split(target, '/')) {
    if (p.empty() || p == ".") {
      continue;
    }
    if (p == "..") {
      if (parts.empty()) {
        return std::nullopt;
      }
      parts.pop_back();
      continue;
    }
    parts.push_back(p);
  }
  std::string out;
  for (auto p : parts) {
    if (p.empty() || p == ".") {
      continue;
    }
    out += out.empty() ? "" : "/";
    out += p;
  }
  if (out.empty()) {
    return std::nullopt;
  }
  return out;
}

std::optional<std::string> Environment::get(std::string_view name) const {
  if (auto it = m_vars.find(std::string(name)); it != m_vars.end()) {
    return it->second;
  }
  return std::nullopt;
}

Environment Environment::parse(std::string_view text) {
  std::map<std::string, std::string> vars;
  for (auto line : split_lines(text)) {
    if (trim(line).empty() || trim(line).front() == '#') {
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      continue;
    }
    vars[to_valid_utf8(line.substr(0, eq))] = to_valid_utf8(line.substr(eq + 1));
  }
  return Environment(std::move(vars));
}

Host::Host(fs::path root, bool live, Environment env)
    : m_root(std::move(root)), m_live(live), m_env(std::move(env)) {}

Host Host::live() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos && eq > 0) {
      vars[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
    }
  }
  return Host("/", true, Environment(std::move(vars)));
}

Result<Host> Host::snapshot(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return Error{"--root " + dir.string() + ": " + os_error(errno)};
  }
  if (!S_ISDIR(st.st_mode)) {
    return Error{"--root " + dir.string() + ": not a directory"};
  }
  // O_PATH below opens a directory this process cannot read; every read would then fail and the
  // snapshot look like a host without a driver. Unreadable is the checker's error, not the node's.
  if (::faccessat(AT_FDCWD, dir.c_str(), R_OK | X_OK, AT_EACCESS) != 0) {
    return Error{"--root " + dir.string() + ": " + os_error(errno)};
  }
  Host host(dir, false, Environment());
  // One descriptor of the root for every read (openat2 resolves against it), not one per read.
  if (const int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
    host.m_root_fd = std::shared_ptr<const int>(new int(fd), [](const int* p) {
      ::close(*p);
      delete p;
    });
  } else {
    return Error{"--root " + dir.string() + ": " + os_error(errno)};
  }
  if (auto env = host.read_file("environ")) {
    host.m_env = Environment::parse(env->data);
  }
  if (auto manifest = host.read_file("devices.json")) {
    if (auto parsed = parse_manifest(manifest->data)) {
      host.m_node_manifest = std::move(parsed).value();
    } else {
      host.m_manifest_error = parsed.error().message;
    }
  }
  if (auto records = host.read_file("statvfs.json")) {
    host.m_fs_records = parse_fs_records(records->data);
  }
  if (auto unreadable = host.read_file("unreadable.json");
      unreadable && json_depth_within(unreadable->data)) {
    const auto doc = nlohmann::json::parse(unreadable->data, nullptr, false);
    if (doc.is_object()) {
      for (const auto& [path, reason] : doc.items()) {
        if (auto text = JsonIn(reason).lenient<std::string>()) {
          host.m_unreadable[path] = *text;
        }
      }
    }
  }
  return host;
}

fs::path Host::resolve(std::string_view path) const {
  return m_root / fs::path(path);
}

int Host::open_path(std::string_view path, int flags) const {
  if (!is_safe_relative(path)) {
    return -EINVAL;
  }
  if (m_live) {
    const int fd = ::open(resolve(path).c_str(), flags | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
  }
  if (!m_root_fd) {
    return -ENOENT; // the root could not be opened (it was checked to be a directory)
  }
  const int fd = open_in_root(*m_root_fd, path, flags);
  return fd == -ENOSYS ? open_checked(m_root, resolve(path), flags) : fd;
}

std::optional<Error> Host::guard(HostAccess::Kind kind, std::string_view path) const {
  if (!is_safe_relative(path)) {
    return Error{"invalid host path: " + std::string(path)};
  }
  if (auto it = m_unreadable.find(std::string(path)); it != m_unreadable.end()) {
    record_error(kind, path, it->second);
    return Error{it->second};
  }
  return std::nullopt;
}

void Host::record(HostAccess::Kind kind, std::string_view path, int err) const {
  if (m_access_log == nullptr) {
    return;
  }
  // a missing path, or (for a link) a path that is not a link, is an answer, not an error
  if (err == ENOENT || err == ENOTDIR || (kind == HostAccess::Kind::link && err == EINVAL)) {
    m_access_log->push_back({kind, std::string(path), {}, false});
  } else {
    record_error(kind, path, err != 0 ? os_error(err) : std::string());
  }
}

void Host::record_error(HostAccess::Kind kind, std::string_view path,
                        const std::string& error) const {
  if (m_access_log != nullptr) {
    m_access_log->push_back({kind, std::string(path), error, true});
  }
}

Result<FileContent> Host::read_file(std::string_view path, std::size_t cap) const {
  if (auto refused = guard(HostAccess::Kind::file, path)) {
    return *refused;
  }
  // A snapshot holds regular files only: a FIFO, socket or device node in it (/dev/zero as
  // dmesg.txt) would hang or never end, so it is an error, and never opened. Live proc and sysfs
  // files are read as they are (their sizes say nothing). Read in chunks until EOF or one byte past
  // the cap.
  const auto open_direct = [&] { return open_path(path, O_RDONLY | O_NOCTTY | O_NONBLOCK); };
  std::optional<std::string> odd;
  const int fd = m_live ? open_direct() : open_regular(open_path(path, O_PATH), open_direct, odd);
  if (odd) {
    record_error(HostAccess::Kind::file, path, *odd);
    return Error{*odd};
  }
  if (fd < 0) {
    record(HostAccess::Kind::file, path, -fd);
    return Error{os_error(-fd)};
  }
  FileContent content;
  // Through a buffer on the stack: most inputs are a few bytes (sysfs attributes), and growing the
  // string by a whole chunk before each read zero-filled 64 KiB per file.
  char chunk[32768];
  // A snapshot's file is a regular file (checked above): a short read(2) is its end, so the read
  // that would return 0 is not needed. Live proc files may return less than asked before the end.
  const bool short_read_ends = !m_live;
  // A large snapshot file is read into one allocation of its size (up to the cap), not grown by
  // doubling, which held the old and the new copy at once (bench/bounds.sh).
  if (struct stat st{}; short_read_ends && ::fstat(fd, &st) == 0 && st.st_size > 65536) {
    content.data.reserve(std::min(cap + 1, static_cast<std::size_t>(st.st_size)));
  }
  for (;;) {
    const std::size_t room = cap + 1 - content.data.size();
    if (room == 0) {
      break;
    }
    const ssize_t n = ::read(fd, chunk, std::min(sizeof chunk, room));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const int err = errno;
      ::close(fd);
      record(HostAccess::Kind::file, path, err);
      return Error{os_error(err)};
    }
    if (n == 0) {
      break;
    }
    content.data.append(chunk, static_cast<std::size_t>(n));
    if (short_read_ends && static_cast<std::size_t>(n) < std::min(sizeof chunk, room)) {
      break;
    }
  }
  ::close(fd);
  if (content.data.size() > cap) {
    content.data.resize(cap);
    content.truncated = true;
    const std::lock_guard<std::mutex> hold(m_cuts->lock);
    m_cuts->cuts.push_back(fmt::format("{} (first {} bytes)", path, cap));
  }
  record(HostAccess::Kind::file, path, 0);
  return content;
}

std::vector<std::string> Host::take_cut_reads() const {
  const std::lock_guard<std::mutex> hold(m_cuts->lock);
  return std::exchange(m_cuts->cuts, {});
}

namespace {

// The entry names of the directory open on fd, sorted, without "." and ".."; fd is closed.
Result<std::vector<std::string>> sorted_entries(int fd) {
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int err = errno;
    ::close(fd);
    return Error{os_error(err)};
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") {
      names.emplace_back(name);
    }
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

Result<std::vector<std::string>> Host::list_dir(std::string_view path) const {
  if (auto refused = guard(HostAccess::Kind::directory, path)) {
    return *refused;
  }
  const int fd = open_path(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    record(HostAccess::Kind::directory, path, -fd);
    return Error{os_error(-fd)};
  }
  auto names = sorted_entries(fd); // closes fd
  if (!names) {
    return names.error();
  }
  record(HostAccess::Kind::directory, path, 0);
  return names;
}

bool Host::exists(std::string_view path) const {
  const int fd = open_path(path, O_PATH);
  if (fd >= 0) {
    ::close(fd);
  }
  return fd >= 0;
}

bool Host::absent(std::string_view path) const {
  // A snapshot records what could not be read (unreadable.json): unreadable, never absent.
  if (m_unreadable.count(std::string(path)) != 0) {
    return false;
  }
  const int fd = open_path(path, O_PATH);
  if (fd >= 0) {
    ::close(fd);
    return false;
  }
  return fd == -ENOENT || fd == -ENOTDIR;
}

Result<FsSpace> Host::filesystem_space(std::string_view path) const {
  if (auto refused = guard(HostAccess::Kind::filesystem, path)) {
    return *refused;
  }
  FsSpace space;
  if (!m_live) {
    if (auto it = m_fs_records.find(std::string(path)); it != m_fs_records.end()) {
      space = it->second;
    } else {
      space.recorded = false;
    }
    record(HostAccess::Kind::filesystem, path, space.exists ? 0 : ENOENT);
    return space;
  }
  const int fd = open_path(path, O_PATH);
  struct statvfs st {};
  const int err = fd < 0 ? -fd : (::fstatvfs(fd, &st) == 0 ? 0 : errno);
  if (fd >= 0) {
    ::close(fd);
  }
  record(HostAccess::Kind::filesystem, path, err);
  if (err == ENOENT || err == ENOTDIR) {
    space.exists = false;
    return space;
  }
  if (err != 0) {
    return Error{os_error(err)};
  }
  space.size_bytes = static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize;
  space.available_bytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  return space;
}

bool Host::is_directory(std::string_view path) const {
  const int fd = open_path(path, O_PATH | O_DIRECTORY);
  if (fd >= 0) {
    ::close(fd);
    record(HostAccess::Kind::directory, path, 0);
  }
  return fd >= 0;
}

NodeInfo Host::stat_node(std::string_view path) const {
  NodeInfo info;
  if (!is_safe_relative(path)) {
    info.error = "invalid host path";
    return info;
  }
  struct stat st {};
  const int fd = open_path(path, O_PATH);
  const int err = fd < 0 ? -fd : (::fstat(fd, &st) == 0 ? 0 : errno);
  if (fd >= 0) {
    ::close(fd);
  }
  if (err != 0) {
    if (err != ENOENT && err != ENOTDIR) {
      info.type = NodeType::other;
      info.error = os_error(err);
    }
  } else {
    info.type = node_type(st.st_mode);
    info.mode = static_cast<unsigned>(st.st_mode & 07777);
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      info.major = ::major(st.st_rdev);
      info.minor = ::minor(st.st_rdev);
    }
    if (m_live) {
      // access(2) rather than open(2): opening a device node is not free of side effects
      info.rw_access = ::faccessat(AT_FDCWD, resolve(path).c_str(), R_OK | W_OK, AT_EACCESS) == 0;
    } else if (S_ISREG(st.st_mode)) {
      // A plain file stands in for a node: its mode is the stand-in's, not the node's.
      info.stand_in = true;
      info.mode.reset();
    }
  }
  record(HostAccess::Kind::node, path, err);
  if (!m_live) {
    if (auto it = m_node_manifest.find(std::string(path)); it != m_node_manifest.end()) {
      const NodeInfo& recorded = it->second;
      if (recorded.type == NodeType::missing) {
        return recorded;
      }
      info.type = recorded.type;
      info.stand_in = false;
      info.major = recorded.major;
      info.minor = recorded.minor;
      info.mode = recorded.mode;
      info.rw_access = recorded.rw_access;
      info.error.clear();
    }
  }
  return info;
}

namespace {

// A ring buffer whose first message is this many seconds after boot has lost the boot's start.
constexpr double k_wrapped_after_s = 1.0;
// How much of the ring buffer is read ahead to learn its first timestamp.
constexpr std::size_t k_peek_bytes = 64 * 1024;

// The first piece of stream, put back in front of the rest: what a ring buffer's first message
// says about how far back it reaches.
Result<std::unique_ptr<ByteStream>> peeked(std::unique_ptr<ByteStream> stream) {
  std::string head(k_peek_bytes, '\0');
  auto n = stream->read(head.data(), head.size());
  if (!n) {
    return n.error();
  }
  head.resize(*n);
  return prepend(std::move(head), std::move(stream));
}

} // namespace

// The ring buffer alone: /dev/kmsg or klogctl live; dmesg.txt (or dmesg.error) in a snapshot.
Result<std::unique_ptr<ByteStream>> Host::open_ring_buffer() const {
  if (m_live) {
    return open_live_kernel_log(resolve("dev/kmsg"));
  }
  if (auto injected = read_file("dmesg.error", 4096)) {
    return Error{"dmesg.txt: " + std::string(trim(injected->data)) +
                 " (recorded in the snapshot's dmesg.error)"};
  }
  std::optional<std::string> odd;
  const int fd = open_regular(
      open_path("dmesg.txt", O_PATH),
      [&] { return open_path("dmesg.txt", O_RDONLY | O_NOCTTY | O_NONBLOCK); }, odd);
  if (odd) {
    record_error(HostAccess::Kind::file, "dmesg.txt", *odd);
    return Error{"dmesg.txt: " + *odd};
  }
  const int err = fd >= 0 ? 0 : -fd;
  record(HostAccess::Kind::file, "dmesg.txt", err);
  if (err == ENOENT) {
    return std::unique_ptr<ByteStream>();
  }
  if (err != 0) {
    return Error{"dmesg.txt: " + os_error(err)};
  }
  return fd_stream(fd, "dmesg.txt");
}

// The systemd journal: the live system journal, or a snapshot's var/log/journal and
// run/log/journal (their *.journal files and those one directory down, the machine-id
// directory; regular files only, opened inside the root). Not recorded for capture: the lines
// read go into the snapshot's dmesg.txt, not the journal files.
Result<std::unique_ptr<ByteStream>> Host::open_journal() const {
  static constexpr std::string_view k_dirs[] = {"var/log/journal", "run/log/journal"};
  JournalInput input;
  input.live = m_live;
  input.name = m_live ? "systemd journal" : "systemd journal (var/log/journal, run/log/journal)";
  std::vector<std::string> errors;
  for (const auto dir : k_dirs) {
    const std::string d(dir);
    if (auto it = m_unreadable.find(d); !m_live && it != m_unreadable.end()) {
      errors.push_back(d + ": " + it->second);
      continue;
    }
    if (m_live) {
      input.live_dirs_exist = input.live_dirs_exist || fs::is_directory(resolve(dir));
      continue;
    }
    const int dfd = open_path(dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0) {
      if (-dfd != ENOENT && -dfd != ENOTDIR) {
        errors.push_back(d + ": " + os_error(-dfd));
      }
      continue;
    }
    ::close(dfd);
    // The journal files of dir and of its subdirectories (one per machine id).
    std::vector<std::string> candidates;
    std::vector<std::string> subdirs;
    const auto add_dir = [&](const std::string& path, bool descend) {
      const int fd = open_path(path, O_RDONLY | O_DIRECTORY);
      if (fd < 0) {
        errors.push_back(path + ": " + os_error(-fd));
        return;
      }
      DIR* listing = ::fdopendir(fd);
      if (listing == nullptr) {
        ::close(fd);
        return;
      }
      std::vector<std::pair<std::string, unsigned char>> entries;
      while (const dirent* e = ::readdir(listing)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") {
          entries.emplace_back(name, e->d_type);
        }
      }
      ::closedir(listing);
      std::sort(entries.begin(), entries.end());
      for (const auto& [name, type] : entries) {
        const std::string child = path + "/" + name;
        if (name.size() > 8 && name.ends_with(".journal")) {
          candidates.push_back(child);
        } else if (descend && type == DT_DIR) {
          subdirs.push_back(child);
        }
      }
    };
    add_dir(d, true);
    for (const auto& sub : std::vector<std::string>(subdirs)) {
      add_dir(sub, false);
    }
    for (const auto& path : candidates) {
      std::optional<std::string> odd;
      const int fd = open_regular(
          open_path(path, O_PATH | O_NOFOLLOW),
          [&] { return open_path(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW); }, odd);
      if (odd) {
        continue; // a FIFO, device or other non-file named *.journal is neither opened nor read
      }
      if (fd < 0) {
        errors.push_back(path + ": " + os_error(-fd));
        continue;
      }
      input.files.emplace_back(path, OwnedFd(fd));
    }
  }
  if (!m_live && input.files.empty()) {
    if (!errors.empty()) {
      return Error{input.name + ": " + fmt::format("{}", fmt::join(errors, "; "))};
    }
    return std::unique_ptr<ByteStream>();
  }
  if (!m_live) {
    if (auto boot = read_file("proc/sys/kernel/random/boot_id", 256)) {
      input.boot_id = std::string(trim(boot->data));
    }
  }
  return open_journal_kernel_log(input, errors);
}

Result<std::unique_ptr<ByteStream>>
Host::open_kernel_log(std::vector<LogSourceAttempt>* attempts) const {
  std::vector<LogSourceAttempt> tried;
  const auto note = [&](std::string source, const Result<std::unique_ptr<ByteStream>>& r) {
    LogSourceAttempt a;
    a.source = std::move(source);
    if (!r) {
      a.error = r.error().message;
    } else if (!*r) {
      a.found = false;
    }
    tried.push_back(std::move(a));
  };
  const auto finish = [&](std::unique_ptr<ByteStream> used) -> Result<std::unique_ptr<ByteStream>> {
    if (used) {
      for (auto& a : tried) {
        a.used = a.error.empty() && a.found && a.source == used->name();
      }
    }
    if (attempts != nullptr) {
      *attempts = tried;
    }
    return used;
  };

  // 1. The ring buffer, and whether it still reaches back to the boot.
  auto ring = open_ring_buffer();
  const std::string ring_name = m_live ? "/dev/kmsg, klogctl" : "dmesg.txt";
  if (ring && *ring) {
    auto peek = peeked(std::move(ring.value()));
    if (!peek) {
      ring = peek.error();
    } else {
      ring = std::move(peek).value();
    }
  }
  note(ring && *ring ? (*ring)->name() : ring_name, ring);
  // Seconds after boot of the ring buffer's first message; 0 when unknown (taken as complete).
  const double ring_first = ring && *ring ? (*ring)->first_seconds().value_or(0.0) : 0.0;
  if (ring && *ring && ring_first <= k_wrapped_after_s) {
    return finish(std::move(ring.value()));
  }

  // 2. The systemd journal: instead of a wrapped ring buffer when it reaches further back.
  auto journal = open_journal();
  note(journal && *journal
           ? (*journal)->name()
           : (m_live ? "systemd journal" : "systemd journal (var/log/journal, run/log/journal)"),
       journal);
  const bool journal_has_lines = journal && *journal && (*journal)->first_seconds();
  if (ring && *ring) {
    if (journal_has_lines &&
        (*journal)->first_seconds().value_or(ring_first) + k_wrapped_after_s < ring_first) {
      return finish(std::move(journal.value()));
    }
    return finish(std::move(ring.value()));
  }
  if (journal_has_lines) {
    return finish(std::move(journal.value()));
  }

  // 3. The syslog daemon's files (boot-aware through the kernel banner and the kernel's own
  // timestamps inside each line).
  static constexpr std::string_view k_files[] = {"var/log/kern.log", "var/log/messages",
                                                 "var/log/syslog"};
  for (const auto path : k_files) {
    const std::string label = m_live ? "/" + std::string(path) : std::string(path);
    Result<std::unique_ptr<ByteStream>> file = std::unique_ptr<ByteStream>();
    if (auto it = m_unreadable.find(std::string(path)); !m_live && it != m_unreadable.end()) {
      file = Error{label + ": " + it->second};
    } else {
      // whatever it is, only a regular file is opened (a FIFO would stall the read, a device
      // feed it endlessly)
      std::optional<std::string> odd;
      const int fd = open_regular(
          open_path(path, O_PATH),
          [&] { return open_path(path, O_RDONLY | O_NOCTTY | O_NONBLOCK); }, odd);
      if (odd) {
        file = Error{label + ": " + *odd};
      } else if (fd >= 0) {
        file = fd_stream(fd, label);
      } else if (-fd != ENOENT && -fd != ENOTDIR) {
        file = Error{label + ": " + os_error(-fd)};
      }
    }
    note(label, file);
    if (file && *file) {
      return finish(std::move(file.value()));
    }
  }
  // A journal without this boot's kernel messages is still a log that was read.
  if (journal && *journal) {
    return finish(std::move(journal.value()));
  }
  std::vector<std::string> errors;
  for (const auto& a : tried) {
    if (!a.error.empty()) {
      errors.push_back(a.error);
    }
  }
  if (attempts != nullptr) {
    *attempts = tried;
  }
  if (errors.empty()) {
    return std::unique_ptr<ByteStream>();
  }
  return Error{fmt::format("{}", fmt::join(errors, "; "))};
}

Result<std::unique_ptr<ByteStream>> Host::open_user_file(const std::string& path) const {
  if (path == "-") {
    return stdin_stream();
  }
  return open_file_stream(path, path);
}

Result<std::string> Host::read_link(std::string_view path) const {
  if (auto refused = guard(HostAccess::Kind::link, path)) {
    return *refused;
  }
  // The link itself (O_NOFOLLOW), its directories resolved inside the root like every other read.
  const int fd = open_path(path, O_PATH | O_NOFOLLOW);
  if (fd < 0) {
    record(HostAccess::Kind::link, path, -fd);
    return Error{os_error(-fd)};
  }
  std::string target(4096, '\0');
  const ssize_t n = ::readlinkat(fd, "", target.data(), target.size());
  ::close(fd);
  if (n < 0) {
    record(HostAccess::Kind::link, path,
           EINVAL); // it exists but is not a link: an answer (capture skips it)
    return Error{os_error(EINVAL)};
  }
  target.resize(static_cast<std::size_t>(n));
  record(HostAccess::Kind::link, path, 0);
  return target;
}

Result<Host::DirLinks> Host::dir_links(
    std::string_view dir,
    const std::function<std::vector<std::string>(std::vector<std::string>)>& choose) const {
  if (auto refused = guard(HostAccess::Kind::directory, dir)) {
    return *refused;
  }
  const int fd = open_path(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    record(HostAccess::Kind::directory, dir, -fd);
    return Error{os_error(-fd)};
  }
  // the listing reads through a duplicate (it is closed after); the links through fd itself
  const int list_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  auto all = list_fd < 0 ? Result<std::vector<std::string>>(Error{os_error(errno)})
                         : sorted_entries(list_fd);
  if (!all) {
    ::close(fd);
    return all.error();
  }
  record(HostAccess::Kind::directory, dir, 0);
  DirLinks out;
  out.names = choose(std::move(all).value());
  out.targets.reserve(out.names.size());
  std::string target(4096, '\0');
  for (const auto& name : out.names) {
    const std::string path = std::string(dir) + "/" + name;
    if (auto refused = guard(HostAccess::Kind::link, path)) {
      out.targets.push_back(*refused);
      continue;
    }
    // readlinkat does not follow the entry itself: a link planted in a snapshot is read as text,
    // not followed out of the root
    const ssize_t n = ::readlinkat(fd, name.c_str(), target.data(), target.size());
    if (n < 0) {
      const int err = errno;
      record(HostAccess::Kind::link, path, err);
      out.targets.push_back(Error{os_error(err)});
      continue;
    }
    record(HostAccess::Kind::link, path, 0);
    out.targets.push_back(target.substr(0, static_cast<std::size_t>(n)));
  }
  ::close(fd);
  return out;
}

Result<Host::LinkLookup> Host::lookup_link(std::string_view path) const {
  auto target = read_link(path);
  if (target) {
    return LinkLookup{false, std::move(target).value()};
  }
  // read_link says "Invalid argument" for a path that is there but is not a link
  if (target.error().message == os_error(EINVAL)) {
    return LinkLookup{};
  }
  if (says_absent(m_unreadable, path, target.error())) {
    return LinkLookup{true, std::nullopt};
  }
  return target.error();
}

Result<std::optional<std::string>> Host::link_target(std::string_view path) const {
  TRY_ASSIGN(auto found, lookup_link(path));
  return std::move(found.target);
}

Result<std::optional<std::string>> Host::resolve_link(std::string_view path) const {
  TRY_ASSIGN(const auto target, link_target(path));
  if (!target) {
    return std::optional<std::string>();
  }
  auto joined = join_link_target(path, *target);
  if (!joined) {
    return Error{"link target " + *target + " leaves the root"};
  }
  return joined;
}

Result<std::optional<std::string>> Host::read_attribute(std::string_view path,
                                                        std::size_t cap) const {
  auto content = read_file(path, cap);
  if (content) {
    return std::optional<std::string>(std::string(trim(content->data)));
  }
  if (says_absent(m_unreadable, path, content.error())) {
    return std::optional<std::string>();
  }
  return content.error();
}

bool Host::has_file(std::string_view path) const {
  if (guard(HostAccess::Kind::presence, path)) {
    return false;
  }
  const int fd = open_path(path, O_PATH);
  if (fd < 0) {
    record(HostAccess::Kind::presence, path, -fd);
    return false;
  }
  struct stat st {};
  const bool file = ::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode);
  ::close(fd);
  if (file) {
    record(HostAccess::Kind::presence, path, 0);
  }
  return file;
}

std::optional<std::chrono::year_month_day> Host::today() const {
  using namespace std::chrono;
  if (m_live) {
    return year_month_day{floor<days>(system_clock::now())};
  }
  auto content = read_file("date", 64);
  if (!content) {
    return std::nullopt;
  }
  const auto text = trim(content->data).substr(0, 10);
  const auto parts = split(text, '-');
  if (text.size() != 10 || parts.size() != 3) {
    return std::nullopt;
  }
  const auto y = parse_uint(parts[0]);
  const auto m = parse_uint(parts[1]);
  const auto d = parse_uint(parts[2]);
  if (!y || !m || !d) {
    return std::nullopt;
  }
  const year_month_day date{year(static_cast<int>(*y)), month(static_cast<unsigned>(*m)),
                            day(static_cast<unsigned>(*d))};
  return date.ok() ? std::optional(date) : std::nullopt;
}

std::optional<std::string> Host::hostname() const {
  if (m_live) {
    struct utsname u {};
    return ::uname(&u) == 0 ? std::optional<std::string>(u.nodename) : std::nullopt;
  }
  auto content = read_file("proc/sys/kernel/hostname", 4096);
  return content ? std::optional<std::string>(std::string(trim(content->data))) : std::nullopt;
}

Result<std::string> Host::kernel_release() const {
  if (m_live) {
    struct utsname u {};
    if (::uname(&u) != 0) {
      return Error{os_error(errno)};
    }
    return std::string(u.release);
  }
  auto content = read_file("proc/sys/kernel/osrelease", 4096);
  if (!content) {
    return Error{"proc/sys/kernel/osrelease: " + content.error().message};
  }
  return std::string(trim(content->data));
}

} // namespace gpf
