// Why the NVIDIA module does not load: the module-load probe's parsers, the kernel refusing the
// module (module signing, lockdown) on the module-* fixtures, the benign cases beside them, and
// the capture and replay of the probe's inputs.
#include "gpf/capture/snapshot.hpp"
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/probes/parsers.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;

namespace {

bool has(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

bool any_evidence(const Finding& f, std::string_view part) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const std::string& e) { return has(e, part); });
}

// No finding of the assessment speaks of module signing.
bool says_nothing_of_signing(const Assessment& a) {
  return std::none_of(a.findings.begin(), a.findings.end(), [](const Finding& f) {
    return has(f.message, "refused") || has(f.remedy, "mokutil") || has(f.remedy, "Secure Boot");
  });
}

} // namespace

TEST_CASE("lockdown file: the bracketed mode is the active one") {
  CHECK(parse_lockdown("none [integrity] confidentiality\n") ==
        std::optional<std::string>("integrity"));
  CHECK(parse_lockdown("[none] integrity confidentiality") == std::optional<std::string>("none"));
  CHECK(parse_lockdown("none integrity confidentiality") == std::nullopt);
  CHECK(parse_lockdown("") == std::nullopt);
  CHECK(parse_lockdown("[] x") == std::nullopt);
}

TEST_CASE("SecureBoot EFI variable: the fifth byte after the attributes") {
  using namespace std::string_literals;
  CHECK(parse_secure_boot_variable("\x06\x00\x00\x00\x01"s) == std::optional<bool>(true));
  CHECK(parse_secure_boot_variable("\x06\x00\x00\x00\x00"s) == std::optional<bool>(false));
  CHECK(parse_secure_boot_variable("\x06\x00\x00\x00\x02"s) == std::nullopt);
  CHECK(parse_secure_boot_variable("\x01"s) == std::nullopt);
  CHECK(parse_secure_boot_variable("") == std::nullopt);
}

TEST_CASE("NVIDIA module file names, not the in-tree nvidiafb or forcedeth") {
  CHECK(nvidia_module_name("nvidia.ko") == std::optional<std::string>("nvidia"));
  CHECK(nvidia_module_name("nvidia-uvm.ko.zst") == std::optional<std::string>("nvidia-uvm"));
  CHECK(nvidia_module_name("nvidia_drm.ko.xz") == std::optional<std::string>("nvidia-drm"));
  CHECK(nvidia_module_name("nvidia-modeset.ko.gz") == std::optional<std::string>("nvidia-modeset"));
  CHECK(nvidia_module_name("nvidia-peermem.ko") == std::optional<std::string>("nvidia-peermem"));
  for (std::string_view other : {"nvidiafb.ko", "forcedeth.ko.zst", "nvidia.ko.bak", "nvidia",
                                 "nvidia-uvm.o", ".ko", "i2c-nvidia-gpu.ko"}) {
    INFO(other);
    CHECK_FALSE(nvidia_module_name(other));
  }
}

TEST_CASE("build-log tail: the first errors, then the last lines") {
  const auto tail = build_log_tail("make -C /lib/modules/6.8.0-45-generic/build\n"
                                   "  CC [M]  nvidia/nv.o\n"
                                   "nvidia/nv.c:42:10: error: implicit declaration of 'x'\n"
                                   "\n"
                                   "make[2]: *** [nvidia/nv.o] Error 1\n"
                                   "make: *** [modules] Error 2\n",
                                   3);
  REQUIRE(tail.size() == 3);
  CHECK(has(tail[0], "error: implicit declaration"));
  CHECK(has(tail[1], "make[2]: *** [nvidia/nv.o] Error 1"));
  CHECK(tail[2] == "make: *** [modules] Error 2");
  CHECK(build_log_tail("", 5).empty());
  CHECK(build_log_tail("a\nb\nc\n", 2) == std::vector<std::string>{"b", "c"});
}

