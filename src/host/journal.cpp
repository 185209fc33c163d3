// The kernel's messages of one boot from the systemd journal (sd-journal(3)): entries of the kernel
// transport (_TRANSPORT=kernel) and the boot's _BOOT_ID, rendered as dmesg lines
// ("[  12.345678] msg", later lines of a multi-line message indented) so the kernel-log scanner
// reads them like any other log. The journal is opened read-only; nothing here blocks.
// libsystemd is loaded with dlopen at first use, as libcuda is, so that the binary links libc only
// and runs where libsystemd.so.0 is absent (a minimal or distroless image): there the journal is
// not checked, with the loader's reason. Its header gives only the types and prototypes.
#include "streams.hpp"

#include <systemd/sd-journal.h>

#include <dlfcn.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include <algorithm>
#include <string_view>

namespace gpf {
namespace {

std::string os_error(int err) {
  return std::strerror(err);
}

// The entry points of libsystemd.so.0 used here, typed from its own header's declarations.
struct SdApi {
  decltype(&::sd_journal_open) open = nullptr;
  decltype(&::sd_journal_open_files_fd) open_files_fd = nullptr;
  decltype(&::sd_journal_close) close = nullptr;
  decltype(&::sd_journal_next) next = nullptr;
  decltype(&::sd_journal_previous) previous = nullptr;
  decltype(&::sd_journal_seek_head) seek_head = nullptr;
  decltype(&::sd_journal_seek_tail) seek_tail = nullptr;
  decltype(&::sd_journal_get_data) get_data = nullptr;
  decltype(&::sd_journal_get_monotonic_usec) get_monotonic_usec = nullptr;
  decltype(&::sd_journal_add_match) add_match = nullptr;
  decltype(&::sd_journal_has_runtime_files) has_runtime_files = nullptr;
  decltype(&::sd_journal_has_persistent_files) has_persistent_files = nullptr;
  decltype(&::sd_id128_get_boot) id128_get_boot = nullptr;
  decltype(&::sd_id128_to_string) id128_to_string = nullptr;
  decltype(&::sd_id128_from_string) id128_from_string = nullptr;
};

// Stores a dlsym address in a typed pointer; memcpy because ISO C++ has no object-to-function
// pointer cast (POSIX guarantees the representation is the same).
template <class Fn> bool bind(void* lib, const char* symbol, Fn& fn) {
  void* address = ::dlsym(lib, symbol);
  std::memcpy(&fn, &address, sizeof fn);
  return address != nullptr;
}

// The library, loaded once (never unloaded); an error says why it cannot be used.
const Result<SdApi>& sd() {
  static const Result<SdApi> api = []() -> Result<SdApi> {
    static constexpr const char* k_library = "libsystemd.so.0";
    void* lib = ::dlopen(k_library, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = ::dlerror();
      return Error{why != nullptr ? std::string(why) : std::string(k_library) + ": not loadable"};
    }
    SdApi a;
    const char* missing = nullptr;
    const auto need = [&](const char* symbol, auto& fn) {
      if (!bind(lib, symbol, fn) && missing == nullptr) {
        missing = symbol;
      }
    };
    need("sd_journal_open", a.open);
    need("sd_journal_open_files_fd", a.open_files_fd);
    need("sd_journal_close", a.close);
    need("sd_journal_next", a.next);
    need("sd_journal_previous", a.previous);
    need("sd_journal_seek_head", a.seek_head);
    need("sd_journal_seek_tail", a.seek_tail);
    need("sd_journal_get_data", a.get_data);
    need("sd_journal_get_monotonic_usec", a.get_monotonic_usec);
    need("sd_journal_add_match", a.add_match);
    need("sd_journal_has_runtime_files", a.has_runtime_files);
    need("sd_journal_has_persistent_files", a.has_persistent_files);
    need("sd_id128_get_boot", a.id128_get_boot);
    need("sd_id128_to_string", a.id128_to_string);
    need("sd_id128_from_string", a.id128_from_string);
    if (missing != nullptr) {
      return Error{fmt::format("{}: no symbol {}", k_library, missing)};
    }
    return a;
  }();
  return api;
}

// The loaded library's table; only called after open_journal_kernel_log found it loadable.
const SdApi& api() {
  return *sd();
}

// MESSAGE= and friends without their "NAME=" prefix; "" when the entry lacks the field.
std::string_view field(sd_journal* j, const char* name) {
  const void* data = nullptr;
  std::size_t size = 0;
  if (api().get_data(j, name, &data, &size) < 0) {
    return {};
  }
  const std::string_view all(static_cast<const char*>(data), size);
  const auto eq = all.find('=');
  return eq == std::string_view::npos ? std::string_view() : all.substr(eq + 1);
}

// Microseconds since boot of the current entry: the kernel's own stamp
// (_SOURCE_MONOTONIC_TIMESTAMP) when journald recorded it, else the journal's.
std::optional<std::uint64_t> monotonic_usec(sd_journal* j) {
  const std::string_view source = field(j, "_SOURCE_MONOTONIC_TIMESTAMP");
  if (!source.empty() && source.size() <= 19 &&
      std::all_of(source.begin(), source.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::stoull(std::string(source));
  }
  std::uint64_t usec = 0;
  if (api().get_monotonic_usec(j, &usec, nullptr) >= 0) {
    return usec;
  }
  return std::nullopt;
}

class JournalStream final : public ByteStream {
public:
  JournalStream(sd_journal* j, std::string name, std::string header)
      : m_j(j), m_name(std::move(name)), m_pending(std::move(header)) {}
  ~JournalStream() override { api().close(m_j); }
  JournalStream(const JournalStream&) = delete;
  JournalStream& operator=(const JournalStream&) = delete;

  // Moves to the first entry; false when there is none. Error: the journal could not be read.
  Result<bool> start() {
    const int r = api().next(m_j);
    if (r < 0) {
      return Error{m_name + ": " + os_error(-r)};
    }
    m_have_entry = r > 0;
    if (m_have_entry) {
      if (auto usec = monotonic_usec(m_j)) {
        m_first = static_cast<double>(*usec) / 1e6;
      }
    }
    return m_have_entry;
  }

  Result<std::size_t> read(char* buf, std::size_t size) override {
    while (m_pending.size() - m_pos < size && m_have_entry) {
      render();
      const int r = api().next(m_j);
      if (r < 0) {
        return Error{m_name + ": " + os_error(-r)};
      }
      m_have_entry = r > 0;
    }
    const std::size_t n = std::min(size, m_pending.size() - m_pos);
    std::memcpy(buf, m_pending.data() + m_pos, n);
    m_pos += n;
    if (m_pos == m_pending.size()) {
      m_pending.clear();
      m_pos = 0;
    }
    return n;
  }
  std::string name() const override { return m_name; }
  std::optional<double> first_seconds() const override { return m_first; }

private:
  // Appends the current entry as dmesg lines.
  void render() {
    if (m_pos > 0) {
      m_pending.erase(0, m_pos);
      m_pos = 0;
    }
    const auto usec = monotonic_usec(m_j);
    const std::string stamp =
        usec ? fmt::format("[{:5}.{:06}] ", *usec / 1000000, *usec % 1000000) : std::string();
    std::string_view message = field(m_j, "MESSAGE");
    bool first = true;
    for (;;) {
      const auto nl = message.find('\n');
      const std::string_view line = message.substr(0, nl);
      m_pending += first ? stamp : std::string(" ");
      m_pending += line;
      m_pending += '\n';
      first = false;
      if (nl == std::string_view::npos || nl + 1 >= message.size()) {
        break;
      }
      message.remove_prefix(nl + 1);
    }
  }

  sd_journal* m_j;
  std::string m_name;
  std::string m_pending; // rendered text not yet handed out
  std::size_t m_pos = 0;
  bool m_have_entry = false;
  std::optional<double> m_first;
};

std::string id_text(sd_id128_t id) {
  char text[SD_ID128_STRING_MAX] = {};
  return api().id128_to_string(id, text);
}

// "0123456789abcdef0123456789abcdef" or the dashed UUID form of boot_id files.
std::optional<sd_id128_t> parse_boot_id(std::string_view text) {
  std::string hex;
  for (char c : text) {
    if (c != '-' && c != '\n' && c != ' ') {
      hex += c;
    }
  }
  sd_id128_t id{};
  if (hex.size() != 32 || api().id128_from_string(hex.c_str(), &id) < 0) {
    return std::nullopt;
  }
  return id;
}

} // namespace

Result<std::unique_ptr<ByteStream>> open_journal_kernel_log(JournalInput& input,
                                                            std::vector<std::string>& errors) {
  if (!sd()) {
    return Error{input.name + ": " + sd().error().message};
  }
  sd_journal* j = nullptr;
  int r = 0;
  if (input.live) {
    r = api().open(&j, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM);
  } else {
    // One file sd-journal rejects would fail them all: each is tried alone first (on a copy of
    // its descriptor, which a successful open takes over and closes).
    std::vector<int> fds;
    for (auto& [path, fd] : input.files) {
      int copy = ::dup(fd.get());
      if (copy < 0) {
        errors.push_back(path + ": " + os_error(errno));
        continue;
      }
      sd_journal* one = nullptr;
      const int tried = api().open_files_fd(&one, &copy, 1, 0);
      if (tried < 0) {
        ::close(copy);
        errors.push_back(path + ": " + os_error(-tried));
        continue;
      }
      api().close(one);
      fds.push_back(fd.get());
    }
    if (fds.empty()) {
      if (!errors.empty()) {
        return Error{input.name + ": " + fmt::format("{}", fmt::join(errors, "; "))};
      }
      return std::unique_ptr<ByteStream>();
    }
    r = api().open_files_fd(&j, fds.data(), static_cast<unsigned>(fds.size()), 0);
    if (r >= 0) {
      for (auto& [path, fd] : input.files) {
        if (std::find(fds.begin(), fds.end(), fd.get()) != fds.end()) {
          fd.release(); // the journal closes it
        }
      }
    }
  }
  if (r < 0) {
    return Error{input.name + ": " + os_error(-r)};
  }
  if (input.live && api().has_runtime_files(j) <= 0 && api().has_persistent_files(j) <= 0) {
    api().close(j);
    // The directories exist but no system journal file could be opened: the files are readable
    // only to root and the systemd-journal and adm groups.
    if (input.live_dirs_exist) {
      return Error{input.name + ": " + os_error(EACCES) +
                   " (no system journal file is readable by this user)"};
    }
    return std::unique_ptr<ByteStream>();
  }
  std::optional<sd_id128_t> boot;
  if (!input.boot_id.empty()) {
    boot = parse_boot_id(input.boot_id);
  } else if (input.live) {
    sd_id128_t id{};
    if (api().id128_get_boot(&id) >= 0) {
      boot = id;
    }
  }
  r = api().add_match(j, "_TRANSPORT=kernel", 0);
  if (r >= 0 && !boot) {
    // No boot id known (a snapshot without proc/sys/kernel/random/boot_id): the boot of the
    // journal's last kernel message is taken as the current one.
    sd_id128_t last{};
    std::uint64_t usec = 0;
    if (api().seek_tail(j) >= 0 && api().previous(j) > 0 &&
        api().get_monotonic_usec(j, &usec, &last) >= 0) {
      boot = last;
    }
  }
  if (r >= 0 && boot) {
    const std::string match = "_BOOT_ID=" + id_text(*boot);
    r = api().add_match(j, match.data(), match.size());
  }
  if (r >= 0) {
    r = api().seek_head(j);
  }
  if (r < 0) {
    api().close(j);
    return Error{input.name + ": " + os_error(-r)};
  }
  const std::string header = boot ? fmt::format("-- Kernel messages of boot {} from the {} --\n",
                                                id_text(*boot), input.name)
                                  : fmt::format("-- Kernel messages from the {} --\n", input.name);
  auto stream = std::make_unique<JournalStream>(j, input.name, header);
  auto started = stream->start();
  if (!started) {
    return started.error();
  }
  return std::unique_ptr<ByteStream>(std::move(stream));
}

} // namespace gpf
