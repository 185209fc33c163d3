// Signature matching and decode tables: every signature row, every Xid format variant, every
// RM_INIT_* / NV_STATUS / Xid / recovery-action row, and every PCI address form.
#include "gpf/knowledge/kernel_log_tables.hpp"
#include "gpf/probes/kernel_log_signatures.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <fstream>
#include <set>

using namespace gpf;

namespace {

std::optional<Recognised> match(std::initializer_list<std::string_view> messages) {
  const std::vector<std::string_view> v(messages);
  return match_signature(v);
}

struct EventCase {
  std::vector<std::string_view> messages;
  LogEventKind kind;
  std::optional<std::string> bus;
  std::size_t consumed = 1;
};

} // namespace

TEST_CASE("every signature: kind, attribution and lines used") {
  const std::vector<EventCase> cases{
      {{"NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."},
       LogEventKind::xid,
       "0000:3b:00.0"},
      {{"NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x26:0xffff:1481)"},
       LogEventKind::rm_init_failed,
       "0000:0a:00.0"},
      {{"NVRM: RmInitAdapter failed! (0x30:0xffffffff:858)"},
       LogEventKind::rm_init_failed,
       std::nullopt},
      {{"NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 0"},
       LogEventKind::rm_init_minor,
       "0000:0a:00.0"},
      {{"NVRM: rm_init_adapter failed for device bearing minor number 0"},
       LogEventKind::rm_init_minor,
       std::nullopt},
      {{"NVRM: API mismatch: the client has the version 550.67, but",
        "NVRM: this kernel module has the version 550.54.14.  Please",
        "NVRM: make sure that this kernel module and all NVIDIA driver",
        "NVRM: components have the same version.",
        "NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=a, x"},
       LogEventKind::api_mismatch,
       std::nullopt,
       4},
      {{"NVRM: API mismatch: the client 'nvidia-smi' (pid 4711)",
        "NVRM: has the version 580.65.06, but this kernel module has",
        "NVRM: the version 575.57.08.  Please make sure that this",
        "NVRM: kernel module and all NVIDIA driver components", "NVRM: have the same version."},
       LogEventKind::api_mismatch,
       std::nullopt,
       5},
      {{"NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b80)",
        "NVRM: installed in this system is not supported by the",
        "NVRM: NVIDIA 550.54.14 driver release.",
        "NVRM: Please see 'Appendix A - Supported NVIDIA GPU Products'"},
       LogEventKind::not_supported,
       "0000:01:00.0",
       3},
      {{"NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1db6)",
        "NVRM: installed in this system is not supported by open",
        "NVRM: nvidia.ko because it does not include the required GPU",
        "NVRM: System Processor (GSP)."},
       LogEventKind::not_supported_open,
       "0000:01:00.0",
       4},
      {{"NVRM: The NVIDIA GPU 0000:41:00.0",
        "NVRM: (PCI ID: 10de:2330) installed in this system has",
        "NVRM: fallen off the bus and is not responding to commands."},
       LogEventKind::fallen_off_bus,
       "0000:41:00.0",
       3},
      {{"NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:",
        "NVRM: BAR1 is 0M @ 0x0 (PCI:0000:01:00.0)"},
       LogEventKind::bar_invalid,
       "0000:01:00.0",
       2},
      {{"NVRM: BAR0 is 0M @ 0x0 (PCI:0000:02:00.0)"}, LogEventKind::bar_invalid, "0000:02:00.0"},
      // a BAR with its size but no address: the driver prints the same message (nv-pci.c)
      {{"NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:",
        "NVRM: BAR1 is 16384M @ 0x0 (PCI:0000:03:00.0)"},
       LogEventKind::bar_invalid,
       "0000:03:00.0",
       2},
      {{"NVRM: The NVIDIA probe routine was not called for 1 device(s)."},
       LogEventKind::probe_not_called,
       std::nullopt},
      {{"NVRM: The NVIDIA probe routine failed for 2 device(s)."},
       LogEventKind::probe_failed,
       std::nullopt},
      {{"nvidia: probe of 0000:01:00.0 failed with error -1"},
       LogEventKind::probe_failed,
       "0000:01:00.0"},
      {{"NVRM: None of the NVIDIA devices were initialized."},
       LogEventKind::no_gpu_initialized,
       std::nullopt},
      {{"NVRM: None of the NVIDIA graphics adapters were initialized!"},
       LogEventKind::no_gpu_initialized,
       std::nullopt},
      {{"NVRM: No NVIDIA GPU found."}, LogEventKind::no_gpu_initialized, std::nullopt},
      {{"NVRM: GPU 0000:65:00.0: GPU does not have the necessary power cables connected."},
       LogEventKind::power_cables,
       "0000:65:00.0"},
      {{"NVRM: GPU 0000:01:00.0: GPU has fallen off the bus."},
       LogEventKind::fallen_off_bus,
       "0000:01:00.0"},
      {{"NVRM: GPU at 0000:01:00.0 has fallen off the bus."},
       LogEventKind::fallen_off_bus,
       "0000:01:00.0"},
      {{"NVRM: GPU at PCI:0000:01:00: GPU has fallen off the bus."},
       LogEventKind::fallen_off_bus,
       "0000:01:00.0"},
      {{"NVRM: GPU0 RmInitAdapter: Cannot initialize GSP firmware RM"},
       LogEventKind::gsp_firmware,
       std::nullopt},
      {{"NVRM: RmInitAdapter: Cannot initialize GSP firmware RM"},
       LogEventKind::gsp_firmware,
       std::nullopt},
      {{"NVRM: GPU 0000:3b:00.0: GSP-RM proxy boot command failed."},
       LogEventKind::gsp_firmware,
       "0000:3b:00.0"},
      {{"NVRM: RmFetchGspRmImages: No firmware image found"},
       LogEventKind::gsp_firmware,
       std::nullopt},
      {{"nvidia 0000:3b:00.0: Direct firmware load for nvidia/550.54.14/gsp_ga10x.bin failed with error -2"},
       LogEventKind::gsp_firmware,
       "0000:3b:00.0"},
      {{"nvidia 0000:3b:00.0: firmware: loading /lib/firmware/nvidia/550.54.14/gsp_tu10x.bin failed with error -13"},
       LogEventKind::gsp_firmware,
       "0000:3b:00.0"},
      {{"NVRM: A GPU crash dump has been created. If possible, please run",
        "NVRM: nvidia-bug-report.sh as root"},
       LogEventKind::crash_dump,
       std::nullopt},
      {{"nouveau 0000:01:00.0: DRM: VRAM: 8192 MiB"}, LogEventKind::nouveau, "0000:01:00.0"},
      // Why a DMA/BAR set-up failed (evidence beside RmInitAdapter), PCI core, DRM, IOMMU, vfio.
      {{"pci 0000:18:00.0: BAR 1: no space for [mem size 0x4000000000 64bit pref]"},
       LogEventKind::dma_setup,
       "0000:18:00.0"},
      {{"pci 0000:18:00.0: BAR 1: failed to assign [mem size 0x4000000000 64bit pref]"},
       LogEventKind::dma_setup,
       "0000:18:00.0"},
      {{"nvidia 0000:01:00.0: [drm] Cannot reserve BAR2: -16"},
       LogEventKind::dma_setup,
       "0000:01:00.0"},
      {{"DMAR: [DMA Read NO_PASID] Request device [18:00.0] fault addr 0xfffff000 [fault reason "
        "0x06] PTE Read access is not set"},
       LogEventKind::dma_setup,
       "0000:18:00.0"},
      {{"AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000d address=0xfffff000 flags=0x0020] "
        "device=c1:00.0"},
       LogEventKind::dma_setup,
       "0000:c1:00.0"},
      {{"nvidia 0000:c1:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000d "
        "address=0xfffff000 flags=0x0020]"},
       LogEventKind::dma_setup,
       "0000:c1:00.0"},
      {{"vfio-pci 0000:01:00.0: BAR 1: can't reserve [mem 0x38000000000-0x3bfffffffff 64bit pref]"},
       LogEventKind::dma_setup,
       "0000:01:00.0"},
  };
  for (const auto& c : cases) {
    INFO(c.messages.front());
    const auto r = match_signature(c.messages);
    REQUIRE(r);
    CHECK(r->what == Recognised::What::event);
    CHECK(r->event.kind == c.kind);
    CHECK(r->event.bus_id == c.bus);
    CHECK(r->consumed == c.consumed);
    CHECK_FALSE(r->event.meaning.empty());
  }
}