// https://github.com/RinCat/RTL88x2BU-Linux-Driver/issues/114 and
// https://github.com/bottlerocket-os/bottlerocket/issues/4218: lockdown refuses the unsigned
// module; the host keeps DKMS's certificate, so the remedy enrols that one.
TEST_CASE("fixture: lockdown refuses the module: the line, Secure Boot, lockdown and the key") {
  const auto r = check_fixture("module-refused-lockdown");
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK(r.facts.module_load.secure_boot == std::optional<bool>(true));
  CHECK(r.facts.module_load.lockdown == std::optional<std::string>("integrity"));
  CHECK(r.facts.module_load.signing_keys == std::vector<std::string>{"var/lib/dkms/mok.pub"});
  const auto* f = finding(r.assessment, "driver.not-loaded");
  REQUIRE(f);
  CHECK(has(f->message, "the kernel refused to load it"));
  CHECK(has(f->message, "lockdown"));
  CHECK(any_evidence(
      *f, "Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7"));
  CHECK(any_evidence(*f, "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c: value 1 (Secure Boot "
                         "enabled)"));
  CHECK(any_evidence(*f, "/sys/kernel/security/lockdown: none [integrity] confidentiality"));
  CHECK(any_evidence(*f, "/var/lib/dkms/mok.pub: present"));
  CHECK(has(f->remedy, "mokutil --import /var/lib/dkms/mok.pub"));
  CHECK(has(f->remedy, "5.11.0-41-generic"));
  CHECK_FALSE(has(f->remedy, "`modprobe nvidia`"));
  // The boot's "Kernel is locked down from EFI Secure Boot mode" line is no refusal.
  CHECK(r.facts.log.host_events.size() == 1);
}

// https://github.com/bottlerocket-os/bottlerocket/issues/4218: lockdown raised by configuration on
// a node booted without UEFI; neither a Machine Owner Key nor Secure Boot is the fix.
TEST_CASE("fixture: lockdown set by configuration refuses the module: lower it, no MOK") {
  const auto r = check_fixture("module-refused-lockdown-config");
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK_FALSE(r.facts.module_load.efi);
  CHECK(r.facts.module_load.lockdown == std::optional<std::string>("integrity"));
  const auto* f = finding(r.assessment, "driver.not-loaded");
  REQUIRE(f);
  CHECK(has(f->message, "lockdown"));
  CHECK(any_evidence(
      *f, "Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7"));
  CHECK(any_evidence(*f, "/sys/firmware/efi: No such file or directory"));
  CHECK(has(f->remedy, "Kernel lockdown is integrity while Secure Boot is off"));
  CHECK(has(f->remedy, "settings.kernel.lockdown"));
  CHECK(has(f->remedy, "6.1.106"));
  CHECK_FALSE(has(f->remedy, "mokutil --import"));
  CHECK_FALSE(has(f->remedy, "`modprobe nvidia`"));
}

// https://github.com/NVIDIA/gpu-operator/issues/1726: Secure Boot refuses the driver container's
// unsigned build on GB200 nodes; no certificate on the host, so the remedy says how to make one.
TEST_CASE("fixture: Secure Boot rejects an unsigned module: the line and a MOK to create") {
  const auto r = check_fixture("module-refused-unsigned");
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK(r.facts.module_load.secure_boot == std::optional<bool>(true));
  const auto* f = finding(r.assessment, "driver.not-loaded");
  REQUIRE(f);
  CHECK(any_evidence(*f, "Loading of unsigned module is rejected"));
  CHECK(has(f->message, "the kernel refused to load it"));
  CHECK(has(f->remedy, "dkms generate_mok"));
  CHECK(has(f->remedy, "6.8.0-1029-gke"));
  CHECK_FALSE(has(f->remedy, "`modprobe nvidia`"));
}

