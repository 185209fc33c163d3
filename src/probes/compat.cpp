// Probe "compat": what the compatibility rules need beyond the driver probe.
//  - the CUDA version the job expects: --expect-cuda, else the toolkit of CUDA_HOME (job
//    environment), else /usr/local/cuda (version.json; version.txt before CUDA 11.1);
//  - the driver libraries the dynamic loader would pick for the job (libcuda.so.1,
//    libnvidia-ml.so.1), searched like ld.so does: LD_LIBRARY_PATH of the job, etc/ld.so.cache,
//    the default directories; every path and symbolic link resolved inside the root;
//  - the versions of the NVIDIA kernel modules (sys/module/<name>/version).
// Reads: usr/local/cuda/version.{json,txt}, $CUDA_HOME/version.{json,txt}, etc/ld.so.cache, the
// library candidates and their links,
// sys/module/{nvidia,nvidia_uvm,nvidia_modeset,nvidia_drm}/version.
#include "gpf/probes/compat_parsers.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/util/text.hpp"

#include <array>

namespace gpf {
namespace {

constexpr std::size_t k_small_file_cap = 64 * 1024;
constexpr std::size_t k_ld_cache_cap = 16 * 1024 * 1024;
constexpr int k_max_link_hops = 40; // as the kernel's limit on nested symbolic links

#if defined(__x86_64__)
constexpr std::string_view k_multiarch = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr std::string_view k_multiarch = "aarch64-linux-gnu";
#else
constexpr std::string_view k_multiarch = "";
#endif

constexpr std::array<std::string_view, 4> k_modules{"nvidia", "nvidia_uvm", "nvidia_modeset",
                                                    "nvidia_drm"};

// Root-relative, like every host path here; shown with a leading '/' as the loader names them.
constexpr std::string_view k_ld_cache = "etc/ld.so.cache";
constexpr std::string_view k_default_toolkit = "usr/local/cuda";
constexpr std::array<std::string_view, 4> k_default_dirs{"lib64", "usr/lib64", "lib", "usr/lib"};

// The absolute form of a root-relative path, as the dynamic loader and the user see it.
std::string shown(std::string_view rel) {
  std::string path = "/";
  path += rel;
  return path;
}

// A root-relative path for an absolute one ("/usr/lib" -> "usr/lib"; "/" -> ".").
std::string relative(std::string_view absolute) {
  while (!absolute.empty() && absolute.front() == '/') {
    absolute.remove_prefix(1);
  }
  return absolute.empty() ? std::string(".") : std::string(absolute);
}

// An absolute path with its links resolved; absent: some component of it is not there.
struct Resolved {
  std::string path;
  bool absent = false;
};

// Resolves every symbolic link of an absolute path inside the host's root, component by
// component, so a snapshot's absolute links never lead out of the snapshot.
Result<Resolved> resolve_in_root(const Host& host, std::string_view path) {
  std::vector<std::string> todo; // components still to walk, last one first
  const auto push = [&todo](std::string_view p) {
    const auto parts = split(p, '/');
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      todo.emplace_back(*it);
    }
  };
  push(path);
  std::string done; // resolved so far, "" = the root
  int hops = 0;
  bool absent = false; // a component was not there: nothing below it is, so no more asking
  while (!todo.empty()) {
    const std::string part = std::move(todo.back());
    todo.pop_back();
    if (part.empty() || part == ".") {
      continue;
    }
    if (part == "..") {
      done = done.empty() ? done : parent_path(done) == "/" ? std::string() : parent_path(done);
      continue;
    }
    const std::string candidate = done + "/" + part;
    if (absent) {
      done = candidate;
      continue;
    }
    TRY_ASSIGN(const auto found, host.lookup_link(relative(candidate)));
    const auto& link = found.target;
    if (!link) { // absent, or not a link
      absent = found.absent;
      done = candidate;
      continue;
    }
    if (++hops > k_max_link_hops || link->empty()) {
      return Error{"too many levels of symbolic links"};
    }
    if (link->front() == '/') {
      done.clear();
    }
    push(*link);
  }
  return Resolved{done.empty() ? std::string("/") : done, absent};
}

std::string file_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Looks at one candidate path; fills lib and returns true when the loader would take it.
bool try_candidate(const Host& host, const std::string& path, const std::string& via,
                   DriverLibrary& lib) {
  LibrarySearchStep step{parent_path(path), via, {}};
  auto resolved = resolve_in_root(host, path);
  if (!resolved) {
    step.result = resolved.error().message;
  } else if (!resolved->absent && host.is_directory(relative(resolved->path))) {
    step.result = "a directory";
  } else if (resolved->absent || !host.has_file(relative(resolved->path))) {
    // A dangling link only when the file itself is a link (a linked directory such as a merged
    // /lib -> usr/lib is not).
    auto dir = resolve_in_root(host, parent_path(path));
    const std::string direct =
        (dir ? (dir->path == "/" ? std::string() : dir->path) : parent_path(path)) + "/" +
        file_name(path);
    bool dangling = false;
    if (!dir || !dir->absent) { // under an absent directory there is no link to ask about
      const auto link = host.link_target(relative(direct));
      dangling = link && *link;
    }
    step.result = dangling ? "dangling link to " + resolved->path : "not present";
  } else {
    step.result = "found";
    lib.path = path;
    lib.resolved = resolved->path;
    lib.via = via;
    const std::string stem = lib.soname.substr(0, lib.soname.rfind(".so") + 3); // "libcuda.so"
    if (auto v = library_version_from_name(file_name(resolved->path), stem)) {
      lib.version = Version::parse(*v);
      lib.version_text = *v;
    }
    lib.in_stubs = path_has_component(path, "stubs") || path_has_component(resolved->path, "stubs");
    lib.in_compat =
        path_has_component(path, "compat") || path_has_component(resolved->path, "compat");
  }
  lib.searched.push_back(std::move(step));
  return lib.path.has_value();
}

// The default directories (multiarch first, as Debian's glibc has them), absolute.
std::vector<std::string> default_dirs() {
  std::vector<std::string> dirs;
  if (!k_multiarch.empty()) {
    dirs.push_back(shown("lib") + "/" + std::string(k_multiarch));
    dirs.push_back(shown("usr/lib") + "/" + std::string(k_multiarch));
  }
  for (auto d : k_default_dirs) {
    dirs.push_back(shown(d));
  }
  return dirs;
}

// The dynamic loader's order for a dlopen("soname") from a program without RPATH/RUNPATH.
DriverLibrary find_library(const Host& host, const Facts& facts,
                           const std::optional<LdCache>& cache, std::string soname) {
  DriverLibrary lib;
  lib.soname = std::move(soname);
  if (auto value = facts.env.get("LD_LIBRARY_PATH")) {
    for (const auto& dir : split_library_path(*value)) {
      if (dir.empty() || dir.front() != '/' || contains(dir, "$")) {
        // The current directory / a relative entry / a $ORIGIN-style token: depends on the job's
        // working directory or binary, which the checker cannot know.
        lib.searched.push_back(
            {quote_evidence(dir, 256), "LD_LIBRARY_PATH", "skipped: not an absolute directory"});
        continue;
      }
      if (try_candidate(host, normalize_absolute_path(dir + "/" + lib.soname), "LD_LIBRARY_PATH",
                        lib)) {
        return lib;
      }
    }
  }
  if (cache) {
    if (const auto* entry = find_in_ld_cache(*cache, lib.soname, native_ld_cache_flags())) {
      if (try_candidate(host, normalize_absolute_path(std::string(entry->path)), shown(k_ld_cache),
                        lib)) {
        return lib;
      }
    }
  }
  for (const auto& dir : default_dirs()) {
    if (try_candidate(host, dir + "/" + lib.soname, "default directory", lib)) {
      return lib;
    }
  }
  return lib;
}

void read_expected_cuda_file(const Host& host, const std::string& home, const std::string& label,
                             CompatFacts& compat) {
  const std::string base = relative(home);
  for (const char* name : {"version.json", "version.txt"}) {
    const std::string path = base + "/" + name;
    auto content = host.read_file(path, k_small_file_cap);
    if (!content) {
      continue;
    }
    const auto text = std::string(name) == "version.json" ? parse_cuda_version_json(content->data)
                                                          : parse_cuda_version_txt(content->data);
    const std::string where = normalize_absolute_path(shown(path));
    if (text) {
      compat.expected_cuda =
          ExpectedCuda{*Version::parse(*text), *text, label.empty() ? where : label + ": " + where};
      return;
    }
    compat.expected_cuda_notes.push_back(where + ": no CUDA version in \"" +
                                         quote_evidence(trim(content->data), 120) + "\"");
  }
}

void find_expected_cuda(const Host& host, const ProbeOptions& options, const Facts& facts,
                        CompatFacts& compat) {
  if (options.expect_cuda) {
    const auto text = trim(*options.expect_cuda);
    if (auto v = Version::parse(text); v && v->parts().size() >= 2) {
      compat.expected_cuda = ExpectedCuda{*v, std::string(text), "--expect-cuda"};
      return;
    }
    compat.expected_cuda_notes.push_back("--expect-cuda " + quote_evidence(text, 64) +
                                         ": not a CUDA version");
  }
  if (auto home = facts.env.get("CUDA_HOME"); home && !home->empty() && home->front() == '/') {
    read_expected_cuda_file(host, *home, "CUDA_HOME=" + quote_evidence(*home, 256), compat);
    if (compat.expected_cuda) {
      return;
    }
  }
  read_expected_cuda_file(host, shown(k_default_toolkit), "", compat);
}

void read_module_versions(const Host& host, const Facts& facts, ProbeStatus& status,
                          CompatFacts& compat) {
  for (auto name : k_modules) {
    const std::string dir = "sys/module/" + std::string(name);
    const bool loaded = facts.modules.has(std::string(name));
    if (!loaded && !host.is_directory(dir)) {
      continue;
    }
    ModuleVersion m{std::string(name), shown(dir) + "/version", std::nullopt, {}, {}};
    if (auto content = host.read_file(dir + "/version", 4096)) {
      m.text = quote_evidence(trim(content->data), 64);
      const auto t = trim(content->data);
      if (auto v = Version::parse(t);
          v && v->parts().size() >= 2 &&
          t.find_first_not_of("0123456789.") == std::string_view::npos) {
        m.version = v;
      } else {
        m.error = m.path + ": not a version: \"" + m.text + "\"";
      }
    } else {
      m.error = m.path + ": " + content.error().message;
      if (host.is_live() && loaded) {
        status.fail_also(m.error);
      }
    }
    compat.modules.push_back(std::move(m));
  }
}

} // namespace

ProbeStatus probe_compat(const Host& host, const ProbeOptions& options, Facts& facts) {
  ProbeStatus status;
  CompatFacts& compat = facts.compat;
  compat.ran = true;
  compat.snapshot = !host.is_live();
  compat.today = host.today();
  find_expected_cuda(host, options, facts, compat);
  read_module_versions(host, facts, status, compat);

  std::optional<LdCache> cache;
  auto content = host.read_file(k_ld_cache, k_ld_cache_cap); // the cache's entries view it
  if (content) {
    auto parsed = parse_ld_so_cache(content->data);
    if (parsed) {
      compat.ld_cache =
          parsed->format + " format, " + std::to_string(parsed->entries.size()) + " entries";
      cache = std::move(parsed).value();
    } else {
      compat.ld_cache = "not understood: " + parsed.error().message;
    }
  } else {
    compat.ld_cache = "unreadable: " + content.error().message;
  }
  compat.libcuda = find_library(host, facts, cache, "libcuda.so.1");
  compat.libnvidia_ml = find_library(host, facts, cache, "libnvidia-ml.so.1");
  return status;
}

namespace {
const ProbeRegistration k_row{{"compat", "driver libraries and CUDA version", 600, probe_compat}};
} // namespace

} // namespace gpf