TEST_CASE("every signature row is exercised by a case above or below") {
  // The table's names, so a new row without a test is noticed.
  const std::set<std::string_view> covered{"xid",
                                           "rm-init-adapter",
                                           "rm-init-minor",
                                           "api-mismatch",
                                           "the-nvidia-gpu",
                                           "bar-invalid",
                                           "bar-zero",
                                           "probe-not-called",
                                           "probe-failed",
                                           "none-initialized",
                                           "none-initialized-old",
                                           "no-gpu-found",
                                           "power-cables",
                                           "fallen-off-bus",
                                           "gsp-cannot-init",
                                           "gsp-proxy-boot",
                                           "gsp-no-image",
                                           "crash-dump",
                                           "gpu-uuid",
                                           "loading",
                                           "firmware-load",
                                           "firmware-path",
                                           "probe-of",
                                           "sxid",
                                           "nouveau",
                                           "dmar-fault",
                                           "amd-vi-fault",
                                           "drm-bar",
                                           "pci-bar",
                                           "module-sig-rejected",
                                           "lockdown-module",
                                           "modprobe-key-rejected",
                                           "power-state",
                                           "aer-link",
                                           "link-down",
                                           "legacy-branch",
                                           "symbol-version",
                                           "symbol-unknown"};
  for (const auto& row : signature_table()) {
    INFO(row.name);
    CHECK(covered.count(row.name) == 1);
    CHECK_FALSE(row.pattern.empty());
    CHECK_FALSE(row.source.empty());
    CHECK(row.max_lines >= 1);
    CHECK(row.max_lines <= k_signature_window);
  }
  CHECK(signature_table().size() == covered.size());
}

