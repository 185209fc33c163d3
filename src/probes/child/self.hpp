#pragma once
// This process's own state, read from /proc/self: no fact of the checked host (a snapshot has
// nothing to stand in for it), so it does not go through the Host (source_hygiene_test.cpp).
#include <sys/types.h>

#include <vector>

namespace gpf::child {

// This process's children, from /proc/self/task/*/children (one pid list per thread; an adopted
// orphan is listed under the thread that adopted it). Empty where the kernel lacks the file.
std::vector<pid_t> own_children();

} // namespace gpf::child
