#pragma once
namespace gpf {
inline constexpr const char* k_tool_name = "gpu-preflight";
inline constexpr const char* k_tool_version = "0.1.0";
} // namespace gpf
