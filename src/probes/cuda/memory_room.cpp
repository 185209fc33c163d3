// The checker's memory cgroup's room (memory_room.hpp): the cgroup and each of its ancestors may
// set a limit; the smallest room left among them is what a new allocation can have.
#include "memory_room.hpp"

#include "gpf/util/text.hpp"

#include <fmt/format.h>

namespace gpf::cuda {
namespace {

constexpr std::size_t k_small = 4096;

std::optional<std::uint64_t> read_number(const Host& host, const std::string& path) {
  auto content = host.read_file(path, k_small);
  if (!content) {
    return std::nullopt;
  }
  const auto text = trim(content->data);
  if (text == "max") {
    return std::nullopt;
  }
  const auto value = parse_uint(text);
  return value ? std::optional<std::uint64_t>(*value) : std::nullopt;
}

} // namespace

std::optional<CgroupPath> parse_self_cgroup(std::string_view text) {
  std::optional<CgroupPath> v1;
  for (const auto line : split_lines(text)) {
    // hierarchy-ID:controller-list:cgroup-path
    const auto first = line.find(':');
    const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) {
      continue;
    }
    const auto controllers = line.substr(first + 1, second - first - 1);
    const std::string path(trim(line.substr(second + 1)));
    if (path.empty() || path.front() != '/' || path.find("/..") != std::string::npos) {
      continue;
    }
    if (line.substr(0, first) == "0" && controllers.empty()) {
      return CgroupPath{true, path};
    }
    for (const auto c : split(controllers, ',')) {
      if (c == "memory") {
        v1 = CgroupPath{false, path};
      }
    }
  }
  return v1;
}

std::optional<MemoryRoom> cgroup_memory_room(const Host& host) {
  auto self = host.read_file("proc/self/cgroup", 64u << 10);
  if (!self) {
    return std::nullopt;
  }
  const auto cgroup = parse_self_cgroup(self->data);
  if (!cgroup) {
    return std::nullopt;
  }
  const std::string base = cgroup->v2 ? "sys/fs/cgroup" : "sys/fs/cgroup/memory";
  const std::string limit_file = cgroup->v2 ? "memory.max" : "memory.limit_in_bytes";
  const std::string usage_file = cgroup->v2 ? "memory.current" : "memory.usage_in_bytes";
  std::optional<MemoryRoom> room;
  // From the cgroup up to the root of the hierarchy as this process sees it.
  for (std::string path = cgroup->path;;) {
    const std::string dir = base + (path == "/" ? std::string() : path);
    if (const auto limit = read_number(host, dir + "/" + limit_file)) {
      const std::uint64_t used = read_number(host, dir + "/" + usage_file).value_or(0);
      const std::uint64_t left = *limit > used ? *limit - used : 0;
      // v1 reports "no limit" as a page-rounded LONG_MAX: nothing a host could hold
      if (*limit < (std::uint64_t{1} << 60) && (!room || left < room->bytes)) {
        room = MemoryRoom{
            left, fmt::format("/{}/{}: {} ({} {})", dir, limit_file, *limit, usage_file, used)};
      }
    }
    if (path == "/") {
      break;
    }
    const auto slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
  return room;
}

} // namespace gpf::cuda
