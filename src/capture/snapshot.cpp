#include "gpf/capture/snapshot.hpp"

#include "output_tree.hpp"

#include "gpf/facts/cuda_json.hpp"
#include "gpf/facts/nccl_json.hpp"
#include "gpf/facts/nvml_json.hpp"
#include "gpf/knowledge/process_names.hpp"
#include "gpf/util/clock.hpp"
#include "gpf/util/credentials.hpp"
#include "gpf/util/text.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>

namespace gpf {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_capture_record = "capture.json";
// The target a snapshot gives a process's descriptor that is no NVIDIA device node (a file the
// process has open, a socket, a pipe) and an executable that is no NVIDIA daemon: the checks need
// only that it is none (docs/snapshot-format.md).
constexpr std::string_view k_descriptor_placeholder = "not-kept";

// What a capture makes after every file is written, so that nothing is ever written through a
// link or blocked by a placeholder.
struct Deferred {
  std::vector<std::string>
      links; // kept as links (sysfs topology; a library's soname link names its version)
  std::vector<std::string>
      presences;                   // only presence asked for (a driver library): an empty stand-in
  std::vector<std::string> listed; // directories whose entry names were read
  std::set<std::string> accessed;  // every path a probe asked for
};

// proc/<pid>/fd/<n>: a process's open file.
bool is_descriptor_link(std::string_view path) {
  const auto parts = split(path, '/');
  return parts.size() == 4 && parts[0] == "proc" && parts[2] == "fd";
}

// What a snapshot keeps of a link's target: a process's open file only where the checks need it
// (an NVIDIA device node, known by its device number 195:N, not by its name); any other file a
// process holds open (/home/alice/projects/llm-secret/shard-0001.bin) is the fixed placeholder,
// --redact or not. Likewise the executable of a process (proc/<pid>/exe): kept only where it is
// one of NVIDIA's daemons (the gpu-processes probe excuses those holders by it).
std::string kept_target(const Host& host, const std::string& path, std::string target) {
  if (is_descriptor_link(path)) {
    const NodeInfo node = host.stat_node(path);
    const bool nvidia_node = node.type == NodeType::char_device && node.major == 195u;
    return nvidia_node ? target : std::string(k_descriptor_placeholder);
  }
  const auto parts = split(path, '/');
  const bool executable = parts.size() == 3 && parts[0] == "proc" && parts[2] == "exe";
  if (executable && nvidia_daemon_executable(target) == nullptr) {
    return std::string(k_descriptor_placeholder); // only a daemon's executable is needed
  }
  return target;
}

Result<void> make_deferred(const Host& host, OutputTree& out, const Deferred& d,
                           CaptureReport& report) {
  for (const auto& path : d.links) {
    auto target = host.read_link(path);
    if (!target) {
      continue;
    }
    target = kept_target(host, path, std::move(*target));
    if (out.through_link(fs::path(path).parent_path().string())) {
      report.unreadable.push_back(
          path + ": link not recreated: its directory is reached through another link");
      continue;
    }
    if (auto made = out.make_link(path, *target); !made) {
      return made;
    }
    report.captured.push_back(path);
  }
  for (const auto& path : d.presences) {
    if (out.exists(path) || out.through_link(fs::path(path).parent_path().string())) {
      continue; // already kept (as a link or a copy)
    }
    TRY(out.write(path, ""));
    report.captured.push_back(path);
  }
  // A listing is a read too: entries no probe looked at become empty placeholders, so that the
  // replay lists the same names (firmware files, NVSwitch nodes, IOMMU units, processes). An entry
  // a probe did look at replays as what the probe saw (copied, or absent when it was not there);
  // a directory it looked into without keeping anything (a PCI device whose vendor file is
  // missing) stays as an empty directory, so the replay still lists it.
  for (const auto& dir : d.listed) {
    auto names = host.list_dir(dir);
    if (!names || out.through_link(dir)) {
      continue;
    }
    for (const auto& name : *names) {
      const std::string at = dir + "/" + name;
      if (out.exists(at)) {
        continue;
      }
      // something below it was asked for (its vendor file, found missing): a directory
      const auto below = d.accessed.lower_bound(at + "/");
      const bool looked_into = below != d.accessed.end() && below->starts_with(at + "/");
      if ((looked_into || d.accessed.count(at) != 0) && host.is_directory(at)) {
        TRY(out.make_dirs(at));
      } else if (d.accessed.count(at) == 0) {
        TRY(out.write(at, ""));
      }
    }
  }
  return {};
}

// A kernel log cut into pieces for a line-wise pass (the credential scrubber, the redactor) in
// linear time and bounded memory, whatever its shape: whole lines where they end within
// k_max_run bytes; a longer run without a newline at its last blank; a run of more than
// k_max_run bytes without any blank kept to its first k_max_run bytes (the kernel-log scanner
// examines only the first 64 KiB of a line) and the rest dropped up to the next blank or newline,
// which cut() reports. Each byte is searched a bounded number of times: a 250 MB log without a
// newline is no longer a quadratic search of what is pending.
class LinePieces {
public:
  static constexpr std::size_t k_max_run = 1u << 20;

