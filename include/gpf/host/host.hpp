#pragma once
// The one rooted door to the host: every probe reads through a Host (a test enforces it), so a
// snapshot replays exactly what a live run reads: files by root-relative path
// ("proc/driver/nvidia/version", never "/proc/..."), device-node metadata, the kernel release and
// the job environment. Live: root "/", uname(2), the process
// environment. Snapshot (--root DIR): DIR laid out like the host, see docs/snapshot-format.md;
// under a snapshot nothing of the real host is read.
#include "gpf/util/result.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

// Reads larger than this are cut (and flagged) so a garbage or huge file cannot exhaust memory.
inline constexpr std::size_t k_default_read_cap = 1 << 20;

struct FileContent {
  std::string data;
  bool truncated = false; // the file was longer than the cap
};

enum class NodeType { missing, char_device, block_device, regular_file, directory, other };

// "char", "block", "file", "dir", "missing", "other": the words of devices.json and the JSON
// report.
std::string_view node_type_word(NodeType type);
std::optional<NodeType> parse_node_type_word(std::string_view word);

// The root-relative path a symbolic link at link_path points to: its target joined to the link's
// directory and normalised ("sys/bus/pci/devices/0000:01:00.0" + "../../../devices/pci0000:00/..."
// -> "sys/devices/pci0000:00/..."). An absolute target names a path inside the root. nullopt when
// the target climbs above the root.
std::optional<std::string> join_link_target(std::string_view link_path, std::string_view target);

// What the host says about a device node. A snapshot's plain file standing in for a node has
// type regular_file and stand_in = true: its major/minor are unknown, not wrong.
struct NodeInfo {
  NodeType type = NodeType::missing;
  bool stand_in = false;
  std::optional<unsigned> major;
  std::optional<unsigned> minor;
  std::optional<unsigned> mode;  // permission bits, e.g. 0666
  std::optional<bool> rw_access; // can the current user open it read-write; nullopt = unknown
  std::string error;             // stat error other than "no such file"
  bool exists() const { return type != NodeType::missing; }
};

// Size of a filesystem (statvfs(3)), or why there is none.
struct FsSpace {
  bool exists = true;   // false: the path does not exist
  bool recorded = true; // false: a snapshot whose statvfs.json has no record of the path (unknown)
  std::uint64_t size_bytes = 0;
  std::uint64_t available_bytes = 0; // for unprivileged users
};

// The environment to judge: the process environment live, the snapshot's `environ` file otherwise.
class Environment {
public:
  Environment() = default;
  explicit Environment(std::map<std::string, std::string> vars) : m_vars(std::move(vars)) {}
  std::optional<std::string> get(std::string_view name) const;
  const std::map<std::string, std::string>& vars() const { return m_vars; }
  // Parses `KEY=VALUE` lines; blank lines, comments (#) and lines without '=' are skipped.
  static Environment parse(std::string_view text);

private:
  std::map<std::string, std::string> m_vars;
};

// Bytes read piece by piece, so a huge input (a kernel log of gigabytes) never sits in memory.
class ByteStream {
public:
  virtual ~ByteStream() = default;
  // Reads up to size bytes into buf; 0 at the end. Error carries the OS reason.
  virtual Result<std::size_t> read(char* buf, std::size_t size) = 0;
  // What is read, for messages: "/dev/kmsg", "klogctl", "dmesg.txt", a path, "stdin".
  virtual std::string name() const = 0;
  // A kernel log's first message, in seconds since boot, when the source knows it without being
  // read (a ring buffer that starts well after 0 has lost the start of the boot).
  virtual std::optional<double> first_seconds() const { return std::nullopt; }
};

// One source the kernel-log search tried, in order, and what became of it.
struct LogSourceAttempt {
  std::string source; // "/dev/kmsg", "klogctl", "systemd journal", "var/log/kern.log", ...
  std::string error;  // why it could not be read; "" when it was read or is absent
  bool found = true;  // false: this host has no such source
  bool used = false;  // the source the log was read from
};

// Reads from a pipe or terminal give up after this long without data (nothing blocks forever).
inline constexpr int k_stream_idle_timeout_s = 30;

