// Probe "kernel-log": the kernel log through the Host — the first readable of the ring buffer
// (live /dev/kmsg or klogctl, a snapshot's dmesg.txt), the systemd journal and the syslog files,
// or --dmesg FILE / '-' — streamed through the scanner in pieces, so a log of any size
// reads in bounded memory. A log that cannot be read is an error with the OS reason, never a pass.
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/probes/probes.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpf {

// The most of a kernel log one check scans (and `snapshot` keeps): far above any ring buffer or
// a year of `journalctl -k`, so only a runaway input reaches it.
constexpr std::size_t k_kernel_log_cap = 256u << 20;

ProbeStatus probe_kernel_log(const Host& host, const ProbeOptions& options, Facts& facts) {
  ProbeStatus status;
  std::vector<LogSourceAttempt> attempts;
  auto opened = options.dmesg_file ? host.open_user_file(*options.dmesg_file)
                                   : host.open_kernel_log(&attempts);
  const auto record_sources = [&] {
    facts.log.sources.clear();
    for (const auto& a : attempts) {
      facts.log.sources.push_back({a.source,
                                   a.used            ? "used"
                                   : !a.found        ? "absent"
                                   : a.error.empty() ? "passed over"
                                                     : "error",
                                   a.error});
    }
  };
  if (!opened) {
    record_sources();
    facts.log.source = options.dmesg_file
                           ? (*options.dmesg_file == "-" ? "stdin" : *options.dmesg_file)
                       : host.is_live() ? "live kernel log"
                                        : "dmesg.txt";
    facts.log.read_error = opened.error().message;
    return status.fail("kernel log not readable: " + facts.log.read_error);
  }
  const std::unique_ptr<ByteStream> stream = std::move(opened).value();
  if (!stream) {
    record_sources();
    return status.skip("the snapshot has no kernel log (no dmesg.txt, systemd journal or /var/log/"
                       "kern.log, messages, syslog; pass --dmesg FILE to check a saved one)");
  }
  KernelLogScanner scanner;
  std::string read_error;
  std::size_t total = 0;
  for (;;) {
    char probe_byte = 0;
    if (const auto more = total >= k_kernel_log_cap ? stream->read(&probe_byte, 1)
                                                    : Result<std::size_t>(std::size_t{0});
        more && *more != 0) {
      // a log this long is not a ring buffer (a sparse file, a device): stop, and say so
      read_error = fmt::format("cut after {} MiB (the kernel-log read cap); later lines were not "
                               "scanned",
                               k_kernel_log_cap >> 20);
      break;
    }
    if (total >= k_kernel_log_cap) {
      break; // exactly the cap: nothing was left
    }
    const auto room = scanner.room();
    auto n = stream->read(room.data(), std::min(room.size(), k_kernel_log_cap - total));
    if (!n) {
      read_error = n.error().message;
      break;
    }
    if (*n == 0) {
      break;
    }
    total += *n;
    scanner.commit(*n);
  }
  facts.log = scanner.finish();
  facts.log.source = stream->name();
  record_sources();
  if (!read_error.empty()) {
    facts.log.read_error = read_error;
    status.fail("kernel log read stopped part-way: " + read_error);
  }
  return status;
}

namespace {
const ProbeRegistration k_row{{"kernel-log", "kernel log", 500, probe_kernel_log}};
} // namespace

} // namespace gpf