  template <class Put> void feed(std::string_view chunk, Put&& put) {
    if (m_skipping) {
      const auto end = chunk.find_first_of(k_blanks);
      if (end == std::string_view::npos) {
        return;
      }
      chunk.remove_prefix(end);
      m_skipping = false;
    }
    const std::size_t before = m_pending.size();
    m_pending.append(chunk);
    if (const auto nl = std::string_view(m_pending).substr(before).rfind('\n');
        nl != std::string_view::npos) {
      put(std::string_view(m_pending).substr(0, before + nl + 1));
      m_pending.erase(0, before + nl + 1);
    }
    if (m_pending.size() <= k_max_run) {
      return;
    }
    if (const auto blank = m_pending.find_last_of(k_blanks); blank != std::string::npos) {
      put(std::string_view(m_pending).substr(0, blank + 1));
      m_pending.erase(0, blank + 1);
    }
    if (m_pending.size() > k_max_run) {
      put(std::string_view(m_pending).substr(0, k_max_run));
      m_pending.clear();
      m_skipping = true;
      m_cut = true;
    }
  }

  template <class Put> void finish(Put&& put) {
    if (!m_pending.empty()) {
      put(std::string_view(m_pending));
      m_pending.clear();
    }
  }

  bool cut() const { return m_cut; }

private:
  static constexpr std::string_view k_blanks = " \t\n\r\f\v";
  std::string m_pending;
  bool m_skipping = false;
  bool m_cut = false;
};

// The kernel log the check scanned (the live /dev/kmsg or klogctl, --dmesg FILE, or the source
// snapshot's dmesg.txt) streamed into dmesg.txt, line by line through the redactor. A log that
// cannot be read is recorded in dmesg.error, so that the replay reports the same problem.
Result<void> copy_kernel_log(const Host& host, const ProbeOptions& probe,
                             const CaptureOptions& options, OutputTree& out, Redactor& redactor,
                             CaptureReport& report) {
  if (probe.dmesg_file && *probe.dmesg_file == "-") {
    report.unreadable.emplace_back(
        "dmesg.txt: the kernel log came from standard input, which the check has read; "
        "save it to a file and pass --dmesg FILE to keep it");
    return {};
  }
  auto opened = probe.dmesg_file ? host.open_user_file(*probe.dmesg_file) : host.open_kernel_log();
  if (!opened) {
    if (host.is_live() || probe.dmesg_file) {
      report.unreadable.push_back("dmesg.txt: " + opened.error().message);
      return out.write("dmesg.error", opened.error().message + "\n");
    }
    return {}; // a snapshot's own dmesg.error or unreadable dmesg.txt is copied with the other
               // files
  }
  if (!*opened) {
    return {}; // a snapshot without a kernel log
  }
  ByteStream& in = **opened;
  auto created = out.create("dmesg.txt");
  if (!created) {
    return created.error();
  }
  OutputFile file = std::move(created).value();
  std::string buffer(1u << 20, '\0');
  LinePieces pieces;
  std::size_t kept = 0;
  bool truncated = false;
  std::optional<Error> failed;
  const auto put = [&](std::string_view lines) {
    if (failed) {
      return;
    }
    if (options.redact) {
      redactor.learn(lines); // lines the learning pass did not see (a live log grows)
    }
    const std::string clean = without_credentials(lines); // "Kernel command line: ..."
    if (auto w = file.write(options.redact ? redactor.apply(clean) : clean); !w) {
      failed = w.error();
    }
  };
  for (;;) {
    auto got = in.read(buffer.data(), buffer.size());
    if (!got) {
      report.unreadable.push_back("dmesg.txt: reading " + in.name() +
                                  " stopped: " + got.error().message);
      break;
    }
    if (*got == 0 || failed) {
      break;
    }
    if (kept + *got > options.log_cap) {
      truncated = true;
      break;
    }
    kept += *got;
    pieces.feed(std::string_view(buffer.data(), *got), put);
  }
  pieces.finish(put);
  truncated = truncated || pieces.cut();
  if (failed) {
    return *failed;
  }
  TRY(file.close());
  report.captured.emplace_back("dmesg.txt");
  if (truncated) {
    report.truncated.emplace_back("dmesg.txt");
  }
  return {};
}

// --redact: every name the inputs show in a name position is learned before the first file is
// written, so that it is replaced in every file, also in those written before the one showing it.
// The inputs are read once more for this (each capped as when copied), not kept in memory.
void learn_names(const Host& host, const ProbeOptions& probe, const CaptureOptions& options,
                 const std::vector<HostAccess>& log, Redactor& redactor) {
  if (auto name = host.hostname()) {
    redactor.learn_host(*name);
  }
  for (const std::string_view var : {"USER", "LOGNAME", "SUDO_USER"}) {
    if (auto value = host.environment().get(var)) {
      redactor.learn_user(*value);
    }
  }
  for (const std::string_view var : {"HOME", "PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"}) {
    if (auto value = host.environment().get(var)) {
      redactor.learn(*value); // "/home/<user>/..."
    }
  }
  std::set<std::string> seen;
  for (const auto& access : log) {
    if (access.kind != HostAccess::Kind::file || !access.found || !access.error.empty() ||
        access.path == "dmesg.txt" || !seen.insert(access.path).second) {
      continue;
    }
    if (auto content = host.read_file(access.path, options.file_cap);
        content && content->data.find('\0') == std::string::npos) {
      redactor.learn(content->data);
    }
  }
  if (probe.dmesg_file && *probe.dmesg_file == "-") {
    return; // standard input was read by the check; nothing is copied either
  }
  auto opened = probe.dmesg_file ? host.open_user_file(*probe.dmesg_file) : host.open_kernel_log();
  if (!opened || !*opened) {
    return;
  }
  std::string buffer(1u << 20, '\0');
  LinePieces pieces;
  const auto learn = [&](std::string_view lines) { redactor.learn(lines); };
  for (std::size_t total = 0; total < options.log_cap;) {
    auto got = (*opened)->read(buffer.data(), std::min(buffer.size(), options.log_cap - total));
    if (!got || *got == 0) {
      break;
    }
    total += *got;
    pieces.feed(std::string_view(buffer.data(), *got), learn);
  }
  pieces.finish(learn);
}

// An existing non-empty target is refused, or with --force only a previous snapshot is replaced.
Result<void> check_target(const CaptureOptions& options) {
  struct stat st {};
  if (::lstat(options.out.c_str(), &st) != 0) {
    return {}; // made fresh
  }
  if (!S_ISDIR(st.st_mode)) {
    return Error{options.out.string() +
                 " exists and is not a directory (a link or a file): nothing was written"};
  }
  if (is_replaceable_snapshot(options.out)) {
    std::error_code ec;
    if (!options.force && !fs::is_empty(options.out, ec)) {
      return Error{options.out.string() +
                   " is not empty (use --force to replace a previous snapshot)"};
    }
    return {};
  }
  if (!options.force) {
    return Error{options.out.string() +
                 " is not empty (use --force to replace a previous snapshot)"};
  }
  return Error{options.out.string() +
               " is not a previous snapshot (no capture.json): --force replaces only a snapshot"};
}

void pause_for_test(const OutputTree& out) {
  if (g_capture_pause_hook != nullptr) {
    g_capture_pause_hook(out.work_dir());
  }
}

Result<CaptureReport> capture_into(Host& host, const ProbeOptions& probe_options,
                                   const CaptureOptions& options, OutputTree& out);

} // namespace

