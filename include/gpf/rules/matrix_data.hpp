#pragma once
// The data files under data/ (the compatibility matrix), compiled into the binary by
// cmake/embed_data.cmake as raw string literals.
#include <optional>
#include <span>
#include <string_view>

namespace gpf {

struct EmbeddedFile {
  std::string_view name; // "cuda_toolkit_driver.json"
  std::string_view text;
};

std::span<const EmbeddedFile> embedded_data_files();

// The text of one embedded file; nullopt when no file has that name.
std::optional<std::string_view> embedded_data(std::string_view name);

} // namespace gpf