// https://github.com/siderolabs/talos/issues/7174: signatures enforced with Secure Boot off; a
// Machine Owner Key would not be trusted, so the remedy does not offer one.
TEST_CASE("fixture: a module key rejected with Secure Boot off: enforcement, not MOK") {
  const auto r = check_fixture("module-refused-unavailable-key");
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK(r.facts.module_load.secure_boot == std::optional<bool>(false));
  const auto* f = finding(r.assessment, "driver.not-loaded");
  REQUIRE(f);
  CHECK(any_evidence(*f, "Loading of module with unavailable key is rejected"));
  CHECK(any_evidence(*f, "value 0 (Secure Boot disabled)"));
  CHECK(has(f->message, "a key the kernel does not trust"));
  CHECK(has(f->remedy, "module.sig_enforce=1"));
  CHECK(has(f->remedy, "6.1.25-talos"));
  CHECK_FALSE(has(f->remedy, "mokutil --import"));
}

TEST_CASE("fixture: Secure Boot on with a signed module that loaded: nothing about signing") {
  const auto r = check_fixture("module-signed-secure-boot");
  CHECK(r.assessment.verdict == Verdict::pass);
  CHECK(r.facts.module_load.secure_boot == std::optional<bool>(true));
  CHECK(r.facts.log.host_events.empty());
  CHECK(says_nothing_of_signing(r.assessment));
}

// https://askubuntu.com/questions/760780: a module loaded unsigned where signatures are not
// enforced taints the kernel; that is no refusal.
TEST_CASE("fixture: the benign unsigned-module taint is no refusal") {
  const auto r = check_fixture("module-unsigned-taint");
  CHECK(r.assessment.verdict == Verdict::pass);
  CHECK(r.facts.log.host_events.empty());
  CHECK(says_nothing_of_signing(r.assessment));
}

TEST_CASE("driver not loaded with only the taint line: today's finding, unchanged") {
  Facts f;
  f.log = scan_kernel_log("[    6.101102] nvidia: module verification failed: signature and/or "
                          "required key missing - tainting kernel\n");
  f.module_load.ran = true;
  f.module_load.secure_boot = false;
  const auto a = assess(f, builtin_rules(), {});
  const auto* hit = finding(a, "driver.not-loaded");
  REQUIRE(hit);
  CHECK(hit->message ==
        "The NVIDIA kernel driver is not loaded: /proc/driver/nvidia does not exist");
  CHECK(has(hit->remedy, "modprobe nvidia"));
  CHECK(hit->evidence ==
        std::vector<std::string>{"/proc/driver/nvidia: No such file or directory"});
}

TEST_CASE("a refusal of another module (modprobe names it) is not the NVIDIA driver's") {
  Facts f;
  f.log =
      scan_kernel_log("modprobe: ERROR: could not insert 'evdi': Key was rejected by service\n");
  const auto a = assess(f, builtin_rules(), {});
  const auto* hit = finding(a, "driver.not-loaded");
  REQUIRE(hit);
  CHECK_FALSE(has(hit->message, "refused"));
}

TEST_CASE("snapshot captures the module-load inputs and the replay finds the same") {
  auto host = Host::snapshot(gpf::test::fixture("module-refused-lockdown")).value();
  gpf::test::TempDir out;
  CaptureOptions options;
  options.out = out.path / "snap";
  ProbeOptions probe_options;
  probe_options.no_cuda = true;
  REQUIRE(capture_snapshot(host, probe_options, options).ok());
  const auto replay = Host::snapshot(options.out).value();
  const Facts a = collect_facts(
      Host::snapshot(gpf::test::fixture("module-refused-lockdown")).value(), probe_options);
  const Facts b = collect_facts(replay, probe_options);
  CHECK(b.module_load.secure_boot == a.module_load.secure_boot);
  CHECK(b.module_load.lockdown == a.module_load.lockdown);
  CHECK(b.module_load.signing_keys == a.module_load.signing_keys);
  const auto fa = assess(a, builtin_rules(), {});
  const auto fb = assess(b, builtin_rules(), {});
  const auto* x = finding(fa, "driver.not-loaded");
  const auto* y = finding(fb, "driver.not-loaded");
  REQUIRE(x);
  REQUIRE(y);
  CHECK(x->message == y->message);
  CHECK(x->evidence == y->evidence);
  CHECK(x->remedy == y->remedy);
}

// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/526: after a kernel update DKMS could
// not build the module; the previous kernel still has one.
TEST_CASE("fixture: no module for the running kernel: the kernel that has one and DKMS's log") {
  const auto r = check_fixture("module-missing-for-kernel");
  CHECK(r.assessment.verdict == Verdict::fail);
  const ModuleLoadFacts& m = r.facts.module_load;
  CHECK(m.module_tree_listed);
  std::vector<std::string> names;
  for (const auto& file : m.module_files) {
    CHECK(file.release == "6.3.9-zen1-1-zen");
    names.push_back(file.name);
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"nvidia", "nvidia-drm", "nvidia-modeset", "nvidia-uvm"});
  CHECK(m.dkms.empty()); // "added", never built
  REQUIRE(m.dkms_logs.size() == 1);
  CHECK(m.dkms_logs[0].tail.back() == "make: *** [Makefile:81: modules] Error 2");
  const auto* f = finding(r.assessment, "driver.not-loaded");
  REQUIRE(f);
  CHECK(has(f->message, "no nvidia module for the running kernel 6.4.1-zen1-1-zen"));
  CHECK(has(f->message, "kernel 6.3.9-zen1-1-zen has one"));
  CHECK(has(f->message, "DKMS build log says \"make: *** [Makefile:81: modules] Error 2\""));
  CHECK(any_evidence(*f, "/lib/modules/6.3.9-zen1-1-zen/updates/dkms/nvidia.ko.zst"));
  CHECK(any_evidence(*f, "/var/lib/dkms/nvidia/390.157/build/make.log: make[1]: *** "
                         "[Makefile:2024: /var/lib/dkms/nvidia/390.157/build] Error 2"));
  CHECK(has(f->remedy, "linux-headers-6.4.1-zen1-1-zen"));
  CHECK(has(f->remedy, "dkms install nvidia/390.157 -k 6.4.1-zen1-1-zen"));
  CHECK(has(f->remedy, "boot it"));
}

TEST_CASE("the running kernel has the module: no cause named, today's text") {
  Facts f;
  f.kernel.release = "6.8.0-45-generic";
  f.module_load.ran = true;
  f.module_load.module_tree_listed = true;
  f.module_load.module_files.push_back(
      {"6.8.0-45-generic", "lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst", "nvidia"});
  f.module_load.dkms_logs.push_back({"550.54.14",
                                     "var/lib/dkms/nvidia/550.54.14/build/make.log",
                                     {"make: *** [modules] Error 2"}});
  const auto a = assess(f, builtin_rules(), {});
  const auto* hit = finding(a, "driver.not-loaded");
  REQUIRE(hit);
  CHECK(hit->message ==
        "The NVIDIA kernel driver is not loaded: /proc/driver/nvidia does not exist");
}

TEST_CASE("snapshot keeps the module files as names and the DKMS log; the replay agrees") {
  auto host = Host::snapshot(gpf::test::fixture("module-missing-for-kernel")).value();
  gpf::test::TempDir out;
  CaptureOptions options;
  options.out = out.path / "snap";
  ProbeOptions probe_options;
  probe_options.no_cuda = true;
  REQUIRE(capture_snapshot(host, probe_options, options).ok());
  const Facts a = collect_facts(host, probe_options);
  const Facts b = collect_facts(Host::snapshot(options.out).value(), probe_options);
  REQUIRE(b.module_load.module_files.size() == a.module_load.module_files.size());
  CHECK(b.module_load.dkms_logs.size() == 1);
  const auto fa = assess(a, builtin_rules(), {});
  const auto fb = assess(b, builtin_rules(), {});
  const auto* x = finding(fa, "driver.not-loaded");
  const auto* y = finding(fb, "driver.not-loaded");
  REQUIRE(x);
  REQUIRE(y);
  CHECK(x->message == y->message);
  CHECK(x->evidence == y->evidence);
  CHECK(x->remedy == y->remedy);
}

