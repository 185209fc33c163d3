#include "gpf/host/host.hpp"

#include "gpf/util/text.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>

extern char** environ; // POSIX: the process environment (read only here, for the live host)

namespace gpf {
namespace fs = std::filesystem;

namespace {

std::string os_error(int err) { return std::strerror(err); }

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

std::optional<NodeType> node_type_name(std::string_view name) {
  if (name == "char") {
    return NodeType::char_device;
  }
  if (name == "block") {
    return NodeType::block_device;
  }
  if (name == "file") {
    return NodeType::regular_file;
  }
  if (name == "dir") {
    return NodeType::directory;
  }
  if (name == "missing") {
    return NodeType::missing;
  }
  return std::nullopt;
}

// devices.json of a snapshot: {"dev/nvidiactl": {"type": "char", "major": 195, "minor": 255,
// "mode": "0666", "rw_access": true}, ...}. Unknown members are ignored.
std::map<std::string, NodeInfo> parse_manifest(const std::string& text, std::string& error) {
  std::map<std::string, NodeInfo> manifest;
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "devices.json is not a JSON object";
    return manifest;
  }
  for (const auto& [path, entry] : doc.items()) {
    if (!entry.is_object()) {
      continue;
    }
    NodeInfo info;
    info.type = NodeType::other;
    if (auto it = entry.find("type"); it != entry.end() && it->is_string()) {
      info.type = node_type_name(it->get<std::string>()).value_or(NodeType::other);
    }
    if (auto it = entry.find("major"); it != entry.end() && it->is_number_unsigned()) {
      info.major = it->get<unsigned>();
    }
    if (auto it = entry.find("minor"); it != entry.end() && it->is_number_unsigned()) {
      info.minor = it->get<unsigned>();
    }
    if (auto it = entry.find("mode"); it != entry.end() && it->is_string()) {
      if (auto m = parse_uint(it->get<std::string>(), 8)) {
        info.mode = static_cast<unsigned>(*m & 07777);
      }
    }
    if (auto it = entry.find("rw_access"); it != entry.end() && it->is_boolean()) {
      info.rw_access = it->get<bool>();
    }
    std::string key = path;
    while (!key.empty() && key.front() == '/') {
      key.erase(0, 1);
    }
    manifest[key] = info;
  }
  return manifest;
}

} // namespace

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
  Host host(dir, false, Environment());
  if (auto env = host.read_file("environ")) {
    host.m_env = Environment::parse(env->data);
  }
  if (auto manifest = host.read_file("devices.json")) {
    host.m_node_manifest = parse_manifest(manifest->data, host.m_manifest_error);
  }
  return host;
}

fs::path Host::resolve(std::string_view path) const { return m_root / fs::path(path); }

Result<FileContent> Host::read_file(std::string_view path, std::size_t cap) const {
  if (!is_safe_relative(path)) {
    return Error{"invalid host path: " + std::string(path)};
  }
  const auto full = resolve(path);
  const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return Error{os_error(errno)};
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error{os_error(EISDIR)};
  }
  FileContent content;
  // proc files report size 0, so read in chunks until EOF or one byte past the cap.
  std::size_t chunk = 65536;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    chunk = std::min<std::size_t>(static_cast<std::size_t>(st.st_size) + 1, cap + 1);
  }
  for (;;) {
    const std::size_t room = cap + 1 - content.data.size();
    if (room == 0) {
      break;
    }
    const std::size_t want = std::min(chunk, room);
    const std::size_t old = content.data.size();
    content.data.resize(old + want);
    const ssize_t n = ::read(fd, content.data.data() + old, want);
    if (n < 0) {
      if (errno == EINTR) {
        content.data.resize(old);
        continue;
      }
      const int err = errno;
      ::close(fd);
      return Error{os_error(err)};
    }
    content.data.resize(old + static_cast<std::size_t>(n));
    if (n == 0) {
      break;
    }
  }
  ::close(fd);
  if (content.data.size() > cap) {
    content.data.resize(cap);
    content.truncated = true;
  }
  return content;
}

Result<std::vector<std::string>> Host::list_dir(std::string_view path) const {
  if (!is_safe_relative(path)) {
    return Error{"invalid host path: " + std::string(path)};
  }
  std::error_code ec;
  fs::directory_iterator it(resolve(path), ec);
  if (ec) {
    return Error{ec.message()};
  }
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      return Error{ec.message()};
    }
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool Host::exists(std::string_view path) const {
  struct stat st {};
  return is_safe_relative(path) && ::stat(resolve(path).c_str(), &st) == 0;
}

bool Host::is_directory(std::string_view path) const {
  struct stat st {};
  return is_safe_relative(path) && ::stat(resolve(path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

NodeInfo Host::stat_node(std::string_view path) const {
  NodeInfo info;
  if (!is_safe_relative(path)) {
    info.error = "invalid host path";
    return info;
  }
  const auto full = resolve(path);
  struct stat st {};
  if (::stat(full.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      info.type = NodeType::other;
      info.error = os_error(errno);
    }
  } else {
    info.type = node_type(st.st_mode);
    info.mode = static_cast<unsigned>(st.st_mode & 07777);
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      info.major = ::major(st.st_rdev);
      info.minor = ::minor(st.st_rdev);
    }
    if (m_live || !S_ISREG(st.st_mode)) {
      info.rw_access = ::faccessat(AT_FDCWD, full.c_str(), R_OK | W_OK, AT_EACCESS) == 0;
    } else {
      // A plain file stands in for a node: its mode is the stand-in's, not the node's.
      info.stand_in = true;
      info.mode.reset();
    }
  }
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

Result<std::string> Host::read_link(std::string_view path) const {
  if (!is_safe_relative(path)) {
    return Error{"invalid host path: " + std::string(path)};
  }
  std::string target(4096, '\0');
  const ssize_t n = ::readlink(resolve(path).c_str(), target.data(), target.size());
  if (n < 0) {
    return Error{os_error(errno)};
  }
  target.resize(static_cast<std::size_t>(n));
  return target;
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
  const year_month_day date{year(static_cast<int>(*y)), month(static_cast<unsigned>(*m)), day(static_cast<unsigned>(*d))};
  return date.ok() ? std::optional(date) : std::nullopt;
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