// Module refusals: the kernel's lines (module signing, lockdown) and modprobe's, as public reports
// quote them (docs/sources.md#module-signing-and-secure-boot).
TEST_CASE("module refusals: the reason each line gives") {
  const std::vector<std::pair<std::string_view, std::string_view>> cases{
      {"Loading of unsigned module is rejected", "unsigned"},
      {"Loading of module with unavailable key is rejected", "unavailable key"},
      {"Loading of module with unsupported crypto is rejected", "unsupported crypto"},
      {"Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
       "lockdown"},
      {"modprobe: ERROR: could not insert 'nvidia': Key was rejected by service", "rejected"},
      {"modprobe: ERROR: could not insert 'nvidia_uvm': Required key not available", "rejected"},
  };
  for (const auto& [line, reason] : cases) {
    INFO(line);
    const auto r = match({line});
    REQUIRE(r);
    CHECK(r->event.kind == LogEventKind::module_refused);
    CHECK(r->event.detail == reason);
    CHECK_FALSE(r->event.bus_id);
    CHECK_FALSE(r->event.meaning.empty());
  }
  // A taint is not a refusal; another module's refusal says nothing about the NVIDIA driver.
  for (std::string_view m :
       {"nvidia: module verification failed: signature and/or required key missing - tainting "
        "kernel",
        "modprobe: ERROR: could not insert 'evdi': Key was rejected by service",
        "Loading compiled-in X.509 certificates"}) {
    INFO(m);
    CHECK_FALSE(match({m}));
  }
}

TEST_CASE("lines that look alike but are not signatures") {
  for (std::string_view m :
       {"pci 0000:18:00.0: BAR 1: assigned [mem 0x38000000000-0x3bfffffffff 64bit pref]",
        "DMAR: DRHD: handling fault status reg 2", "DMAR: IOMMU enabled",
        "AMD-Vi: Interrupt remapping enabled",
        "vfio-pci 0000:01:00.0: enabling device (0000 -> 0003)",
        "[drm] Cannot reserve BAR2: -16", // names no device: nothing to attach it to
        "NVRM: Persistence mode is deprecated and will be removed in a future release.",
        "nvidia 0000:3b:00.0: Direct firmware load for nvidia/550.54.14/gsp_log_ga10x.bin failed "
        "with error -2",
        "nouveau: detected PR support, will not use DSM", "NVRM: Xid (PCI:0000:3b:00): garbage",
        "NVRM: RmInitAdapter failed! (zz)", "NVRM: GPU at PCI:0000:3b:00: no uuid here",
        "nvidia: probe of 0000:01:00.0 returned 0", "nvme nvme0: I/O 12 QID 4 timeout",
        "NVRM: loading NVIDIA UNIX driver with no version",
        "NVRM: BAR1 is 256M @ 0xf0000000 (PCI:0000:3b:00.0)", "NVRM: BAR1 is M @ 0x0", ""}) {
    INFO(m);
    CHECK_FALSE(match({m}));
  }
}

