#include "probes/child/library.hpp"

#include <link.h>

#include <filesystem>
#include <system_error>

namespace gpf::child {

std::string loaded_library_path(void* handle) {
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return {};
  }
  std::error_code ec;
  auto real = std::filesystem::canonical(map->l_name, ec);
  return ec ? std::string(map->l_name) : real.string();
}

} // namespace gpf::child