// What a probe asked the host for, recorded when a capture (`gpu-preflight snapshot`) wants to
// copy exactly the inputs of a check.
struct HostAccess {
  enum class Kind {
    file,
    directory,
    node,
    link,
    presence,
    filesystem
  }; // presence: a file whose content is not needed
  Kind kind = Kind::file;
  std::string path;  // root-relative
  std::string error; // empty when the read succeeded (or the path simply does not exist: see found)
  bool found = true;
};

class Host {
public:
  static Host live();
  // Error when dir does not exist or is not a directory (the checker cannot run: exit 2).
  static Result<Host> snapshot(const std::filesystem::path& dir);

  bool is_live() const { return m_live; }
  const std::filesystem::path& root() const { return m_root; }

  // path is root-relative ("proc/modules"). Error carries the OS reason.
  Result<FileContent> read_file(std::string_view path, std::size_t cap = k_default_read_cap) const;
  // Entry names (not paths) of a directory, sorted. Error carries the OS reason.
  Result<std::vector<std::string>> list_dir(std::string_view path) const;
  bool exists(std::string_view path) const;
  // The path is not there (ENOENT, ENOTDIR): the input is one this host does not have. Unlike
  // !exists(), a path that is there but cannot be reached (EACCES, ELOOP) is not absent.
  bool absent(std::string_view path) const;
  // The target of a symbolic link as stored (relative or absolute; an absolute target names a
  // path inside the root). Error "Invalid argument" when path is not a link.
  Result<std::string> read_link(std::string_view path) const;
  // A directory of links read through one descriptor of it: its entries listed (as list_dir),
  // `choose` picks those to read (all, or a bounded part), and each is read_link's answer.
  // proc/<pid>/fd's thousands of links then cost one readlinkat each, not a path resolution, an
  // open and a close each, and the directory is opened once.
  struct DirLinks {
    std::vector<std::string> names;           // the chosen entries
    std::vector<Result<std::string>> targets; // their link texts, by position
  };
  Result<DirLinks>
  dir_links(std::string_view dir,
            const std::function<std::vector<std::string>(std::vector<std::string>)>& choose) const;
  // The target of a symbolic link as stored; nullopt when path is absent or exists but is not a
  // link (a hand-made snapshot may hold a plain directory where sysfs has a link). Error: the path
  // cannot be reached (the OS reason, or unreadable.json's).
  Result<std::optional<std::string>> link_target(std::string_view path) const;
  // link_target, telling apart the two nullopt cases: absent (nothing at path, so nothing below
  // it either: a walk resolving links itself stops asking) and there but not a link.
  struct LinkLookup {
    bool absent = false;
    std::optional<std::string> target;
  };
  Result<LinkLookup> lookup_link(std::string_view path) const;
  // The root-relative path a sysfs link leads to: its target joined to the link's directory as
  // named, which must hold no link (resolve "sys/class/net/eth0" first, then "<that>/device" for
  // the PCI function; "sys/bus/pci/devices/X" -> "sys/devices/pci.../X"). nullopt as link_target.
  // Error as link_target, or a target that climbs above the root.
  Result<std::optional<std::string>> resolve_link(std::string_view path) const;
  // A sysfs attribute's text, trimmed; nullopt when the file is absent (this kernel or device has
  // no such attribute). Error carries the OS reason (or unreadable.json's) of one that exists.
  Result<std::optional<std::string>> read_attribute(std::string_view path,
                                                    std::size_t cap = 4096) const;
  // True when path exists and is not a directory. Only its presence matters (a driver library):
  // a capture keeps an empty stand-in, not the content.
  bool has_file(std::string_view path) const;
  // statvfs(3) of the filesystem holding path; under a snapshot, statvfs.json records it
  // ({"dev/shm": {"size_bytes": N, "available_bytes": M}} or {"dev/shm": {"exists": false}}).
  // Error carries the OS reason.
  Result<FsSpace> filesystem_space(std::string_view path) const;
  bool is_directory(std::string_view path) const;
  // Under a snapshot, unreadable.json ({"path": "Permission denied", ...}) makes those paths fail
  // with that reason: how a capture replays what it could not read, and how tests inject errors.
  // Metadata for a device node; under a snapshot, devices.json (if present) supplies what a
  // stand-in file cannot carry (type, major/minor, mode, access) — see docs/snapshot-format.md.
  NodeInfo stat_node(std::string_view path) const;
  // The kernel log of the current boot, from the first source that can be read
  // (docs/kernel-log.md "Sources"): the ring buffer (live: /dev/kmsg read without blocking until
  // EAGAIN, else klogctl(SYSLOG_ACTION_READ_ALL); snapshot: dmesg.txt, or dmesg.error holding an OS
  // error text that stands for a log that cannot be read), the systemd journal's kernel messages
  // of the current boot, then var/log/kern.log, var/log/messages, var/log/syslog. A ring buffer
  // that has lost the start of the boot gives way to a journal that reaches further back.
  // nullptr: a snapshot with none of them. Error: every source tried with its reason. attempts,
  // when given, receives each source tried.
  Result<std::unique_ptr<ByteStream>>
  open_kernel_log(std::vector<LogSourceAttempt>* attempts = nullptr) const;
  // A file named on the command line (--dmesg): a path of the invoking machine, not of the root,
  // or "-" for stdin. Error carries the path and the OS reason.
  Result<std::unique_ptr<ByteStream>> open_user_file(const std::string& path) const;
  // uname -r live; proc/sys/kernel/osrelease in a snapshot.
  Result<std::string> kernel_release() const;
  const Environment& environment() const { return m_env; }
  // Today: the system clock live; a snapshot's `date` file (YYYY-MM-DD) otherwise, so a snapshot
  // is judged as of when it was taken. nullopt when a snapshot records no date.
  std::optional<std::chrono::year_month_day> today() const;
  // uname's nodename live; proc/sys/kernel/hostname in a snapshot; nullopt when unknown.
  std::optional<std::string> hostname() const;