TEST_CASE("Xid format variants of every driver generation") {
  struct XidCase {
    std::string_view line;
    unsigned xid;
    std::optional<unsigned> gi, ci, caused_by;
    std::string detail;
  };
  const XidCase cases[] = {
      // 515–565: pid and name always, '<unknown>' without a channel
      {"NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7)",
       13,
       {},
       {},
       {},
       "Graphics SM Warp Exception on (GPC 7)"},
      // 570+: without a process, no pid/name
      {"NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
       79,
       {},
       {},
       {},
       "GPU has fallen off the bus."},
      // MIG attribution
      {"NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No",
       94,
       5u,
       {},
       {},
       "Contained: CE User Channel (0x9). RST: No, D-RST: No"},
      {"NVRM: Xid (PCI:0000:01:00 GPU-I:05 GPU-CI:01): 31, pid=22, name=app, MMU Fault",
       31,
       5u,
       1u,
       {},
       "MMU Fault"},
      // 575+: the causing Xid
      {"NVRM: Xid (PCI:0000:01:00): 45, pid=9, name=python3, Ch 00000008 caused by previous Xid 79",
       45,
       {},
       {},
       79u,
       "Ch 00000008 caused by previous Xid 79"},
      // R460/470: pid, no name
      {"NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
       63,
       {},
       {},
       {},
       "Row Remapper: New row marked for remapping, reset gpu to activate."},
      // very old: no "PCI:" prefix
      {"NVRM: Xid (0000:01:00): 3, Ch 00000001", 3, {}, {}, {}, "Ch 00000001"},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    const auto r = match({c.line});
    REQUIRE(r);
    CHECK(r->event.xid == c.xid);
    CHECK(r->event.gpu_instance == c.gi);
    CHECK(r->event.compute_instance == c.ci);
    CHECK(r->event.caused_by_xid == c.caused_by);
    CHECK(r->event.detail == c.detail);
  }
  CHECK(match({"NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, x"})->event.bus_id == "0000:10:1c.0");
  CHECK(match({"NVRM: Xid (PCI:0000:01:00): 3, x"})->event.meaning.find("UNK_METHOD") !=
        std::string::npos); // a pre-Ampere code: in the catalog
  CHECK(match({"NVRM: Xid (PCI:0000:01:00): 199, x"})->event.meaning.find("does not list") !=
        std::string::npos);
}

TEST_CASE("Xid 154 carries the recovery action it changed to") {
  const auto r = match(
      {"NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset "
       "Required)"});
  REQUIRE(r);
  CHECK(r->event.recovery_action == "GPU Reset Required");
  CHECK(r->event.meaning.find("recovery action: GPU Reset Required") != std::string::npos);
}

TEST_CASE("RmInitAdapter decodes both fields with the tables, whatever the line number") {
  for (const auto& row : rm_init_table()) {
    INFO(row.name);
    const std::string line =
        fmt::format("NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x{:x}:0x56:{})", row.value,
                    row.value * 7 + 100);
    const auto r = match({line});
    REQUIRE(r);
    CHECK(r->event.init_status == row.value);
    CHECK(r->event.rm_status == 0x56u);
    CHECK(r->event.meaning.find(std::string(row.name)) != std::string::npos);
    CHECK(r->event.meaning.find("NV_ERR_NOT_SUPPORTED (0x56)") != std::string::npos);
  }
  for (const auto& row : nv_status_table()) {
    INFO(row.name);
    const auto r = match(
        {fmt::format("NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x62:0x{:x}:1)", row.value)});
    REQUIRE(r);
    CHECK(r->event.rm_status == row.value);
    CHECK(r->event.meaning.find(fmt::format("{} (0x{:x})", row.name, row.value)) !=
          std::string::npos);
  }
  const auto seed = match({"NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x26:0xffff:1481)"});
  CHECK(
      seed->event.meaning ==
      "failed to initialise: RM_INIT_GPU_DMA_CONFIGURATION_FAILED (0x26), NV_ERR_GENERIC (0xffff) — the driver could "
      "not configure the GPU for DMA");
  const auto unknown = match({"NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x99:0x12345:1)"});
  CHECK(unknown->event.meaning.find("unknown RM_INIT stage 0x99") != std::string::npos);
  CHECK(unknown->event.meaning.find("unknown NV_STATUS 0x12345") != std::string::npos);
}

