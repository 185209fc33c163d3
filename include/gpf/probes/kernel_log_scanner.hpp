#pragma once
// The streaming kernel-log scanner (docs/kernel-log.md). Bytes go in chunk by chunk, in any split;
// memory stays bounded whatever the log's size: a fixed read buffer, lines cut at 64 KiB, a cap on
// distinct events (repeats only raise a count). A fixed-string prefilter picks the few lines that
// can matter; only those (and a timestamp sample every 64 KiB) are parsed.
#include "gpf/facts/log_facts.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

namespace gpf {

// Lines longer than this are cut: the rest of the line is not examined.
inline constexpr std::size_t k_log_max_line = 64 * 1024;
// At most this many distinct events are kept per boot list; later ones are only counted.
inline constexpr std::size_t k_log_max_events = 512;

class KernelLogScanner {
public:
  KernelLogScanner();
  ~KernelLogScanner();
  KernelLogScanner(const KernelLogScanner&) = delete;
  KernelLogScanner& operator=(const KernelLogScanner&) = delete;

  // Where to put the next bytes (at least 64 KiB); call commit(n) after writing n of them.
  std::span<char> room();
  void commit(std::size_t n);
  // Copies bytes in through room()/commit().
  void feed(std::string_view bytes);
  // Ends the input (a last line without '\n' counts) and returns what was found. source and
  // read_error are left for the caller. Call once.
  LogFacts finish();

private:
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

// Scans a whole log held in memory (tests, small inputs).
LogFacts scan_kernel_log(std::string_view text);

} // namespace gpf
