#include "output_tree.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace gpf {
namespace fs = std::filesystem;

namespace {

constexpr int k_max_depth = 64; // deeper than any tree a capture writes

std::string reason(int err) {
  return std::strerror(err);
}

// Path components of a root-relative path; ".." is refused, "." and empty parts are skipped.
std::vector<std::string> components(std::string_view rel, bool& ok) {
  std::vector<std::string> parts;
  ok = true;
  std::size_t start = 0;
  while (start <= rel.size()) {
    const auto end = rel.find('/', start);
    const auto part =
        rel.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (part == "..") {
      ok = false;
    } else if (!part.empty() && part != ".") {
      parts.emplace_back(part);
    }
    if (end == std::string_view::npos) {
      break;
    }
    start = end + 1;
  }
  return parts;
}

int open_dir_at(int parent, const std::string& name) {
  return ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

} // namespace

OutputFile::OutputFile(OutputFile&& other) noexcept
    : m_fd(other.m_fd), m_shown(std::move(other.m_shown)) {
  other.m_fd = -1;
}

OutputFile::~OutputFile() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

Result<void> OutputFile::write(std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(m_fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return Error{"cannot write " + m_shown + ": " + reason(errno)};
    }
    if (n == 0) {
      return Error{"cannot write " + m_shown + ": short write"};
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Result<void> OutputFile::close() {
  const int fd = m_fd;
  m_fd = -1;
  if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) {
    return Error{"cannot write " + m_shown + ": " + reason(errno)};
  }
  return {};
}

OutputTree::OutputTree(int root_fd, fs::path work, fs::path final_dir, mode_t file_mode)
    : m_root(root_fd), m_work(std::move(work)), m_final(std::move(final_dir)),
      m_file_mode(file_mode & 0777),
      m_dir_mode(static_cast<mode_t>((file_mode & 0777) | ((file_mode & 0444) >> 2) | 0700)) {}

OutputTree::OutputTree(OutputTree&& other) noexcept
    : m_root(other.m_root), m_work(std::move(other.m_work)), m_final(std::move(other.m_final)),
      m_file_mode(other.m_file_mode), m_dir_mode(other.m_dir_mode), m_committed(other.m_committed) {
  other.m_root = -1;
  other.m_committed = true; // the moved-from object owns nothing to remove
}

OutputTree::~OutputTree() {
  if (m_root >= 0) {
    ::close(m_root);
  }
  if (!m_committed && !m_work.empty()) {
    remove_tree_at(AT_FDCWD, m_work.string());
  }
}

Result<OutputTree> OutputTree::create_beside(const fs::path& final_dir, mode_t file_mode) {
  fs::path target = final_dir.lexically_normal();
  if (target.has_filename() == false) {
    target = target.parent_path();
  }
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return Error{"cannot write a snapshot to " + final_dir.string() + ": name a new directory"};
  }
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // Hidden and named after the target, so a leftover from a killed capture is recognisable.
  std::string tmpl = (parent / ("." + name + ".gpf-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Error{"cannot create a directory beside " + final_dir.string() + ": " + reason(errno)};
  }
  const int fd = ::open(tmpl.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    ::rmdir(tmpl.c_str());
    return Error{"cannot open " + tmpl + ": " + reason(err)};
  }
  OutputTree tree(fd, fs::path(tmpl), target, file_mode);
  if (::fchmod(fd, tree.m_dir_mode) != 0) {
    return Error{"cannot set the mode of " + tmpl + ": " + reason(errno)};
  }
  return tree;
}

std::string OutputTree::shown(std::string_view rel) const {
  return (m_final / fs::path(rel)).string();
}

// A descriptor of rel's parent directory (the caller closes it) and rel's last component in base.
Result<int> OutputTree::open_parent(std::string_view rel, bool create, std::string& base) const {
  bool ok = false;
  auto parts = components(rel, ok);
  if (!ok || parts.empty()) {
    return Error{"refusing to write " + std::string(rel) + ": not a path inside the snapshot"};
  }
  base = parts.back();
  parts.pop_back();
  int fd = ::fcntl(m_root, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    return Error{"cannot write " + shown(rel) + ": " + reason(errno)};
  }
  for (const auto& part : parts) {
    int next = open_dir_at(fd, part);
    if (next < 0 && errno == ENOENT && create) {
      if (::mkdirat(fd, part.c_str(), m_dir_mode) != 0 && errno != EEXIST) {
        const int err = errno;
        ::close(fd);
        return Error{"cannot create a directory for " + shown(rel) + ": " + reason(err)};
      }
      next = open_dir_at(fd, part);
      if (next >= 0 && ::fchmod(next, m_dir_mode) != 0) {
        const int err = errno;
        ::close(next);
        ::close(fd);
        return Error{"cannot set the mode of a directory for " + shown(rel) + ": " + reason(err)};
      }
    }
    if (next < 0) {
      const int err = errno;
      ::close(fd);
      if (err == ELOOP || err == ENOTDIR) {
        return Error{"refusing to write " + shown(rel) + ": " + part +
                     " on its way is a link or not a directory"};
      }
      return Error{"cannot write " + shown(rel) + ": " + reason(err)};
    }
    ::close(fd);
    fd = next;
  }
  return fd;
}

Result<void> OutputTree::make_dirs(std::string_view rel) {
  std::string base;
  auto parent = open_parent(rel, true, base);
  if (!parent) {
    return parent.error();
  }
  // rel itself too (open_parent makes only the directories on its way); an existing entry must
  // be a directory, never a planted link
  if (::mkdirat(*parent, base.c_str(), m_dir_mode) != 0 && errno != EEXIST) {
    const int err = errno;
    ::close(*parent);
    return Error{"cannot create the directory " + shown(rel) + ": " + reason(err)};
  }
  const int dir = open_dir_at(*parent, base);
  const int err = dir < 0 ? errno : (::fchmod(dir, m_dir_mode) != 0 ? errno : 0);
  if (dir >= 0) {
    ::close(dir);
  }
  ::close(*parent);
  if (err != 0) {
    return Error{"refusing to use " + shown(rel) + ": " + reason(err)};
  }
  return {};
}

Result<OutputFile> OutputTree::create(std::string_view rel) {
  std::string base;
  auto parent = open_parent(rel, true, base);
  if (!parent) {
    return parent.error();
  }
  const int dir = *parent;
  const auto open_new = [&] {
    return ::openat(dir, base.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    m_file_mode);
  };
  int fd = open_new();
  if (fd < 0 && errno == EEXIST) {
    // The private directory holds only what this capture made: a regular file there is ours
    // (the same path captured twice); anything else was planted.
    struct stat st {};
    if (::fstatat(dir, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        ::unlinkat(dir, base.c_str(), 0) == 0) {
      fd = open_new();
    } else {
      ::close(dir);
      return Error{"refusing to write " + shown(rel) +
                   ": something that is not this capture's file is there"};
    }
  }
  const int err = errno;
  ::close(dir);
  if (fd < 0) {
    return Error{"cannot write " + shown(rel) + ": " + reason(err)};
  }
  OutputFile file(fd, shown(rel));
  if (::fchmod(fd, m_file_mode) != 0) {
    return Error{"cannot set the mode of " + shown(rel) + ": " + reason(errno)};
  }
  return file;
}

Result<void> OutputTree::write(std::string_view rel, std::string_view data) {
  auto file = create(rel);
  if (!file) {
    return file.error();
  }
  OutputFile f = std::move(file).value();
  TRY(f.write(data));
  return f.close();
}

Result<void> OutputTree::make_link(std::string_view rel, const std::string& target) {
  std::string base;
  auto parent = open_parent(rel, true, base);
  if (!parent) {
    return parent.error();
  }
  const int dir = *parent;
  int rc = ::symlinkat(target.c_str(), dir, base.c_str());
  if (rc != 0 && errno == EEXIST) {
    // A placeholder this capture made (an empty file or directory) gives way to the link.
    struct stat st {};
    if (::fstatat(dir, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
        ::unlinkat(dir, base.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) == 0) {
      rc = ::symlinkat(target.c_str(), dir, base.c_str());
    } else {
      errno = EEXIST;
    }
  }
  const int err = errno;
  ::close(dir);
  if (rc != 0) {
    return Error{"cannot create the link " + shown(rel) + ": " + reason(err)};
  }
  return {};
}

bool OutputTree::exists(std::string_view rel) const {
  std::string base;
  auto parent = open_parent(rel, false, base);
  if (!parent) {
    return false;
  }
  struct stat st {};
  const bool found = ::fstatat(*parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  ::close(*parent);
  return found;
}

bool OutputTree::through_link(std::string_view rel) const {
  bool ok = false;
  const auto parts = components(rel, ok);
  int fd = ::fcntl(m_root, F_DUPFD_CLOEXEC, 0);
  bool link = !ok || fd < 0;
  for (const auto& part : parts) {
    if (link) {
      break;
    }
    struct stat st {};
    if (::fstatat(fd, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      break; // not there yet: nothing on the way is a link
    }
    if (S_ISLNK(st.st_mode)) {
      link = true;
      break;
    }
    const int next = open_dir_at(fd, part);
    ::close(fd);
    fd = next;
    link = fd < 0;
  }
  if (fd >= 0) {
    ::close(fd);
  }
  return link;
}

bool is_replaceable_snapshot(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  struct stat st {};
  const bool record =
      ::fstatat(fd, "capture.json", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return record;
  }
  bool empty = true;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      empty = false;
      break;
    }
  }
  ::closedir(d);
  return record || empty;
}

Result<void> OutputTree::commit(bool replace) {
  const std::string work = m_work.string();
  const std::string target = m_final.string();
  if (::rename(work.c_str(), target.c_str()) == 0) {
    m_committed = true;
    return {};
  }
  const int err = errno;
  if (err == ENOTDIR) {
    return Error{target + " is not a directory (a link or a file is there); nothing was written"};
  }
  if (err != ENOTEMPTY && err != EEXIST) {
    return Error{"cannot rename the capture onto " + target + ": " + reason(err)};
  }
  if (!replace) {
    return Error{target + " is not empty (use --force to replace a previous snapshot)"};
  }
  if (!is_replaceable_snapshot(m_final)) {
    return Error{target +
                 " is not a previous snapshot (no capture.json): --force replaces only a snapshot"};
  }
  // Swapped in one step: a reader sees the old snapshot or the new one, never a mix.
  if (::renameat2(AT_FDCWD, work.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0) {
    return Error{"cannot replace " + target + ": " + reason(errno)};
  }
  m_committed = true;
  // The old snapshot now sits at the private name; it goes, without following any link in it.
  if (!remove_tree_at(AT_FDCWD, work)) {
    return Error{"replaced " + target +
                 ", but the previous snapshot could not be removed completely from " + work};
  }
  return {};
}

bool remove_tree_at(int dir_fd, const std::string& name, int depth) {
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT;
  }
  if (!S_ISDIR(st.st_mode)) {
    return ::unlinkat(dir_fd, name.c_str(), 0) == 0;
  }
  if (depth > k_max_depth) {
    return false;
  }
  const int fd = open_dir_at(dir_fd, name);
  if (fd < 0) {
    return false;
  }
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return false;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      names.emplace_back(e->d_name);
    }
  }
  bool all = true;
  for (const auto& n : names) {
    all = remove_tree_at(::dirfd(d), n, depth + 1) && all;
  }
  ::closedir(d);
  return ::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) == 0 && all;
}

} // namespace gpf
