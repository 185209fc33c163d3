// own_children (self.hpp).
#include "probes/child/self.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace gpf::child {

std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (long pid = 0; in >> pid;) {
      out.push_back(static_cast<pid_t>(pid));
    }
  }
  return out;
}

} // namespace gpf::child
