#pragma once
// A directory under /tmp for one test, removed with everything in it when the test ends; helpers
// to lay out a snapshot root in it.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpf::test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "gpf") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  void write(const std::string& rel, const std::string& data) const {
    std::filesystem::create_directories((path / rel).parent_path());
    std::ofstream(path / rel, std::ios::binary) << data;
  }
  void link(const std::string& rel, const std::string& target) const {
    std::filesystem::create_directories((path / rel).parent_path());
    std::filesystem::create_symlink(target, path / rel);
  }
};

// A file under /tmp holding text (a rules file, say), removed when the test ends.
struct TempFile {
  TempDir dir;
  std::filesystem::path path;
  explicit TempFile(const std::string& text, const std::string& name = "rules.json")
      : path(dir.path / name) {
    dir.write(name, text);
  }
};

} // namespace gpf::test