TEST_CASE("fixture: an absent driver version file is not an unreadable one") {
  const auto r = check_fixture("driver-version-file-absent");
  const ProbeStatus* driver = r.facts.probe("driver");
  REQUIRE(driver);
  CHECK(driver->state == ProbeState::ok);
  CHECK(r.facts.driver.version_text == "550.54.14");
  CHECK(r.facts.driver.version_source == "sys/module/nvidia/version");
  CHECK_FALSE(finding(r.assessment, "probe.failed"));
}

TEST_CASE("the DKMS tree is read within bounds: newest versions, kernels and architectures cut") {
  gpf::test::TempDir t;
  // 40 versions (1.0 .. 40.0, the newest last in no particular place), each built for one kernel;
  // version 40.0 built for 40 kernels, one of them for 6 architectures
  for (int v = 1; v <= 40; ++v) {
    t.write(fmt::format("var/lib/dkms/nvidia/{}.0/6.8.0-1/x86_64/module/nvidia.ko", v), "");
  }
  for (int k = 2; k <= 40; ++k) {
    t.write(fmt::format("var/lib/dkms/nvidia/40.0/6.8.0-{}/x86_64/module/nvidia.ko", k), "");
  }
  for (const char* arch : {"a1", "a2", "a3", "a4", "a5"}) {
    t.write(fmt::format("var/lib/dkms/nvidia/40.0/6.8.0-1/{}/module/nvidia.ko", arch), "");
  }
  for (const char* name :
       {"nvidia", "nvidia-uvm", "nvidia-drm", "nvidia-modeset", "nvidia_peermem"}) {
    for (const char* suffix : {".ko", ".ko.xz", ".ko.zst", ".ko.gz"}) {
      t.write(fmt::format("var/lib/dkms/nvidia/39.0/6.8.0-1/x86_64/module/{}{}", name, suffix), "");
    }
  }
  ProbeOptions probe_options;
  probe_options.no_cuda = true;
  const Facts f = collect_facts(Host::snapshot(t.path).value(), probe_options);
  const auto& dkms = f.module_load.dkms;
  std::set<std::string> versions;
  std::set<std::string> kernels_of_40;
  std::size_t arches_of_40_1 = 0;
  for (const auto& b : dkms) {
    versions.insert(b.version);
    if (b.version == "40.0") {
      kernels_of_40.insert(b.kernel);
      arches_of_40_1 += b.kernel == "6.8.0-1" ? 1 : 0;
    }
    CHECK(b.modules.size() <= 16);
  }
  CHECK(versions.size() == 16);
  CHECK(versions.count("40.0") == 1); // the newest kept, by number not by name
  CHECK(versions.count("25.0") == 1);
  CHECK(versions.count("24.0") == 0);
  CHECK(versions.count("9.0") == 0); // "9.0" > "40.0" as a string
  CHECK(kernels_of_40.size() == 32);
  CHECK(arches_of_40_1 == 4);
  const ProbeStatus* status = f.probe("module-load");
  REQUIRE(status);
  const auto cut = fmt::format("{}", fmt::join(status->cut, "\n"));
  INFO(cut);
  CHECK(has(cut, "var/lib/dkms/nvidia (the newest 16 of 40 versions)"));
  CHECK(has(cut, "var/lib/dkms/nvidia/40.0 (the first 32 kernels of 40 entries)"));
  CHECK(has(cut, "architectures"));
  CHECK(has(cut, "var/lib/dkms/nvidia/39.0/6.8.0-1/x86_64/module (the first 16 NVIDIA modules)"));
}
