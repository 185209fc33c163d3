// Probe "module-load": what decides whether the kernel can load the NVIDIA
// module. Reads sys/firmware/efi (booted through UEFI), the SecureBoot EFI
// variable
// sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c (4
// attribute bytes, then the value), sys/kernel/security/lockdown, the presence
// of the module-signing certificates of knowledge/module_signing, the NVIDIA
// module files under lib/modules/<release>/ (names only) and DKMS's nvidia
// builds and build log under var/lib/dkms/nvidia/ (docs/snapshot-format.md).
#include "gpf/knowledge/module_signing.hpp"
#include "gpf/probes/parsers.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/util/text.hpp"
#include "gpf/util/version.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpf {
namespace {

constexpr std::string_view k_efi = "sys/firmware/efi";
// EFI_GLOBAL_VARIABLE's GUID, under which the firmware publishes SecureBoot
// (UEFI specification 3.3, Globally Defined Variables).
constexpr std::string_view k_secure_boot_var =
    "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
constexpr std::string_view k_lockdown = "sys/kernel/security/lockdown";
constexpr std::string_view k_modules = "lib/modules";
constexpr std::string_view k_dkms = "var/lib/dkms/nvidia";
constexpr std::size_t k_max_releases = 32; // kernels installed side by side; more is not a host
constexpr std::size_t k_log_lines = 6;
constexpr std::size_t k_log_cap = 1u << 20;
// The DKMS tree, bounded (a host holds a few driver versions, each built for the kernels
// installed): the newest 16 versions, 32 kernels of each, 4 architectures of a kernel, 16 module
// names of a build, and the make.log of a version read up to k_log_cap; what is left out is
// named in probes[].cut. 65,000 versions took 10.7 s and 183 MB before, and their snapshot 66 GB.
constexpr std::size_t k_max_dkms_versions = 16;
constexpr std::size_t k_max_dkms_kernels = k_max_releases;
constexpr std::size_t k_max_dkms_arches = 4;
constexpr std::size_t k_max_dkms_modules = 16;

// Where an NVIDIA module is installed under lib/modules/<release>/
// (docs/sources.md#modules-for- the-running-kernel): DKMS's updates/dkms
// (Debian, Ubuntu, Arch) and extra/ (RHEL, SUSE), akmods' extra/nvidia,
// NVIDIA's installer's kernel/drivers/video; Ubuntu's signed prebuilt modules'
// kernel/nvidia-<branch> directories are found by listing kernel/.
constexpr std::string_view k_module_dirs[] = {"updates/dkms", "updates", "extra", "extra/nvidia",
                                              "kernel/drivers/video"};

void read_secure_boot(const Host& host, ModuleLoadFacts& m, ProbeStatus& status) {
  if (host.absent(k_secure_boot_var)) {
    return; // BIOS boot, efivarfs not mounted, or firmware without the
            // variable: unknown
  }
  auto bytes = host.read_file(k_secure_boot_var, 64);
  if (!bytes) {
    status.fail_also(fmt::format("{}: {}", k_secure_boot_var, bytes.error().message));
    return;
  }
  m.secure_boot = parse_secure_boot_variable(bytes->data);
  if (!m.secure_boot) {
    status.fail_also(fmt::format("{}: {} bytes, not the 4 attribute bytes and a 0/1 value",
                                 k_secure_boot_var, bytes->data.size()));
    return;
  }
  m.secure_boot_evidence =
      fmt::format("/{}: value {} (Secure Boot {})", k_secure_boot_var, *m.secure_boot ? 1 : 0,
                  *m.secure_boot ? "enabled" : "disabled");
}

void read_lockdown(const Host& host, ModuleLoadFacts& m, ProbeStatus& status) {
  auto text = host.read_attribute(k_lockdown);
  if (!text) {
    status.fail_also(fmt::format("{}: {}", k_lockdown, text.error().message));
    return;
  }
  if (!*text) {
    return; // no securityfs here (a container) or a kernel without lockdown
  }
  m.lockdown_line = to_valid_utf8(**text);
  m.lockdown = parse_lockdown(**text);
}

// The NVIDIA module files of one directory; a directory this host does not have
// is no error.
void list_modules(const Host& host, const std::string& release, const std::string& dir,
                  ModuleLoadFacts& m, ProbeStatus& status) {
  if (host.absent(dir) || !host.is_directory(dir)) {
    return;
  }
  auto names = host.list_dir(dir);
  if (!names) {
    status.fail_also(fmt::format("{}: {}", dir, names.error().message));
    return;
  }
  for (const auto& name : *names) {
    if (auto module = nvidia_module_name(name)) {
      m.module_files.push_back({release, fmt::format("{}/{}", dir, name), *module});
    }
  }
}

void read_module_files(const Host& host, ModuleLoadFacts& m, ProbeStatus& status) {
  if (host.absent(k_modules)) {
    return; // a container without the host's modules
  }
  auto releases = host.list_dir(k_modules);
  if (!releases) {
    status.fail_also(fmt::format("{}: {}", k_modules, releases.error().message));
    return;
  }
  m.module_tree_listed = true;
  std::size_t seen = 0;
  for (const auto& release : *releases) {
    const std::string base = fmt::format("{}/{}", k_modules, release);
    if (!host.is_directory(base) || ++seen > k_max_releases) {
      continue;
    }
    for (const auto dir : k_module_dirs) {
      list_modules(host, release, fmt::format("{}/{}", base, dir), m, status);
    }
    const std::string kernel = base + "/kernel";
    if (host.absent(kernel)) {
      continue;
    }
    if (auto names = host.list_dir(kernel)) {
      for (const auto& name : *names) {
        if (starts_with(name, "nvidia")) {
          list_modules(host, release, fmt::format("{}/{}", kernel, name), m, status);
        }
      }
    } else {
      status.fail_also(fmt::format("{}: {}", kernel, names.error().message));
    }
  }
}

// var/lib/dkms/nvidia/<version>/<kernel>/<arch>/module/ (what DKMS built) and
// <version>/build/make.log (the last build's log, left behind when it failed).
void read_dkms(const Host& host, ModuleLoadFacts& m, ProbeStatus& status) {
  if (host.absent(k_dkms)) {
    return;
  }
  auto versions = host.list_dir(k_dkms);
  if (!versions) {
    status.fail_also(fmt::format("{}: {}", k_dkms, versions.error().message));
    return;
  }
  // the newest versions by their number (a name that is none sorts last), kept in listed order
  std::vector<std::pair<std::optional<Version>, const std::string*>> named;
  for (const auto& version : *versions) {
    if (!starts_with(version, "kernel-")) {
      named.emplace_back(Version::parse(version), &version);
    }
  }
  std::set<const std::string*> kept;
  if (named.size() > k_max_dkms_versions) {
    std::nth_element(named.begin(), named.begin() + k_max_dkms_versions, named.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    named.resize(k_max_dkms_versions);
    status.cut.push_back(fmt::format("{} (the newest {} of {} versions)", k_dkms,
                                     k_max_dkms_versions, versions->size()));
  }
  for (const auto& [parsed, name] : named) {
    kept.insert(name);
  }
  for (const auto& version : *versions) {
    const std::string vdir = fmt::format("{}/{}", k_dkms, version);
    if (kept.count(&version) == 0 || !host.is_directory(vdir)) {
      continue; // DKMS 2's kernel-<release>-<arch> links repeat what the
                // directories hold
    }
    auto kernels = host.list_dir(vdir);
    if (!kernels) {
      status.fail_also(fmt::format("{}: {}", vdir, kernels.error().message));
      continue;
    }
    std::size_t kernels_seen = 0;
    for (const auto& kernel : *kernels) {
      const std::string kdir = fmt::format("{}/{}", vdir, kernel);
      if (kernel == "build" || kernel == "source") {
        continue;
      }
      if (kernels_seen == k_max_dkms_kernels) {
        status.cut.push_back(fmt::format("{} (the first {} kernels of {} entries)", vdir,
                                         k_max_dkms_kernels, kernels->size()));
        break;
      }
      if (!host.is_directory(kdir)) {
        continue;
      }
      ++kernels_seen;
      auto arches = host.list_dir(kdir);
      if (!arches) {
        status.fail_also(fmt::format("{}: {}", kdir, arches.error().message));
        continue;
      }
      std::vector<std::string> arch_names = std::move(arches).value();
      if (arch_names.size() > k_max_dkms_arches) {
        status.cut.push_back(fmt::format("{} (the first {} of {} architectures)", kdir,
                                         k_max_dkms_arches, arch_names.size()));
        arch_names.resize(k_max_dkms_arches);
      }
      for (const auto& arch : arch_names) {
        DkmsBuild build{version, kernel, arch, false, {}};
        const std::string mdir = fmt::format("{}/{}/module", kdir, arch);
        if (!host.absent(mdir)) {
          if (auto names = host.list_dir(mdir)) {
            for (const auto& name : *names) {
              if (build.modules.size() == k_max_dkms_modules) {
                status.cut.push_back(
                    fmt::format("{} (the first {} NVIDIA modules)", mdir, k_max_dkms_modules));
                break;
              }
              if (auto module = nvidia_module_name(name)) {
                build.modules.push_back(*module);
              }
            }
          }
        }
        build.built = !build.modules.empty();
        m.dkms.push_back(std::move(build));
      }
    }
    const std::string log = vdir + "/build/make.log";
    if (host.absent(log)) {
      continue;
    }
    if (auto text = host.read_file(log, k_log_cap)) {
      m.dkms_logs.push_back({version, log, build_log_tail(text->data, k_log_lines)});
    } else {
      status.fail_also(fmt::format("{}: {}", log, text.error().message));
    }
  }
}

ProbeStatus probe_module_load(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  ModuleLoadFacts& m = facts.module_load;
  m.efi = host.is_directory(k_efi);
  read_secure_boot(host, m, status);
  read_lockdown(host, m, status);
  for (const auto& row : signing_key_table()) {
    if (host.has_file(row.path)) {
      m.signing_keys.emplace_back(row.path);
    }
  }
  read_module_files(host, m, status);
  read_dkms(host, m, status);
  // What is absent is a fact here (no EFI, no lockdown file, no key, no module tree), not an
  // input to skip: the rules tell an unknown Secure Boot state from a disabled one.
  m.ran = true;
  return status;
}

const ProbeRegistration k_row{{"module-load",
                               "Secure Boot, lockdown, signing keys, module files and DKMS", 250,
                               probe_module_load}};

} // namespace
} // namespace gpf
