#include "probes/cuda/busy.hpp"

#include "gpf/probes/topology_parsers.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

namespace gpf::cuda {
namespace {

constexpr std::size_t k_max_fds = 1u
                                  << 20; // links read in all, so a huge process table stays bounded

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// The link target "/dev/nvidia3" -> 3; the control, UVM, modeset, caps and NVSwitch nodes are not a
// GPU. Compared without the leading slash: the target is text from the link, never a path opened.
std::optional<unsigned> gpu_minor(std::string_view target) {
  constexpr std::string_view prefix = "dev/nvidia";
  if (target.empty() || target.front() != '/') {
    return std::nullopt;
  }
  target.remove_prefix(1);
  if (!starts_with(target, prefix) || !all_digits(target.substr(prefix.size()))) {
    return std::nullopt;
  }
  return static_cast<unsigned>(parse_uint(target.substr(prefix.size())).value_or(0));
}

} // namespace

std::map<unsigned, std::vector<std::string>> gpu_holders(const Host& host) {
  std::map<unsigned, std::vector<std::string>> holders;
  auto pids = host.list_dir("proc");
  if (!pids) {
    return holders;
  }
  const std::string self = host.is_live() ? std::to_string(::getpid()) : std::string();
  std::size_t links = 0;
  for (const auto& pid : *pids) {
    if (!all_digits(pid) || pid == self) {
      continue;
    }
    auto fds = host.list_dir("proc/" + pid + "/fd");
    if (!fds) {
      continue;
    }
    std::vector<unsigned> held;
    for (const auto& fd : *fds) {
      if (++links > k_max_fds) {
        return holders;
      }
      auto target = host.read_link("proc/" + pid + "/fd/" + fd);
      if (!target) {
        continue;
      }
      if (const auto minor = gpu_minor(*target);
          minor && std::find(held.begin(), held.end(), *minor) == held.end()) {
        held.push_back(*minor);
      }
    }
    if (held.empty()) {
      continue;
    }
    std::string comm = "?";
    if (auto c = host.read_file("proc/" + pid + "/comm", 64)) {
      comm = std::string(trim(to_valid_utf8(c->data)));
    }
    if (nvidia_management_daemon(comm)) {
      continue;
    }
    for (const unsigned minor : held) {
      holders[minor].push_back(fmt::format("{} ({})", pid, comm));
    }
  }
  return holders;
}

} // namespace gpf::cuda
