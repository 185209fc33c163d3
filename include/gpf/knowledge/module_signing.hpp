#pragma once
// Where a host keeps the certificate its module builds are signed with, as data with a source per
// row (docs/sources.md#module-signing-and-secure-boot): the certificate to enrol as a Machine Owner
// Key (`mokutil --import <path>`) when the kernel refuses an unsigned NVIDIA module.
#include <span>
#include <string_view>

namespace gpf {

struct SigningKeyRow {
  std::string_view path;   // root-relative
  std::string_view signer; // who signs modules with it
  std::string_view source;
};

// In the order a remedy prefers them: the first one a host has is named.
std::span<const SigningKeyRow> signing_key_table();

// The row of a root-relative path, or nullptr.
const SigningKeyRow* find_signing_key(std::string_view path);

} // namespace gpf
