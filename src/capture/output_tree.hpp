#pragma once
// Where `snapshot -o DIR` writes, safely as root: a private directory made beside DIR (0700),
// every entry created relative to a directory descriptor with O_NOFOLLOW|O_EXCL, never through a
// link, then renamed onto DIR whole. Until commit() succeeds the private directory is removed
// again (on error, on destruction), so a failed capture leaves nothing half-written behind.
#include "gpf/util/result.hpp"

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace gpf {

// One file being written in an OutputTree; every write's result is checked.
class OutputFile {
public:
  OutputFile(int fd, std::string shown) : m_fd(fd), m_shown(std::move(shown)) {}
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();
  // Error "cannot write DIR/rel: reason" on a short or failed write (a full disk).
  Result<void> write(std::string_view data);
  // Error when the close reports a deferred write error.
  Result<void> close();

private:
  int m_fd = -1;
  std::string m_shown;
};

class OutputTree {
public:
  // Error when the private directory beside `final_dir` cannot be made. Files get file_mode,
  // directories file_mode plus search permission wherever it grants read.
  static Result<OutputTree> create_beside(const std::filesystem::path& final_dir, mode_t file_mode);
  OutputTree(OutputTree&& other) noexcept;
  OutputTree& operator=(OutputTree&&) = delete;
  ~OutputTree();

  // Makes rel (and its parents) as directories; error when a component is a link or not a
  // directory.
  Result<void> make_dirs(std::string_view rel);
  // Creates rel with exactly data. A regular file this capture already wrote there is replaced;
  // a link or anything else found there is an error (it was planted).
  Result<void> write(std::string_view rel, std::string_view data);
  Result<OutputFile> create(std::string_view rel);
  // A symbolic link rel -> target (not followed, never written through).
  Result<void> make_link(std::string_view rel, const std::string& target);
  // Whether anything (a link included) is at rel.
  bool exists(std::string_view rel) const;
  // Whether reaching directory rel passes a symbolic link inside the tree.
  bool through_link(std::string_view rel) const;

  // Renames the private directory onto final_dir. Without replace, final_dir must be absent or an
  // empty directory; with replace, an existing previous snapshot (it holds capture.json) is swapped
  // out atomically and removed. Error (and the capture removed) otherwise.
  Result<void> commit(bool replace);

  const std::filesystem::path& work_dir() const { return m_work; }
  const std::filesystem::path& final_dir() const { return m_final; }

private:
  OutputTree(int root_fd, std::filesystem::path work, std::filesystem::path final_dir,
             mode_t file_mode);
  Result<int> open_parent(std::string_view rel, bool create, std::string& base) const;
  std::string shown(std::string_view rel) const;

  int m_root = -1;
  std::filesystem::path m_work;
  std::filesystem::path m_final;
  mode_t m_file_mode = 0600;
  mode_t m_dir_mode = 0700;
  bool m_committed = false;
};

// Whether a directory with this name holds a previous snapshot (capture.json) or nothing at all.
bool is_replaceable_snapshot(const std::filesystem::path& dir);

// Removes the tree at dir_fd/name without following any link in it; false when something stayed.
bool remove_tree_at(int dir_fd, const std::string& name, int depth = 0);

} // namespace gpf
