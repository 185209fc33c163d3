// Rules whose id starts with "driver.": the NVIDIA kernel driver and its user-space libraries:
// loaded, versions agree, GSP switch, registry, end of life, and what the kernel log says about the
// driver.
#include "common.hpp"

#include "gpf/knowledge/data_age.hpp"
#include "gpf/knowledge/driver_messages.hpp"
#include "gpf/knowledge/module_signing.hpp"

namespace gpf {
namespace {

// EnableGpuFirmware: low nibble 0 = GSP firmware disabled (nv-firmware-registry.h).
bool gsp_disabled(const Facts& f) {
  return f.driver.enable_gpu_firmware && (*f.driver.enable_gpu_firmware & 0xF) == 0;
}

std::string gsp_evidence(const Facts& f) {
  return fmt::format("/proc/driver/nvidia/params: EnableGpuFirmware: {}",
                     f.driver.params.at("EnableGpuFirmware"));
}

// The current boot's refusals of a module by the kernel (module signing, lockdown). The kernel's
// lines name no module: with the NVIDIA driver not loaded they are the likeliest reason.
EventPtrs module_refusals(const Facts& f) {
  EventPtrs out;
  for (const auto& e : f.log.host_events) {
    if (e.kind == LogEventKind::module_refused) {
      out.push_back(&e);
    }
  }
  return out;
}

// What the host says about module signing, for the evidence: Secure Boot, lockdown, the key.
std::vector<std::string> signing_evidence(const ModuleLoadFacts& m) {
  std::vector<std::string> out;
  if (!m.secure_boot_evidence.empty()) {
    out.push_back(m.secure_boot_evidence);
  } else if (m.ran) {
    out.emplace_back(m.efi ? "Secure Boot state unknown: no readable SecureBoot EFI variable"
                           : "/sys/firmware/efi: No such file or directory (not booted "
                             "through UEFI, or not visible here)");
  }
  if (!m.lockdown_line.empty()) {
    out.push_back(fmt::format("/sys/kernel/security/lockdown: {}", m.lockdown_line));
  }
  for (const auto& key : m.signing_keys) {
    const SigningKeyRow* row = find_signing_key(key);
    out.push_back(fmt::format("/{}: present ({}'s module-signing certificate)", key,
                              row ? row->signer : "a"));
  }
  return out;
}

// The fix for a refused module, with the host's key path and kernel release filled in. Another
// modprobe is refused the same way, so it is never the advice.
std::string refused_remedy(const Facts& f) {
  const ModuleLoadFacts& m = f.module_load;
  const std::string release = f.kernel.release.empty() ? "the running kernel" : f.kernel.release;
  const bool locked = m.lockdown.value_or("none") != "none";
  const bool no_secure_boot = m.secure_boot == false || (m.ran && !m.efi);
  if (no_secure_boot && locked) {
    // Lockdown without Secure Boot was raised by configuration (lockdown= on the kernel command
    // line, or written to securityfs at boot): Bottlerocket's lockdown=integrity refuses the
    // runtime-linked NVIDIA modules, which its NVIDIA variants avoid by keeping lockdown at none
    // (https://github.com/bottlerocket-os/bottlerocket/issues/4218).
    return fmt::format(
        "Kernel lockdown is {} while Secure Boot is off, so it was raised by configuration: "
        "lockdown= on the kernel command line, or a setting written to "
        "/sys/kernel/security/lockdown at boot (Bottlerocket: settings.kernel.lockdown). Set it "
        "to none where this node must load the NVIDIA modules and reboot (lockdown cannot be "
        "lowered while running), or install modules signed with a key built into kernel {}. A "
        "Machine Owner Key is trusted only when booted with Secure Boot. Running modprobe again "
        "is refused the same way",
        *m.lockdown, release);
  }
  if (m.secure_boot == false && !locked) {
    // Signatures enforced without Secure Boot: module.sig_enforce=1 or CONFIG_MODULE_SIG_FORCE.
    // Machine Owner Keys count only under Secure Boot, so enrolling one does not help here.
    return fmt::format(
        "The kernel enforces module signatures although Secure Boot is off (module.sig_enforce=1 "
        "or a kernel built with CONFIG_MODULE_SIG_FORCE): install the NVIDIA module built and "
        "signed for kernel {} by your distribution (the signed linux-modules-nvidia or kmod "
        "package), or drop module.sig_enforce=1 from the kernel command line and reboot; a Machine "
        "Owner Key is trusted only when booted with Secure Boot. Running modprobe again is "
        "refused the same way",
        release);
  }
  const std::string alternatives = fmt::format(
      "Otherwise install the distribution's signed NVIDIA modules for kernel {} (Ubuntu: `sudo "
      "ubuntu-drivers install` picks the signed linux-modules-nvidia package), or turn Secure Boot "
      "off in the firmware set-up. Running modprobe again is refused the same way",
      release);
  if (!m.signing_keys.empty()) {
    const std::string& key = m.signing_keys.front();
    return fmt::format(
        "Enrol the key the module was signed with as a Machine Owner Key: `sudo mokutil --import "
        "/{}` (set a one-time password), reboot and confirm the enrolment in the MOK manager "
        "screen (Enroll MOK); the module then loads at boot. {}",
        key, alternatives);
  }
  return fmt::format(
      "Sign the module with a key enrolled as a Machine Owner Key: with DKMS 3, `sudo dkms "
      "generate_mok` creates /var/lib/dkms/mok.pub, then `sudo mokutil --import "
      "/var/lib/dkms/mok.pub`, reboot and confirm the enrolment in the MOK manager screen, and "
      "rebuild the module (`sudo dkms autoinstall -k {}`), which signs it. {}",
      release, alternatives);
}

// The running kernel has no NVIDIA module while the host shows why: another kernel has one, DKMS
// built it for other kernels only, or DKMS's build log says why it failed. nullopt when
// lib/modules was not listed, the running kernel has the module, or nothing explains its absence.
std::optional<Hit> no_module_for_kernel(const Facts& f) {
  const ModuleLoadFacts& m = f.module_load;
  const std::string& running = f.kernel.release;
  if (!m.module_tree_listed || running.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> others;
  for (const auto& file : m.module_files) {
    if (file.name != "nvidia") {
      continue;
    }
    if (file.release == running) {
      return std::nullopt; // the module is there: something else keeps it from loading
    }
    if (std::find(others.begin(), others.end(), file.release) == others.end()) {
      others.push_back(file.release);
    }
  }
  if (others.empty() && m.dkms.empty() && m.dkms_logs.empty()) {
    return std::nullopt;
  }
  std::string message =
      fmt::format("The NVIDIA kernel driver is not loaded: no nvidia module for the running kernel "
                  "{}",
                  running);
  Hit hit{"",
          {"/proc/driver/nvidia: No such file or directory",
           fmt::format("/lib/modules/{}/: no nvidia.ko (updates/dkms, extra, kernel/drivers/"
                       "video, kernel/nvidia-*)",
                       running)}};
  if (!others.empty()) {
    message += fmt::format("; kernel {} has one", join(others));
    for (const auto& file : m.module_files) {
      if (file.name == "nvidia") {
        hit.evidence.push_back("/" + file.path);
      }
    }
  }
  std::string version;
  for (const auto& build : m.dkms) {
    version = build.version;
    hit.evidence.push_back(fmt::format(
        "/var/lib/dkms/nvidia/{}/{}/{}: {}", build.version, build.kernel, build.arch,
        build.built ? fmt::format("built ({})", join(build.modules)) : std::string("not built")));
  }
  const DkmsLog* log = m.dkms_logs.empty() ? nullptr : &m.dkms_logs.front();
  if (log) {
    version = log->version;
    if (!log->tail.empty()) {
      // The compiler's error when the log has one, else where make stopped.
      const auto error = std::find_if(log->tail.begin(), log->tail.end(),
                                      [](const std::string& l) { return contains(l, "error:"); });
      message += fmt::format("; DKMS build log says \"{}\"",
                             error != log->tail.end() ? *error : log->tail.back());
    }
    for (const auto& line : log->tail) {
      hit.evidence.push_back(fmt::format("/{}: {}", log->path, line));
    }
  }
  hit.message = std::move(message);
  const bool rpm = f.kernel.flavour == KernelFlavour::rhel ||
                   f.kernel.flavour == KernelFlavour::amazon ||
                   f.kernel.flavour == KernelFlavour::suse;
  const std::string headers =
      rpm ? fmt::format("`sudo dnf install kernel-devel-{}`", running)
          : fmt::format("`sudo apt install linux-headers-{}` (Debian, Ubuntu; `kernel-devel-{}` "
                        "on RHEL-like systems)",
                        running, running);
  hit.remedy = fmt::format(
      "Build the module for kernel {0}: install its headers with {1}, then `sudo dkms install "
      "nvidia{2} -k {0}` and load it (`sudo modprobe nvidia`) or reboot",
      running, headers, version.empty() ? "" : "/" + version);
  if (log && !log->tail.empty()) {
    hit.remedy += fmt::format(
        "; the last build failed (/{}): when the headers are there and it fails again, the driver "
        "{} does not support kernel {}: install a driver branch that does",
        log->path, version, running);
  }
  if (!others.empty()) {
    hit.remedy += fmt::format("; meanwhile kernel {} has the module: boot it", others.front());
  }
  return hit;
}

// The current boot's symbol errors of the nvidia module itself ("nvidia: disagrees about version
// of symbol module_layout", "nvidia: Unknown symbol ..."): the module was built for another kernel.
EventPtrs nvidia_symbol_errors(const Facts& f) {
  EventPtrs out;
  for (const auto& e : f.log.host_events) {
    if (e.kind == LogEventKind::module_symbol && e.detail == "nvidia") {
      out.push_back(&e);
    }
  }
  return out;
}

// The PCI bus was read whole and lists no NVIDIA device: there is nothing for a driver to drive.
// An unreadable bus, or a device whose vendor could not be read, keeps the usual judgement.
bool bus_has_no_nvidia_device(const Facts& f) {
  const PcieFacts& p = f.topology.pcie;
  return p.ran && p.devices_seen > 0 && p.nvidia_devices.empty() && p.vendor_unreadable.empty() &&
         f.gpus.empty() && !f.driver.loaded;
}

} // namespace

std::span<const Rule> driver_rules() {
  static const Rule rows[] = {
      {.id = "driver.not-loaded",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The NVIDIA kernel driver is loaded (/proc/driver/nvidia exists)",
       .remedy =
           "Load the driver (`modprobe nvidia`) or install it for this kernel (DKMS may have failed to build it after a kernel update: check `dkms status`); "
           "in a container, start it with the NVIDIA runtime (--gpus all)",
       .source =
           "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv-procfs.c",
       .explanation =
           "The nvidia kernel module creates /proc/driver/nvidia when it loads; without it no "
           "process can open a GPU. CUDA then finds no device, so PyTorch reports "
           "torch.cuda.is_available() == False and a job either crashes on its first CUDA call "
           "or, worse, trains on the CPU. Confirm by hand: `lsmod | grep '^nvidia'` and `cat "
           "/proc/driver/nvidia/version`; `dmesg | grep -i nvrm` shows why a load failed. A "
           "host-level failure: the verdict is fail and no GPU is recommended. When the module "
           "list or the kernel log shows why (nouveau, a failed probe, a kernel too old for the "
           "driver), that finding is named as the primary cause. When the kernel refused the "
           "module (\"Loading of unsigned module is rejected\", \"Loading of module with "
           "unavailable key is rejected\", \"Lockdown: modprobe: unsigned module loading is "
           "restricted\"), the finding quotes the line beside the Secure Boot and lockdown state "
           "and the module-signing key the host keeps, and its remedy is to enrol that key as a "
           "Machine Owner Key (mokutil --import), install the distribution's signed modules or "
           "turn Secure Boot off: modprobe again is refused the same way. The benign \"module "
           "verification failed: signature and/or required key missing - tainting kernel\" is "
           "a module that loaded unsigned where signatures are not enforced, not a refusal. "
           "When /lib/modules/<running release>/ holds no nvidia module — after a kernel update "
           "whose DKMS build failed or found no headers — the finding names the kernels that have "
           "one, DKMS's builds and the tail of its build log, and the remedy builds the module "
           "for the running kernel.",
       .evidence =
           "/proc/driver/nvidia; the current boot's module-refusal lines of the kernel log; "
           "the SecureBoot EFI variable, /sys/kernel/security/lockdown and the module-signing "
           "certificates (/var/lib/dkms/mok.pub, /var/lib/shim-signed/mok/MOK.der, "
           "/etc/pki/akmods/certs/public_key.der) the host has; the nvidia modules under "
           "/lib/modules/<release>/ and DKMS's builds and build log "
           "(/var/lib/dkms/nvidia/<version>/).",
       // What keeps the driver from loading, when the kernel log or the module list says so.
       .caused_by =
           "module.nouveau-loaded kernel.below-driver-floor gpu.not-supported "
           "gpu.not-supported-open-module gpu.needs-open-module gpu.open-module-unsupported "
           "gsp. rminit. driver.probe-failed driver.api-mismatch",
       .reads = {ProbeId::driver},
       .cases = {fires("cuda-no-driver"), silent("cuda-4gpu")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         if (c.facts.driver.loaded || !driver_expected(c.facts)) {
           return {};
         }
         if (bus_has_no_nvidia_device(c.facts)) {
           return {}; // driver.no-nvidia-device: nothing to load
         }
         // proc/driver/nvidia there but not to be looked at: the probe failed (probe.failed says
         // why), and whether the driver is loaded is unknown
         if (const auto* p = c.facts.probe("driver"); p && p->state == ProbeState::error) {
           return {};
         }
         Hit hit{"The NVIDIA kernel driver is not loaded: /proc/driver/nvidia does not exist",
                 {"/proc/driver/nvidia: No such file or directory"}};
         if (const EventPtrs refused = module_refusals(c.facts); !refused.empty()) {
           hit.message = fmt::format(
               "The NVIDIA kernel driver is not loaded: the kernel refused to load it — {}",
               describe(refused));
           for (auto& line : evidence_of(refused)) {
             hit.evidence.push_back(std::move(line));
           }
           for (auto& line : signing_evidence(c.facts.module_load)) {
             hit.evidence.push_back(std::move(line));
           }
           hit.remedy = refused_remedy(c.facts);
         } else if (const EventPtrs symbols = nvidia_symbol_errors(c.facts); !symbols.empty()) {
           hit.message = fmt::format("The NVIDIA kernel driver is not loaded: the module does "
                                     "not fit the running kernel {} — {}",
                                     c.facts.kernel.release, describe(symbols));
           for (auto& line : evidence_of(symbols)) {
             hit.evidence.push_back(std::move(line));
           }
           hit.remedy = fmt::format(
               "The nvidia module on disk was built for another kernel: rebuild it for {0} "
               "(install its headers, then `sudo dkms autoinstall -k {0}`, or reinstall the "
               "driver package) and reboot",
               c.facts.kernel.release.empty() ? std::string("the running kernel")
                                              : c.facts.kernel.release);
         } else if (auto missing = no_module_for_kernel(c.facts)) {
           return {std::move(*missing)};
         }
         return {hit};
       }},
      {.id = "driver.no-nvidia-device",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The PCI bus has an NVIDIA device for the driver to drive",
       .remedy =
           "Run the job on a node with an NVIDIA GPU. In a virtual machine attach the GPU to it (PCI pass-through or vGPU in the hypervisor, or a GPU instance type in the cloud); "
           "on bare metal check that the GPU is seated, powered and enabled in the firmware setup (on a laptop with hybrid graphics, that the discrete GPU is not switched off)",
       .source = "https://www.kernel.org/doc/Documentation/ABI/testing/sysfs-bus-pci",
       .explanation =
           "Every PCI device the kernel sees is listed under /sys/bus/pci/devices with its vendor id; NVIDIA's is 0x10de. "
           "When the bus was read whole and no device has that vendor, there is nothing for the NVIDIA driver to load for: "
           "\"load the driver\" would be the wrong advice. "
           "In a virtual machine this means the GPU was not passed through. "
           "When the bus cannot be read, or a device's vendor cannot, the usual driver.not-loaded judgement stays.",
       .evidence =
           "The entries of /sys/bus/pci/devices and each one's vendor attribute; the hypervisor CPU flag (/proc/cpuinfo).",
       .reads = {ProbeId::pcie},
       .cases = {fires("nogpu-vm-no-passthrough"), silent("nogpu-vendor-unreadable")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         if (!driver_expected(c.facts) || !bus_has_no_nvidia_device(c.facts)) {
           return {};
         }
         const PcieFacts& p = c.facts.topology.pcie;
         const bool vm = c.facts.topology.iommu.hypervisor.value_or(false);
         Hit hit{
             fmt::format(
                 "No NVIDIA device on the PCI bus: none of the {} devices in /sys/bus/pci/devices has vendor 0x10de, so there is no GPU for the driver to drive{}",
                 p.devices_seen,
                 vm ? "; this is a virtual machine (the hypervisor CPU flag is set): the GPU is not passed through to it"
                    : ""),
             {fmt::format("/sys/bus/pci/devices: {} devices, none of vendor 0x10de (NVIDIA)",
                          p.devices_seen)}};
         if (vm) {
           hit.evidence.push_back("/proc/cpuinfo: flags include hypervisor");
           hit.remedy =
               "Attach the GPU to this virtual machine (PCI pass-through or vGPU in the hypervisor, or a GPU instance type in the cloud) and boot it again, or run the job on a node with an NVIDIA GPU";
         }
         return {std::move(hit)};
       }},
      {.id = "driver.gsp-disabled-open-module",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "GSP firmware is not disabled while the open kernel module is loaded",
       .remedy =
           "Remove NVreg_EnableGpuFirmware=0 from the module options (the open module requires GSP), or install the proprietary flavour for GPUs that must run without GSP",
       .source = "docs/sources.md#gsp-firmware",
       .explanation =
           "The open kernel module works only with GSP firmware, which runs most of the driver "
           "on the GPU's own processor. NVreg_EnableGpuFirmware=0 asks it to run without, and "
           "the GPUs then fail to initialise (RmInitAdapter errors in the kernel log), so CUDA "
           "finds no device. Confirm by hand: `grep EnableGpuFirmware "
           "/proc/driver/nvidia/params` (0 = disabled) and `cat /proc/driver/nvidia/version` "
           "(\"Open Kernel Module\"). A host-level failure: the verdict is fail and no GPU is "
           "recommended until the option is removed and the driver reloaded.",
       .evidence = "EnableGpuFirmware in proc/driver/nvidia/params (low nibble 0: GSP firmware "
                   "disabled) and the module's flavour in proc/driver/nvidia/version (`Open Kernel "
                   "Module`).",
       .cases = {fires("gsp-disabled-open"), silent("gsp-disabled-proprietary")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         if (!gsp_disabled(c.facts) || c.facts.driver.flavour != DriverFlavour::open) {
           return {};
         }
         return {
             {"GSP firmware is disabled (EnableGpuFirmware=0) but the open kernel module requires it",
              {gsp_evidence(c.facts),
               "/proc/driver/nvidia/version: " + c.facts.driver.version_line}}};
       }},
      {.id = "driver.gsp-disabled",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Whether GSP firmware is disabled with the proprietary module",
       .remedy =
           "Nothing to do unless GSP is wanted: remove NVreg_EnableGpuFirmware=0 from the module options",
       .source = "docs/sources.md#driver-files-under-proc-and-sys",
       .explanation =
           "With the proprietary module, GSP firmware can be turned off "
           "(NVreg_EnableGpuFirmware=0), and the driver then runs its resource manager on the "
           "CPU as older branches did. Training works either way; it is reported for the record "
           "because GSP changes which failures can happen (the GSP Xids 119 and 120 occur only "
           "with it) and because some features need it. Confirm by hand: `grep "
           "EnableGpuFirmware /proc/driver/nvidia/params` and `grep -r EnableGpuFirmware "
           "/etc/modprobe.d/`. Info: no effect on the verdict or the recommendation.",
       .evidence = "EnableGpuFirmware in proc/driver/nvidia/params (low nibble 0: GSP firmware "
                   "disabled) and the module's flavour in proc/driver/nvidia/version (not the open "
                   "module).",
       .cases = {fires("gsp-disabled-proprietary"), silent("gsp-disabled-open")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         if (!gsp_disabled(c.facts) || c.facts.driver.flavour == DriverFlavour::open) {
           return {};
         }
         return {
             {"GSP firmware is disabled (EnableGpuFirmware=0); the proprietary module runs without it",
              {gsp_evidence(c.facts)}}};
       }},
      {.id = "driver.registry-keys",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "What the driver's registry file holds (normally Binary: \"\")",
       .remedy =
           "Nothing to do unless the keys are unexpected; "
           "the GSP switch is EnableGpuFirmware in params, not a registry key (RMEdgeTrigger and RmEnableNvGpuFirmwareLoad exist in no driver)",
       .source = "docs/sources.md#driver-files-under-proc-and-sys",
       .explanation =
           "/proc/driver/nvidia/registry lists the registry keys the driver was loaded with "
           "(NVreg_RegistryDwords and similar); on a stock installation it reads `Binary: "
           "\"\"`. Keys there change the driver's behaviour in ways no other finding sees, so "
           "they are shown for whoever reads the report later. Confirm by hand: `cat "
           "/proc/driver/nvidia/registry` and `grep -r NVreg /etc/modprobe.d/`. Info: no effect "
           "on the verdict or the recommendation.",
       .evidence =
           "proc/driver/nvidia/registry: whether it has the `Binary: \"...\"` form, and the "
           "keys inside it.",
       .cases = {fires("registry-keys"), silent("healthy-4gpu")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& reg = c.facts.driver.registry;
         if (!reg || (reg->parsed && reg->binary_keys.empty())) {
           return {};
         }
         if (!reg->parsed) {
           return {{"The driver registry file is not in the expected `Binary: \"...\"` form",
                    {"/proc/driver/nvidia/registry: " + reg->raw}}};
         }
         return {{fmt::format("Binary registry keys were written at run time: {}",
                              fmt::join(reg->binary_keys, ", ")),
                  {"/proc/driver/nvidia/registry: " + reg->raw}}};
       }},
      {.id = "driver.api-mismatch",
       .stage = Stage::host,
       .severity = Severity::fail,
       .severity_from = "info when the driver was reloaded since the mismatch was logged",
       .title = "The NVIDIA user-space components match the loaded kernel module",
       .remedy =
           "Make the versions match: reboot (after a driver upgrade the old module stays loaded), or unload and reload the NVIDIA modules (`rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && modprobe nvidia`) with no GPU process running; "
           "in a container, use the host's driver libraries",
       .source = "docs/sources.md#driver-and-library-version-mismatch",
       .explanation =
           "The kernel log's \"API mismatch\" line means a user-space NVIDIA component "
           "(libcuda, libnvidia-ml, nvidia-smi) of one version talked to a kernel module of "
           "another, and the module refused it. It is the classic state after a driver upgrade "
           "without a reboot: new libraries, old module still loaded. Every CUDA and NVML call "
           "fails; nvidia-smi prints \"Failed to initialize NVML: Driver/library version "
           "mismatch\". Confirm by hand: `cat /proc/driver/nvidia/version` against `modinfo -F "
           "version nvidia` and `nvidia-smi`. Fails the host (no GPU recommended); a mismatch "
           "logged before the driver was last reloaded counts as info.",
       .evidence =
           "The current boot's kernel-log message `NVRM: API mismatch: the client has the "
           "version <X>, but this kernel module has the version <Y>` (575+: `the client "
           "'<name>' (pid <N>) has the version ...`), the last `NVRM: loading` line, and the "
           "loaded module's version (proc/driver/nvidia/version).",
       .reads = {ProbeId::driver, ProbeId::kernel_log},
       .events = log_events({LogEventKind::api_mismatch}),
       .cases = {fires("log-api-mismatch"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         const DriverFacts& driver = c.facts.driver;
         for (const auto& e : c.facts.log.host_events) {
           if (!c.rule->events.judges(e)) {
             continue;
           }
           const EventPtrs one{&e};
           Hit hit{fmt::format("Driver/library version mismatch: {}{}", e.meaning, when(e)),
                   evidence_of(one)};
           if (!driver.version_line.empty()) {
             hit.evidence.push_back("/proc/driver/nvidia/version: " + driver.version_line);
           }
           const bool reloaded_since = !driver.version_text.empty() && !e.kernel_version.empty() &&
                                       driver.version_text != e.kernel_version;
           if (e.before_driver_load || reloaded_since) {
             hit.severity = Severity::info;
             hit.message += fmt::format(
                 " — the driver was reloaded since{}; no longer counted",
                 driver.version_text.empty() ? "" : " (now " + driver.version_text + ")");
             hit.remedy = "Nothing to do unless the mismatch is logged again";
           }
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      {.id = "driver.probe-not-called",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info for a message logged before the last driver reload",
       .title = "The NVIDIA driver probed every NVIDIA device",
       .remedy =
           "Another driver owns those GPUs: unbind it (nouveau: blacklist it and rebuild the initramfs; "
           "vfio-pci: remove the GPU from its ids) and reload the NVIDIA driver",
       .source = "docs/sources.md#other-kernel-log-messages",
       .explanation =
           "\"The NVIDIA probe routine was not called for N device(s)\" means the kernel found "
           "NVIDIA PCI devices that another driver had already claimed (nouveau, vfio-pci for "
           "passthrough, a stale binding), so the nvidia driver never took them. Those GPUs are "
           "invisible to CUDA: a job that expects eight GPUs gets fewer. Confirm by hand: "
           "`lspci -nnk -d 10de:` shows the \"Kernel driver in use\" of each GPU. The verdict "
           "is warn (info when logged before the last driver reload); the GPUs the driver "
           "lists are judged as usual, and --min-gpus fails the check when too few remain.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: The NVIDIA probe routine was not called "
           "for <N> device(s).` and the last `NVRM: loading` line, which tells a message "
           "logged before the driver was reloaded.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::probe_not_called}),
       .cases = {fires("log-probe-routine"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return host_events_rule(c, true); }},
      {.id = "driver.probe-failed",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info for a message logged before the last driver reload",
       .title = "The NVIDIA driver's probe of each device succeeded",
       .remedy =
           "Check the messages before this one for the cause (unsupported GPU, BAR, power); reboot after fixing it",
       .source = "docs/sources.md#other-kernel-log-messages",
       .explanation =
           "The driver tried to take a GPU and gave up (\"probe of ... failed\"): an "
           "unsupported GPU for this branch, BARs not assigned, missing power, or a GPU that "
           "did not answer. That GPU is missing from /proc/driver/nvidia/gpus and from CUDA, so "
           "the job sees fewer GPUs than the machine has. Confirm by hand: `dmesg | grep -i -e "
           "NVRM -e 'probe of'` (the lines just before name the reason) and `lspci -nnk -d "
           "10de:`. The verdict is warn (info when logged before the last driver reload); "
           "another finding usually names the cause.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: The NVIDIA probe routine failed for <N> "
           "device(s).` (and `nvidia: probe of <bus> failed` lines whose address could not be "
           "read), and the last `NVRM: loading` line, which tells a message logged before the "
           "driver was reloaded.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::probe_failed}),
       .cases = {fires("log-probe-routine"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return host_events_rule(c, true); }},
      {.id = "driver.no-gpu-initialized",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info for a message logged before the last driver reload",
       .title = "The driver initialised its GPUs when it loaded",
       .remedy = "Check the messages before this one for the cause and reload the driver; "
                 "with no NVIDIA GPU present, check lspci and the instance type",
       .source = "docs/sources.md#other-kernel-log-messages",
       .explanation =
           "The module loaded but initialised no GPU (\"None of the NVIDIA devices were "
           "initialized\"): /proc/driver/nvidia/gpus is empty and CUDA finds no device. Usual "
           "causes: every GPU failed its probe (the lines before say why), the GPUs are bound "
           "to another driver, or the machine has no NVIDIA GPU at all (a wrong instance type). "
           "Confirm by hand: `lspci -nnk -d 10de:` and `ls /proc/driver/nvidia/gpus`. Warn "
           "(info when logged before the last driver reload); with no GPU listed nothing can be "
           "recommended and --min-gpus fails the check.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: None of the NVIDIA devices were "
           "initialized.` (older drivers: `... graphics adapters ...`) and `NVRM: No NVIDIA "
           "GPU found.`, and the last `NVRM: loading` line, which tells a message logged "
           "before the driver was reloaded.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::no_gpu_initialized}),
       .cases = {fires("cause-legacy-branch"), silent("cause-iommu-fault-p2p")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return host_events_rule(c, true); }},
      {.id = "driver.failure-logged",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info for a message logged before the last driver reload",
       .title = "The driver logged none of its own failure messages",
       .remedy = "Read the kernel log around the line (`dmesg | grep NVRM`) for the GPU and step "
                 "it names",
       .source = k_driver_messages_url,
       .explanation =
           "The driver printed one of the failure messages of its own catalogue (every NVRM: "
           "message of NVIDIA's open kernel modules at the catalogue's tag, each read and put in "
           "a family) that no more specific rule judges: PCI resources or interrupts it could "
           "not set up, a DMA mapping or memory it could not get, a GPU reset that failed, "
           "modules from different installations, an internal step of the resource manager. "
           "The finding names the family, what it means and where the driver prints it, so "
           "that no failure the driver can print passes in silence. The verdict is warn (info "
           "when logged before the last driver reload): the GPUs the driver lists are judged as usual, and "
           "the line says which one it concerns. Confirm by hand: `dmesg | grep NVRM`.",
       .evidence = "The current boot's NVRM: lines whose text has the shape of a failure message "
                   "of the catalogue (include/gpf/knowledge/driver_messages.hpp), and the last "
                   "`NVRM: loading` line, which tells a message logged before the driver was "
                   "reloaded.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::driver_failure}),
       .cases = {fires("log-driver-failure"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return host_events_rule(c, true, [](const LogEvent& e) {
           return std::string(failure_remedy_for_format(e.detail)); // detail: the row's format
         });
       }},
      {.id = "driver.end-of-life",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "The driver branch is still maintained",
       .remedy =
           "Plan an upgrade to a maintained branch (an LTSB such as R580 or R620 for long-lived clusters)",
       .source =
           "https://docs.nvidia.com/datacenter/tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html",
       .explanation =
           "NVIDIA's data-center driver lifecycle table gives each branch an end of life; "
           "after it the branch gets no fixes. "
           "A snapshot is judged as of the date it records (its `date` file), never against today's date; "
           "without one this is not checked.",
       .evidence =
           "The driver branch, data/driver_branches.json, and today's date (a snapshot's `date` file).",
       .cases = {fires("compat-cuda121-driver470"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const DriverView& d = c.job.driver;
         if (!d.kernel_module) {
           return {};
         }
         const auto* row = c.job.matrix->branch(d.kernel_module->major());
         if (!row) {
           return {};
         }
         const auto& today = c.facts.compat.today;
         if (!row->maintained) {
           return {{fmt::format("Driver branch R{} ({}) is no longer maintained", row->branch,
                                row->designation),
                    {d.kernel_module_evidence}}};
         }
         if (!today || !past_end_of_life(*row, *today)) {
           return {};
         }
         return {
             {fmt::format(
                  "Driver branch R{} ({}) reached its end of life in {}: it receives no more fixes",
                  row->branch, row->designation, row->end_of_life_text),
              {d.kernel_module_evidence,
               fmt::format("today: {:04}-{:02}-{:02}", static_cast<int>(today->year()),
                           static_cast<unsigned>(today->month()),
                           static_cast<unsigned>(today->day()))}}};
       }},
      {.id = "driver.newer-than-data",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "The driver branch is one gpu-preflight's data knows",
       .remedy =
           "Update gpu-preflight (its data knows driver branches up to the one named in the finding); "
           "until then judge the branch's lifecycle and GPU support from NVIDIA's release notes by hand",
       .source =
           "https://docs.nvidia.com/datacenter/tesla/drivers/620/supported-drivers-and-cuda-toolkit-versions.html",
       .explanation =
           "The lifecycle table (data/driver_branches.json) and the per-architecture branch limits end at the newest branch NVIDIA had published when the data was last updated. "
           "A newer branch is neither guessed at nor passed in silence: its end of life, the CUDA it runs and the GPUs it drops are not judged, and this says so. "
           "The CUDA checks still apply (a newer driver runs every older toolkit).",
       .evidence =
           "The kernel module's version (/proc/driver/nvidia/version) against the newest branch in data/driver_branches.json.",
       .cases = {fires("compat-newer-than-data"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const DriverView& d = c.job.driver;
         if (!d.kernel_module || !branch_newer_than_data(d.kernel_module->major())) {
           return {};
         }
         return {{fmt::format(
                      "Driver {} (branch R{}): {}", d.kernel_module_text, d.kernel_module->major(),
                      newer_than_data(fmt::format("driver branch R{}", d.kernel_module->major()),
                                      fmt::format("R{}", data_age().newest_branch))),
                  {d.kernel_module_evidence,
                   fmt::format("newest branch in data/driver_branches.json: R{} (data of {})",
                               data_age().newest_branch, data_age().as_of)}}};
       }},
      {.id = "driver.module-version-mismatch",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "All NVIDIA kernel modules have the driver's version",
       .remedy = "Reload the NVIDIA modules (`rmmod nvidia_drm nvidia_modeset nvidia_uvm nvidia; "
                 "modprobe nvidia`) or reboot after finishing the driver upgrade",
       .source = "docs/sources.md#driver-and-library-version-mismatch",
       .explanation =
           "nvidia, nvidia_uvm, nvidia_modeset and nvidia_drm come from one driver release and carry the same version; "
           "a different one means a partial upgrade or a module left over from an older install.",
       .evidence =
           "/sys/module/{nvidia_uvm,nvidia_modeset,nvidia_drm}/version against the driver's version (/proc/driver/nvidia/version).",
       .reads = {ProbeId::compat, ProbeId::driver},
       .cases = {fires("compat-module-version-mismatch"), silent("compat-cuda124-driver535")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const DriverView& d = c.job.driver;
         if (!d.kernel_module) {
           return {};
         }
         std::vector<Hit> hits;
         for (const auto& m : c.facts.compat.modules) {
           if (!m.version || *m.version == *d.kernel_module) {
             continue;
           }
           if (m.name == "nvidia") {
             continue; // the driver's own module: /proc/driver/nvidia/version describes the same
                       // module
           }
           hits.push_back(
               {fmt::format(
                    "Kernel module {} is version {} but the NVIDIA driver is {}: a partial upgrade or a module left loaded from an older install",
                    m.name, m.text, d.kernel_module_text),
                {fmt::format("{}: {}", m.path, m.text), d.kernel_module_evidence}});
         }
         return hits;
       }},
      {.id = "driver.library-version-mismatch",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The user-space driver libraries the job would load match the kernel module",
       .remedy =
           "Reboot (or reload the NVIDIA kernel modules) after a driver upgrade so the kernel module matches the installed libraries; "
           "in a container, let the NVIDIA container toolkit mount the host's libraries instead of baking a driver into the image",
       .source = "docs/sources.md#driver-and-library-version-mismatch",
       .explanation =
           "The kernel module rejects a user-space component of another version (\"API mismatch\" in the kernel log; "
           "NVML reports Driver/library version mismatch). "
           "The usual cause is a driver package upgrade without a reboot, or a container image with its own driver libraries. "
           "A cuda-compat libcuda newer than the module is the exception (forward compatibility).",
       .evidence =
           "libcuda.so.1 and libnvidia-ml.so.1 as the dynamic loader would find them for the job (LD_LIBRARY_PATH, /etc/ld.so.cache, default directories; "
           "inside --root), their versions from the file names their links resolve to, against the kernel module's version.",
       .reads = {ProbeId::compat, ProbeId::driver},
       .cases = {fires("compat-lib-mismatch"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const DriverView& d = c.job.driver;
         if (!d.kernel_module) {
           return {};
         }
         std::vector<Hit> hits;
         for (const DriverLibrary* lib : {&c.facts.compat.libcuda, &c.facts.compat.libnvidia_ml}) {
           if (!lib->version || lib->in_stubs || *lib->version == *d.kernel_module) {
             continue;
           }
           if (lib == &c.facts.compat.libcuda && d.forward_compat) {
             continue; // cuda-compat: expected to be newer (cuda.forward-compat explains it)
           }
           Hit hit{
               fmt::format(
                   "{} as the loader finds it is version {} but the kernel module is {}: the driver refuses the library (\"API mismatch\" in the kernel log; "
                   "NVML: Driver/library version mismatch; "
                   "CUDA init commonly fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)",
                   lib->soname, lib->version_text, d.kernel_module_text),
               {library_evidence(*lib), d.kernel_module_evidence}};
           if (lib->in_compat) {
             hit.remedy =
                 "The cuda-compat package on the library path is older than the installed driver: remove its directory from LD_LIBRARY_PATH / ld.so.conf (a newer driver needs no compat package)";
           }
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      {.id = "driver.libcuda-stub-first",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The toolkit's stub libcuda does not shadow the driver's",
       .remedy =
           "Remove the stubs directory (e.g. /usr/local/cuda/lib64/stubs) from LD_LIBRARY_PATH and ld.so.conf; "
           "the stubs exist for linking only",
       .source = "docs/sources.md#driver-and-library-version-mismatch",
       .explanation =
           "The CUDA toolkit ships a stub libcuda under lib64/stubs so programs link without a driver. "
           "When it is first in the loader's search path the job loads it instead of the driver's library, and every CUDA call fails.",
       .evidence =
           "The first libcuda.so.1 in the loader's search order and whether its path has a stubs/ component.",
       .reads = {ProbeId::compat},
       .cases = {fires("compat-stub-first"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& lib = c.facts.compat.libcuda;
         if (!lib.path || !lib.in_stubs) {
           return {};
         }
         std::vector<std::string> evidence{library_evidence(lib)};
         if (lib.via == "LD_LIBRARY_PATH") {
           evidence.push_back("LD_LIBRARY_PATH=" + c.facts.env.get("LD_LIBRARY_PATH").value_or(""));
         }
         return {
             {"The first libcuda.so.1 the loader finds is the CUDA toolkit's link-time stub: it shadows the driver's library and every CUDA call fails (CUDA_ERROR_STUB_LIBRARY, 34)",
              std::move(evidence)}};
       }},
      {.id = "driver.libraries-not-checked",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "The driver libraries could be compared with the kernel module",
       .remedy =
           "Include the driver libraries (libcuda.so.*, libnvidia-ml.so.* and their links, etc/ld.so.cache) in the snapshot, or run on the host itself",
       .source = "docs/sources.md#driver-and-library-version-mismatch",
       .explanation =
           "A snapshot without driver libraries proves nothing about them: the match is reported as not checked, never as a mismatch or a missing library. "
           "The same holds for a library whose file name carries no version.",
       .evidence =
           "Whether the loader's search found libcuda.so.1 / libnvidia-ml.so.1 and whether their names carry a version.",
       .cases = {fires("log-not-readable"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& compat = c.facts.compat;
         if (!compat.ran || !c.facts.driver.loaded) {
           return {};
         }
         if (compat.snapshot && !compat.libcuda.path && !compat.libnvidia_ml.path) {
           return {
               {"The snapshot records no NVIDIA driver libraries, so whether they match the kernel module was not checked",
                {"libcuda.so.1, libnvidia-ml.so.1: not in the snapshot (LD_LIBRARY_PATH, etc/ld.so.cache, default directories)"}}};
         }
         std::vector<Hit> hits;
         for (const DriverLibrary* lib : {&compat.libcuda, &compat.libnvidia_ml}) {
           if (lib->path && !lib->version && !lib->in_stubs && !c.facts.is_wsl2()) {
             hits.push_back(
                 {fmt::format(
                      "{} carries no driver version in its file name, so whether it matches the kernel module was not checked",
                      lib->soname),
                  {library_evidence(*lib)}});
           }
         }
         return hits;
       }},
      {.id = "driver.libcuda-not-found",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The dynamic loader finds a libcuda.so.1 for the job",
       .remedy =
           "Install the driver's user-space libraries (the libcuda / nvidia-utils packages of the same version as the kernel module) or, in a container, start it with the NVIDIA runtime (--gpus all) so they are mounted",
       .source = "docs/sources.md#driver-and-library-version-mismatch",
       .explanation =
           "Every CUDA program loads libcuda.so.1 at run time; "
           "without it CUDA cannot start even though the kernel driver is loaded. "
           "Checked on the live host only (and only when the CUDA probe did not run, which reports its own load error).",
       .evidence =
           "The loader's search for libcuda.so.1: LD_LIBRARY_PATH, /etc/ld.so.cache, default directories.",
       .cases = {silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& compat = c.facts.compat;
         if (!compat.ran || compat.snapshot || !c.facts.driver.loaded || c.facts.is_wsl2() ||
             compat.libcuda.path || c.facts.cuda.ran) {
           return {};
         }
         std::vector<std::string> evidence;
         for (const auto& step : compat.libcuda.searched) {
           if (evidence.size() == 8) {
             evidence.push_back("...");
             break;
           }
           evidence.push_back(fmt::format("{} ({}): {}", step.dir, step.via, step.result));
         }
         return {{"The dynamic loader would find no libcuda.so.1 for the job: CUDA cannot start",
                  std::move(evidence)}};
       }},
  };
  return rows;
}

} // namespace gpf