void (*g_capture_pause_hook)(const std::filesystem::path& work_dir) = nullptr;

bool snapshot_keeps_variable(std::string_view name) {
  // Exactly the variables the probes and rules read; anything else may hold a secret.
  static constexpr std::array<std::string_view, 10> k_read = {"CUDA_VISIBLE_DEVICES",
                                                              "CUDA_DEVICE_ORDER",
                                                              "CUDA_HOME",
                                                              "CUDA_INJECTION64_PATH",
                                                              "CUDA_LAUNCH_BLOCKING",
                                                              "NCCL_P2P_DISABLE",
                                                              "NCCL_SHM_DISABLE",
                                                              "LD_LIBRARY_PATH",
                                                              "PATH",
                                                              "CUDA_PATH"};
  if (names_a_secret(name)) {
    return false;
  }
  return std::find(k_read.begin(), k_read.end(), name) != k_read.end();
}

bool names_a_secret(std::string_view name) {
  return names_a_secret_variable(name);
}

std::string without_url_credentials(std::string_view value) {
  std::string out;
  std::size_t pos = 0;
  for (auto scheme = value.find("://"); scheme != std::string_view::npos;
       scheme = value.find("://", pos)) {
    const std::size_t authority = scheme + 3;
    const std::size_t authority_end =
        std::min(value.find_first_of("/?# \t\n;,\"'", authority), value.size());
    const auto authority_text = value.substr(authority, authority_end - authority);
    const auto at = authority_text.rfind('@');
    out.append(value.substr(pos, authority - pos));
    if (at != std::string_view::npos) {
      out += "REDACTED";
      pos = authority + at; // keeps "@host"
    } else {
      pos = authority;
    }
  }
  out.append(value.substr(pos));
  return out;
}