  // The absolute path of a root-relative path (for messages and for tools that need a real path).
  std::filesystem::path resolve(std::string_view path) const;
  // From now on, every read, listing and stat is appended to log (nullptr stops recording).
  void record_into(std::vector<HostAccess>* log) { m_access_log = log; }

  // Every read cut at its cap since the last call, as "path (first N bytes)", in order; cleared
  // by the call. The pipeline files them under the probe that read them, so no cut is silent.
  std::vector<std::string> take_cut_reads() const;

  // Non-empty when the snapshot's devices.json exists but could not be parsed.
  const std::string& manifest_error() const { return m_manifest_error; }

private:
  Host(std::filesystem::path root, bool live, Environment env);
  // Opens a root-relative path; returns an fd or -errno. Under a snapshot, resolution stays inside
  // the root: absolute symlinks and ".." resolve against the snapshot, never the real host.
  int open_path(std::string_view path, int flags) const;
  // The sources open_kernel_log tries; nullptr when absent, Error when unreadable.
  Result<std::unique_ptr<ByteStream>> open_ring_buffer() const;
  Result<std::unique_ptr<ByteStream>> open_journal() const;
  // What every read checks before it touches the host: a root-relative path without "..", and
  // (under a snapshot) one that unreadable.json does not name. nullopt: go on; otherwise the error
  // to return ("invalid host path: P", or the recorded reason, which is logged for a capture).
  std::optional<Error> guard(HostAccess::Kind kind, std::string_view path) const;
  void record(HostAccess::Kind kind, std::string_view path, int err) const;
  void record_error(HostAccess::Kind kind, std::string_view path, const std::string& error) const;
  std::vector<HostAccess>* m_access_log = nullptr;
  struct CutLog {
    std::mutex lock; // NVML's waiter and the probes may read at once
    std::vector<std::string> cuts;
  };
  std::shared_ptr<CutLog> m_cuts = std::make_shared<CutLog>(); // shared by copies
  std::filesystem::path m_root;
  std::shared_ptr<const int>
      m_root_fd; // snapshot: an O_PATH descriptor of the root, shared by copies
  bool m_live = true;
  Environment m_env;
  std::map<std::string, NodeInfo> m_node_manifest; // snapshot devices.json
  std::map<std::string, std::string> m_unreadable; // snapshot unreadable.json: path -> OS error
  std::map<std::string, FsSpace> m_fs_records;     // snapshot statvfs.json
  std::string m_manifest_error;
};

} // namespace gpf
