#pragma once
// The exit-code contract every command keeps: 0 ready, 1 not ready, 2 the checker's own failure
// (never a node verdict); exec adds 127/126 when the command cannot be started.
namespace gpf {

inline constexpr int k_exit_ready = 0;
inline constexpr int k_exit_not_ready = 1;
inline constexpr int k_exit_error = 2;
inline constexpr int k_exit_cannot_execute = 126;
inline constexpr int k_exit_not_found = 127;

} // namespace gpf