Result<CaptureReport> capture_snapshot(Host& host, const ProbeOptions& probe_options,
                                       const CaptureOptions& options) {
  // Refused before the probes run (they can take seconds); commit() checks again at the end.
  TRY(check_target(options));
  auto tree = OutputTree::create_beside(options.out, options.mode);
  if (!tree) {
    return tree.error();
  }
  OutputTree& out = tree.value();
  auto captured = capture_into(host, probe_options, options, out);
  if (!captured) {
    return Error{captured.error().message +
                 " (nothing was kept: the partial snapshot was removed)"};
  }
  TRY(out.commit(options.force));
  return captured;
}

namespace {

Result<CaptureReport> capture_into(Host& host, const ProbeOptions& probe_options,
                                   const CaptureOptions& options, OutputTree& out) {
  std::vector<HostAccess> log;
  host.record_into(&log);
  const Facts facts = collect_facts(host, probe_options);
  host.record_into(nullptr);
  pause_for_test(out);

  CaptureReport report;
  Redactor redactor;
  if (options.redact) {
    learn_names(host, probe_options, options, log, redactor);
  }
  nlohmann::ordered_json manifest = nlohmann::ordered_json::object();
  std::set<std::pair<int, std::string>> done;
  const auto keep = [&](std::string_view rel, std::string data) -> Result<void> {
    // binary files (PCI config space) carry no hostnames and must stay byte-exact; text never
    // keeps a credential (proc/cmdline), --redact or not
    if (data.find('\0') == std::string::npos) {
      // JSON (cuda.json, nccl.json, a source snapshot's devices.json) scrubbed string by string,
      // so that it stays JSON the replay can read
      data = std::string_view(rel).ends_with(".json") ? without_credentials_json(data)
                                                      : without_credentials(data);
      if (options.redact) {
        data = redactor.apply(data);
      }
    }
    auto written = out.write(rel, data);
    if (written) {
      report.captured.emplace_back(rel);
    }
    return written;
  };

  std::set<std::string> link_paths; // paths read as links (made as links after the files)
  for (const auto& access : log) {
    if (access.kind == HostAccess::Kind::link && access.found && access.error.empty()) {
      link_paths.insert(access.path);
    }
  }
  nlohmann::ordered_json fs_records = nlohmann::ordered_json::object();
  Deferred deferred; // links, presence stand-ins and listings: made after every file
  for (const auto& access : log) {
    // A node is looked at again even when the path was not found: a source snapshot's
    // devices.json may know it (an fd link whose target is outside that snapshot).
    if (!done.insert({static_cast<int>(access.kind), access.path}).second ||
        (!access.found && access.kind != HostAccess::Kind::filesystem &&
         access.kind != HostAccess::Kind::node)) {
      continue;
    }
    if (!access.error.empty()) {
      report.unreadable.push_back(access.path + ": " + access.error);
      continue;
    }
    if (access.path == "dmesg.txt" && access.kind == HostAccess::Kind::file) {
      continue; // streamed whole by copy_kernel_log, not cut at file_cap
    }
    switch (access.kind) {
    case HostAccess::Kind::file: {
      auto content = host.read_file(access.path, options.file_cap);
      if (!content) {
        report.unreadable.push_back(access.path + ": " + content.error().message);
        break;
      }
      if (content->truncated) {
        report.truncated.push_back(access.path);
      }
      TRY(keep(access.path, std::move(content->data)));
      break;
    }
    case HostAccess::Kind::directory:
      TRY(out.make_dirs(access.path));
      deferred.listed.push_back(access.path);
      break;
    case HostAccess::Kind::link:
      deferred.links.push_back(access.path);
      break;
    case HostAccess::Kind::presence:
      deferred.presences.push_back(access.path);
      break;
    case HostAccess::Kind::filesystem: {
      const auto space = host.filesystem_space(access.path);
      if (!space) {
        report.unreadable.push_back(access.path + ": " + space.error().message);
      } else if (!space->exists) {
        fs_records[access.path] = {{"exists", false}};
      } else if (space->recorded) {
        fs_records[access.path] = {{"size_bytes", space->size_bytes},
                                   {"available_bytes", space->available_bytes}};
      }
      break;
    }
    case HostAccess::Kind::node: {
      const NodeInfo info = host.stat_node(access.path);
      if (!info.exists()) {
        break;
      }
      // A node reached through a link that is kept as a link (proc/<pid>/fd/<n> -> /dev/nvidia3):
      // the link is the replay's file; devices.json alone carries the device number.
      if (link_paths.count(access.path) == 0) {
        TRY(out.write(access.path, ""));
        report.captured.push_back(access.path);
      }
      if (!info.stand_in) {
        nlohmann::ordered_json entry;
        entry["type"] = node_type_word(info.type);
        if (info.major && info.minor) {
          entry["major"] = *info.major;
          entry["minor"] = *info.minor;
        }
        if (info.mode) {
          entry["mode"] = fmt::format("{:04o}", *info.mode);
        }
        if (info.rw_access) {
          entry["rw_access"] = *info.rw_access;
        }
        manifest[access.path] = std::move(entry);
      }
      break;
    }
    }
  }

  TRY(copy_kernel_log(host, probe_options, options, out, redactor, report));
  if (!fs_records.empty()) {
    TRY(out.write("statvfs.json", fs_records.dump(2) + "\n"));
    report.captured.emplace_back("statvfs.json");
  }
  // The node's name (uname's live, the source snapshot's otherwise), so that a report judged from
  // the snapshot names the node it came from.
  if (auto name = host.hostname(); name && !name->empty()) {
    TRY(keep("proc/sys/kernel/hostname", *name + "\n"));
  }
  if (host.is_live()) {
    // The capture date, so end-of-life rules replay as of the day the snapshot was taken.
    if (auto today = host.today()) {
      const auto date =
          fmt::format("{:04}-{:02}-{:02}\n", static_cast<int>(today->year()),
                      static_cast<unsigned>(today->month()), static_cast<unsigned>(today->day()));
      TRY(keep("date", date));
    }
    if (auto release = host.kernel_release()) {
      TRY(keep("proc/sys/kernel/osrelease", *release + "\n"));
    } else {
      report.unreadable.push_back("kernel release: " + release.error().message);
    }
  }
  // What could not be read replays as the same error.
  nlohmann::ordered_json unreadable = nlohmann::ordered_json::object();
  for (const auto& access : log) {
    if (!access.error.empty()) {
      unreadable[to_valid_utf8(access.path)] = to_valid_utf8(access.error);
    }
  }
  if (!unreadable.empty()) {
    TRY(out.write("unreadable.json", unreadable.dump(2) + "\n"));
    report.captured.emplace_back("unreadable.json");
  }
  if (!manifest.empty()) {
    TRY(out.write("devices.json", manifest.dump(2) + "\n"));
    report.captured.emplace_back("devices.json");
  } else if (!host.manifest_error().empty()) {
    // keep a broken manifest as it is, so the replay reports the same error
    if (auto raw = host.read_file("devices.json", options.file_cap);
        raw && out.write("devices.json", raw->data)) {
      report.captured.emplace_back("devices.json");
    }
  }
  std::string environ_text;
  for (const auto& [name, value] : host.environment().vars()) {
    if (snapshot_keeps_variable(name)) {
      environ_text += name + "=" + without_url_credentials(value) + "\n";
    }
  }
  if (!environ_text.empty()) {
    TRY(keep("environ", environ_text));
  }

  // The live CUDA probe's result, so that --root replays it (docs/cuda-json.md). A snapshot's own
  // cuda.json was read through the host and is copied above like any other input.
  if (facts.cuda.ran && facts.cuda.source == "live") {
    TRY(keep("cuda.json",
             cuda_facts_json(facts.cuda)
                     .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
                 "\n"));
  }

  if (facts.nccl.ran && facts.nccl.source == "live") { // --nccl's result, replayed under --root
    TRY(keep("nccl.json",
             nccl_facts_json(facts.nccl)
                     .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
                 "\n"));
  }

  if (facts.nvml.ran && facts.nvml.source == "live") { // replayed under --root (nvml_probe.hpp)
    TRY(keep("nvml.json",
             nvml_facts_json(facts.nvml)
                     .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
                 "\n"));
  }

  for (const auto& access : log) {
    deferred.accessed.insert(access.path);
  }
  TRY(make_deferred(host, out, deferred, report));
  nlohmann::ordered_json record;
  record["tool"] = "gpu-preflight";
  record["source"] = host.is_live()   ? std::string("live host")
                     : options.redact ? to_valid_utf8(redactor.apply(host.root().string()))
                                      : to_valid_utf8(host.root().string());
  record["captured_at"] = rfc3339_utc(std::chrono::system_clock::now());
  record["redacted"] = options.redact;
  record["captured"] = report.captured;
  record["unreadable"] = nlohmann::ordered_json::array();
  for (const auto& u : report.unreadable) {
    record["unreadable"].push_back(to_valid_utf8(options.redact ? redactor.apply(u) : u));
  }
  record["truncated"] = report.truncated;
  TRY(out.write(k_capture_record,
                record.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
                    "\n"));
  return report;
}

} // namespace

} // namespace gpf
