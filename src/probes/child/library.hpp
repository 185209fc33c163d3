#pragma once
// Loading a driver library in a child (libcuda, libnvidia-ml): dlopen, then one
// {symbol, required, bind} row per entry point, bound into a typed struct of function pointers.
// A missing required symbol makes the library unusable; a missing optional one skips one
// measurement. Runs in child processes only (runner.hpp). Header-only but for
// loaded_library_path, so that the fake drivers can share the API declarations.
#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gpf::child {

// The file a dlopen handle refers to, symlinks resolved ("" when the loader cannot say). For the
// children's "which library did the loader pick" event.
std::string loaded_library_path(void* handle);

template <class Api> struct EntryPoint {
  std::string_view symbol;
  bool required;
  void (*bind)(Api& api, void* address);
};

inline constexpr bool k_required = true;
inline constexpr bool k_optional = false;

template <class MemberPointer> struct member_owner;
template <class Owner, class T> struct member_owner<T Owner::*> { using type = Owner; };

// Stores a dlsym address in the typed member; memcpy because ISO C++ has no object-to-function
// pointer cast (POSIX guarantees the representation is the same).
template <auto Member>
void bind_entry(typename member_owner<decltype(Member)>::type& api, void* address) {
  using Fn = std::remove_reference_t<decltype(api.*Member)>;
  static_assert(sizeof(Fn) == sizeof(void*));
  Fn fn = nullptr;
  std::memcpy(&fn, &address, sizeof fn);
  api.*Member = fn;
}

template <class Api> struct LoadedLibrary {
  Api api{};
  std::string path; // the file the loader picked, symlinks resolved
  std::vector<std::string> missing_required;
  std::vector<std::string> missing_optional;
};

template <class Api> struct LoadResult {
  std::unique_ptr<LoadedLibrary<Api>> loaded; // null when dlopen failed
  std::string error;                          // dlerror() text
};

// dlopen(library) with the loader's normal search when library has no '/', then every entry
// point of the table. Never throws.
template <class Api>
LoadResult<Api> load_library(const std::string& library,
                             const std::vector<EntryPoint<Api>>& table) {
  LoadResult<Api> result;
  ::dlerror();
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    result.error = why ? why : library + ": dlopen failed";
    return result;
  }
  auto loaded = std::make_unique<LoadedLibrary<Api>>();
  loaded->path = loaded_library_path(handle);
  for (const auto& entry : table) {
    void* address = ::dlsym(handle, std::string(entry.symbol).c_str());
    if (address == nullptr) {
      (entry.required ? loaded->missing_required : loaded->missing_optional)
          .emplace_back(entry.symbol);
      continue;
    }
    entry.bind(loaded->api, address);
  }
  result.loaded = std::move(loaded);
  return result;
}

} // namespace gpf::child
