// libFuzzer target: the whole streaming kernel-log scanner.
// Properties: no crash; the facts do not depend on how the bytes arrive in chunks (the scanner's
// contract); their JSON renders (valid UTF-8, else nlohmann throws).
#include "fuzz_support.hpp"

#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/report/log_json.hpp"

GPF_FUZZ_TARGET(log_scanner) {
  if (size == 0) {
    return 0;
  }
  // The first byte picks the chunk size, the rest is the log.
  const std::size_t chunk = 1 + data[0] % 61;
  const auto text = gpf::fuzz::as_text(data + 1, size - 1);
  const auto whole = gpf::scan_kernel_log(text);
  gpf::KernelLogScanner scanner;
  for (std::size_t at = 0; at < text.size(); at += chunk) {
    scanner.feed(text.substr(at, chunk));
  }
  const auto pieces = scanner.finish();
  const auto a = gpf::log_facts_json(whole).dump();
  const auto b = gpf::log_facts_json(pieces).dump();
  gpf::fuzz::require(a == b, "the same facts whatever the chunking");
  return 0;
}