TEST_CASE("API mismatch extracts both versions in both wordings") {
  const auto old = match({"NVRM: API mismatch: the client has the version 550.67, but",
                          "NVRM: this kernel module has the version 550.54.14.  Please",
                          "NVRM: make sure that this kernel module and all NVIDIA driver",
                          "NVRM: components have the same version."});
  REQUIRE(old);
  CHECK(old->event.client_version == "550.67");
  CHECK(old->event.kernel_version == "550.54.14");
  const auto now = match({"NVRM: API mismatch: the client 'nvidia-smi' (pid 4711)",
                          "NVRM: has the version 580.65.06, but this kernel module has",
                          "NVRM: the version 575.57.08.  Please make sure that this",
                          "NVRM: kernel module and all NVIDIA driver components",
                          "NVRM: have the same version."});
  REQUIRE(now);
  CHECK(now->event.client_version == "580.65.06");
  CHECK(now->event.kernel_version == "575.57.08");
  CHECK(now->event.detail == "client 'nvidia-smi' (pid 4711)");
  // truncated: still an event, versions unknown
  const auto cut = match({"NVRM: API mismatch: the client has the version"});
  REQUIRE(cut);
  CHECK(cut->event.kernel_version.empty());
}

TEST_CASE("companion lines: GPU UUID and the driver's loading line") {
  const auto uuid =
      match({"NVRM: GPU at PCI:0000:3b:00: GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"});
  REQUIRE(uuid);
  CHECK(uuid->what == Recognised::What::gpu_uuid);
  CHECK(uuid->event.bus_id == "0000:3b:00.0");
  CHECK(uuid->uuid == "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
  const auto open =
      match({"NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  "
             "(dvs-builder@U16-I3-B03-4-3)  Thu Feb 22 01:25:25 UTC 2024"});
  REQUIRE(open);
  CHECK(open->what == Recognised::What::driver_load);
  CHECK(open->load.version == "550.54.14");
  CHECK(open->load.flavour == "open");
  const auto prop = match(
      {"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.07  Sat Feb 17 22:55:48 UTC 2024"});
  REQUIRE(prop);
  CHECK(prop->load.version == "535.161.07");
  CHECK(prop->load.flavour == "proprietary");
}

TEST_CASE("every PCI address form pins to dddd:bb:dd.f") {
  const std::pair<std::string_view, std::string_view> forms[] = {
      {"PCI:0000:3b:00", "0000:3b:00.0"}, {"0000:3b:00.0", "0000:3b:00.0"},
      {"0000:3B:00.0", "0000:3b:00.0"},   {"00000000:3b:00.0", "0000:3b:00.0"},
      {"3b:00.0", "0000:3b:00.0"},        {"PCI:0001:af:1f.7", "0001:af:1f.7"},
  };
  for (const auto& [form, bus] : forms) {
    INFO(form);
    CHECK(pci_after(std::string(form) + ": GPU has fallen off the bus.", "") == std::string(bus));
    // the same form inside each signature that names a device
    CHECK(match({fmt::format("NVRM: GPU {}: GPU has fallen off the bus.", form)})->event.bus_id ==
          std::string(bus));
    CHECK(match({fmt::format("nvidia: probe of {} failed with error -1", form)})->event.bus_id ==
          std::string(bus));
  }
  // Xid lines have no function: .0 is matched
  CHECK(match({"NVRM: Xid (PCI:0000:3B:00): 48, x"})->event.bus_id == "0000:3b:00.0");
  CHECK_FALSE(pci_after("zz:00.0", ""));
  CHECK_FALSE(pci_after("no marker here", "PCI:"));
}

TEST_CASE("decode tables: rows sorted, unique, every row explained and sourced") {
  unsigned last = 0;
  for (const auto& row : xid_table()) {
    INFO(row.code);
    CHECK(row.code > last);
    last = row.code;
    CHECK_FALSE(row.mnemonic.empty());
    CHECK_FALSE(row.meaning.empty());
    CHECK_FALSE(row.source.empty());
    CHECK(find_xid(row.code) == &row);
    const auto r =
        match({fmt::format("NVRM: Xid (PCI:0000:3b:00): {}, pid=1, name=a, text", row.code)});
    REQUIRE(r);
    CHECK(r->event.meaning.find(std::string(row.mnemonic)) != std::string::npos);
  }
  CHECK_FALSE(find_xid(0));
  CHECK_FALSE(find_xid(9999));
  for (auto table : {rm_init_table(), nv_status_table()}) {
    std::set<unsigned> seen;
    for (const auto& row : table) {
      INFO(row.name);
      CHECK(seen.insert(row.value).second);
      CHECK_FALSE(row.meaning.empty());
      CHECK_FALSE(row.source.empty());
    }
  }
  for (const auto& row : rm_init_table()) {
    INFO(row.name);
    CHECK(find_rm_init(row.value) == &row);
    CHECK((row.value == 0 || !row.remedy.empty()));
  }
  for (const auto& row : nv_status_table()) {
    CHECK(find_nv_status(row.value) == &row);
  }
  for (const auto& row : recovery_action_table()) {
    INFO(row.name);
    CHECK(find_recovery_action(row.name) == &row);
    CHECK_FALSE(row.remedy.empty());
  }
  CHECK_FALSE(find_recovery_action("Reboot Sometime"));
}

TEST_CASE("the Xid classes the issue names") {
  for (unsigned x : {48u, 62u, 64u, 74u, 95u, 109u, 119u, 120u, 136u, 140u, 143u}) {
    INFO(x);
    CHECK(find_xid(x)->cls == XidClass::reset);
  }
  CHECK(find_xid(79)->cls == XidClass::fallen_off_bus);
  for (unsigned x : {63u, 92u, 94u}) {
    INFO(x);
    CHECK(find_xid(x)->cls == XidClass::warning);
  }
  for (unsigned x = 144; x <= 150; ++x) {
    CHECK(find_xid(x)->cls == XidClass::by_line_word);
  }
  for (unsigned x : {13u, 31u, 43u, 45u}) {
    INFO(x);
    CHECK(find_xid(x)->cls == XidClass::application);
  }
  CHECK(find_xid(154)->cls == XidClass::recovery_action);
}

namespace {

// The tab-separated rows of a code list in tests/data (lines starting with '#' are comments).
std::vector<std::vector<std::string>> code_list(const std::string& name) {
  std::ifstream in(std::string(GPF_SOURCE_DIR) + "/tests/data/" + name);
  REQUIRE(in);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::vector<std::string> cols;
    std::size_t start = 0;
    for (auto tab = line.find('\t'); tab != std::string::npos; tab = line.find('\t', start)) {
      cols.push_back(line.substr(start, tab - start));
      start = tab + 1;
    }
    cols.push_back(line.substr(start));
    rows.push_back(std::move(cols));
  }
  return rows;
}

// The judgement NVIDIA's immediate action bucket implies; nullopt where it implies none (a
// workflow, no action). A row judged otherwise must carry a note.
std::optional<std::set<XidClass>> implied(std::string_view bucket) {
  using C = XidClass;
  if (bucket == "RESTART_APP") {
    return std::set{C::application};
  }
  if (bucket == "IGNORE") {
    return std::set{C::informational, C::application};
  }
  if (bucket == "RESET_GPU") {
    return std::set{C::reset};
  }
  if (bucket == "RESTART_BM") {
    return std::set{C::reboot, C::fallen_off_bus};
  }
  if (bucket == "RESTART_VM") {
    return std::set{C::reboot};
  }
  if (bucket == "UPDATE_SWFW") {
    return std::set{C::update_software};
  }
  if (bucket == "CONTACT_SUPPORT") {
    return std::set{C::warning};
  }
  if (bucket == "CHECK_MECHANICALS") {
    return std::set{C::power};
  }
  if (bucket == "WORKFLOW_XID_48") {
    return std::set{C::reset};
  }
  if (bucket == "XID_154") {
    return std::set{C::recovery_action};
  }
  return std::nullopt;
}

} // namespace

