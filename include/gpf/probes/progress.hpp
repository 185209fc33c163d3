#pragma once
// What the pipeline says before a stage that can take long (the live CUDA and NVML children, up to
// their deadline): "probing CUDA on 4 GPUs… (deadline 30 s)". The command line shows it on a
// terminal; nobody is told unless a listener is set.
#include <functional>
#include <string>

namespace gpf {

using ProgressFn = std::function<void(const std::string&)>;

// Sets the listener for this process (empty: none) and returns the previous one.
ProgressFn set_progress_listener(ProgressFn listener);
// Tells the listener, if there is one.
void report_progress(const std::string& text);

} // namespace gpf