TEST_CASE("the Xid table holds NVIDIA's catalog code for code (tests/data/xid-catalog.tsv)") {
  const auto list = code_list("xid-catalog.tsv");
  REQUIRE(list.size() == 172); // Xids 1-172
  std::set<unsigned> listed;
  for (const auto& cols : list) {
    REQUIRE(cols.size() == 4);
    const unsigned code = static_cast<unsigned>(std::stoul(cols[0]));
    INFO("Xid " << code);
    listed.insert(code);
    const XidInfo* row = find_xid(code);
    REQUIRE(row);
    CHECK(row->mnemonic == cols[1]);
    CHECK(row->immediate == cols[2]);
    CHECK(row->investigatory == cols[3]);
    CHECK(row->source == k_xid_catalog_url);
    const auto expected = implied(row->immediate);
    if (!expected || expected->count(row->cls) == 0) {
      CHECK_FALSE(row->note.empty()); // our judgement differs from NVIDIA's: say why
    }
  }
  for (const auto& row : xid_table()) {
    INFO("Xid " << row.code);
    if (listed.count(row.code) == 0) { // newer than the catalog: sourced elsewhere, with a note
      CHECK(row.source != k_xid_catalog_url);
      CHECK_FALSE(row.note.empty());
    }
  }
}

TEST_CASE("the SXid table holds the Fabric Manager guide's SXids (tests/data/sxid-catalog.tsv)") {
  const auto list = code_list("sxid-catalog.tsv");
  REQUIRE(list.size() == 93);
  REQUIRE(sxid_table().size() == list.size());
  for (const auto& cols : list) {
    REQUIRE(cols.size() == 3);
    const unsigned code = static_cast<unsigned>(std::stoul(cols[0]));
    INFO("SXid " << code);
    const SxidInfo* row = find_sxid(code);
    REQUIRE(row);
    CHECK(row->name == cols[1]);
    const std::string guide(sxid_guide_word(row->guide));
    CHECK(cols[2] == (guide == "non-fatal"       ? "non_fatal"
                      : guide == "always fatal"  ? "always_fatal"
                      : guide == "other notable" ? "other"
                                                 : guide));
    // the guide's fatal tables are fatal for us too; a non-fatal one judged harder has a note
    if (row->guide == SxidGuideClass::fatal || row->guide == SxidGuideClass::always_fatal) {
      CHECK(row->cls == SxidClass::fatal);
    }
    if (row->guide == SxidGuideClass::non_fatal && row->cls == SxidClass::stalled) {
      CHECK_FALSE(row->note.empty());
    }
  }
  unsigned last = 0;
  for (const auto& row : sxid_table()) {
    CHECK(row.code > last);
    last = row.code;
  }
  CHECK(find_sxid(22003)->guide == SxidGuideClass::always_fatal);
  CHECK(find_sxid(12020)->cls == SxidClass::fatal);
}

TEST_CASE("a line's own Fatal / Non-fatal word is read") {
  const auto x = [](std::string_view text) {
    return match({fmt::format("NVRM: Xid (PCI:0000:3b:00): {}", text)})->event.line_fatal;
  };
  CHECK(x("149, NETIR Fatal XC0 i0 Link -1 (0x004e7004 0x00000002 0x00000000)") == true);
  CHECK(x("145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x00000000)") == false);
  CHECK_FALSE(x("13, pid=1, name=a, Graphics SM Warp Exception on (GPC 7, TPC 1, SM 0)"));
  const auto s = [](std::string_view text) {
    return match({fmt::format("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): {}", text)})
        ->event.line_fatal;
  };
  CHECK(s("22003, Fatal, Link 12 Minion halt") == true);
  CHECK(s("12028, Non-fatal, Link 32 egress non-posted PRIV error (First)") == false);
}
