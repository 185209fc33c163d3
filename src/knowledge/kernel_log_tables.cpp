// The kernel-log decode tables: one row per code, each with its source. Facts: NVIDIA "Analyzing
// Xid Errors with the Xid Catalog" with mnemonics from nverror.h (docs/sources.md#xid-errors),
// osinit.c rm_init_status and nvstatuscodes.h (docs/sources.md#rminitadapter-failures), gpu.c
// recovery action names. Meanings are in our words; rows stay sorted by number (a test checks).
#include "gpf/knowledge/kernel_log_tables.hpp"

#include <algorithm>

namespace gpf {
namespace {

using C = XidClass;

// "bucket" = NVIDIA's immediate / investigatory resolution bucket in the catalog.
constexpr XidInfo k_xids[] = {
    {8, 8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", C::warning,
     "the GPU stopped processing (channel idle timeout)",
     "facts §3b, catalog bucket RESTART_APP / CONTACT_SUPPORT"},
    {11, 11, "ROBUST_CHANNEL_GR_ERROR_MISSING_HW", C::application,
     "invalid or corrupted push-buffer stream",
     "facts §3b, catalog bucket RESTART_APP / CHECK_APP/CUDA"},
    {13, 13, "ROBUST_CHANNEL_GR_EXCEPTION", C::application,
     "graphics/compute engine exception, usually the application's out-of-bounds access or illegal instruction",
     "facts §3b, catalog bucket RESTART_APP / WORKFLOW_XID_13"},
    {31, 31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", C::application,
     "GPU memory page fault (illegal address), usually an application bug",
     "facts §3b, catalog bucket RESTART_APP / WORKFLOW_XID_31"},
    {32, 32, "ROBUST_CHANNEL_PBDMA_ERROR", C::warning,
     "push-buffer DMA fault, mainly a PCIe signal-quality problem",
     "facts §3b, catalog bucket RESTART_APP / CHECK_APP/CUDA"},
    {37, 37, "ROBUST_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD", C::informational,
     "driver firmware (FECS) error", "facts §3b, catalog bucket IGNORE / CHECK_APP/CUDA"},
    {38, 38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", C::informational,
     "driver firmware (FECS) watchdog timeout",
     "facts §3b, catalog bucket IGNORE / CONTACT_SUPPORT"},
    {39, 41, "ROBUST_CHANNEL_CEn_ERROR", C::application,
     "copy-engine exception confined to the application",
     "facts §3b, catalog bucket RESTART_APP / CONTACT_SUPPORT"},
    {43, 43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", C::application,
     "the application hit a software-induced fault and was stopped; the GPU is healthy",
     "facts §3b, catalog bucket IGNORE / CONTACT_SUPPORT"},
    {44, 44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", C::warning,
     "graphics fault during a context switch",
     "facts §3b, catalog bucket IGNORE / CONTACT_SUPPORT"},
    {45, 45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", C::application,
     "the driver tore down the application's channels (Ctrl-C, kill, reset, or after another Xid)",
     "facts §3b, catalog bucket WORKFLOW_XID_45"},
    {46, 46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", C::reset, "the GPU stopped processing",
     "facts §3b, catalog bucket RESET_GPU / CONTACT_SUPPORT"},
    {48, 48, "ROBUST_CHANNEL_GPU_ECC_DBE", C::reset, "uncorrectable (double-bit) ECC memory error",
     "facts §3b, catalog bucket WORKFLOW_XID_48 (reset GPU or reboot)"},
    {54, 54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", C::power, "auxiliary power is not connected",
     "facts §3b, catalog bucket CHECK_MECHANICALS / CONTACT_SUPPORT"},
    {56, 59, "DISPLAY/FB/PMU", C::informational, "unused on Ampere and newer",
     "facts §3b, catalog (unused)"},
    {61, 61, "PMU_BREAKPOINT", C::warning, "internal micro-controller breakpoint",
     "facts §3b, catalog bucket CONTACT_SUPPORT"},
    {62, 62, "PMU_HALT_ERROR", C::reset, "internal micro-controller halt",
     "facts §3b, catalog bucket RESET_GPU / CONTACT_SUPPORT"},
    {63, 63, "INFOROM_DRAM_RETIREMENT_EVENT", C::warning,
     "a memory row was marked for remapping (page retirement); it takes effect after a GPU reset",
     "facts §3b, catalog bucket IGNORE / IGNORE; §11 (reset pending)"},
    {64, 64, "INFOROM_DRAM_RETIREMENT_FAILURE", C::reset,
     "memory row remapping (page retirement) failed",
     "facts §3b, catalog bucket RESET_GPU / CONTACT_SUPPORT"},
    {68, 68, "ROBUST_CHANNEL_NVDEC0_ERROR", C::application, "video decoder exception",
     "facts §3b, catalog bucket RESTART_APP / CONTACT_SUPPORT"},
    {69, 69, "ROBUST_CHANNEL_GR_CLASS_ERROR", C::application, "graphics engine class error",
     "facts §3b, catalog bucket RESTART_APP / CHECK_APP/CUDA"},
    {70, 72, "ROBUST_CHANNEL_CEn_ERROR", C::application,
     "copy-engine exception confined to the application",
     "facts §3b, catalog bucket RESTART_APP / CONTACT_SUPPORT"},
    {74, 74, "NVLINK_ERROR", C::reset, "NVLink connection problem (this GPU or the remote end)",
     "facts §3b, catalog bucket WORKFLOW_NVLINK_ERR / CONTACT_SUPPORT"},
    {75, 77, "ROBUST_CHANNEL_CEn_ERROR", C::application,
     "copy-engine exception confined to the application",
     "facts §3b, catalog bucket RESTART_APP / CONTACT_SUPPORT"},
    {78, 78, "VGPU_START_ERROR", C::update_software, "vGPU start failure",
     "facts §3b, catalog bucket UPDATE_SWFW"},
    {79, 79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", C::fallen_off_bus,
     "the GPU is unreachable over PCIe", "facts §3b, catalog bucket RESTART_BM / CONTACT_SUPPORT"},
    {80, 80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", C::warning, "corrupted data was sent to the GPU",
     "facts §3b, catalog bucket RESTART_APP / CHECK_APP/CUDA"},
    {85, 85, "ROBUST_CHANNEL_CEn_ERROR", C::application,
     "copy-engine exception confined to the application",
     "facts §3b, catalog bucket RESTART_APP / CONTACT_SUPPORT"},
    {92, 92, "EXCESSIVE_SBE_INTERRUPTS", C::warning, "high rate of single-bit ECC errors",
     "facts §3b, catalog bucket IGNORE / CONTACT_SUPPORT"},
    {93, 93, "INFOROM_ERASE_LIMIT_EXCEEDED", C::informational, "InfoROM wear-limit violation",
     "facts §3b, catalog bucket IGNORE / CONTACT_SUPPORT"},
    {94, 94, "ROBUST_CHANNEL_CONTAINED_ERROR", C::warning,
     "contained (e.g. ECC) error: only the affected application died; reset the GPU when convenient",
     "facts §3b, catalog bucket RESTART_APP / IGNORE"},
    {95, 95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", C::reset,
     "uncontained error affecting several applications",
     "facts §3b, catalog bucket RESET_GPU / IGNORE"},
    {109, 109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", C::reset, "context-switch timeout",
     "facts §3b, catalog bucket RESET_GPU / CONTACT_SUPPORT"},
    {110, 110, "SEC_FAULT_ERROR", C::reboot,
     "security fault, uncommon unless the hardware failed (cold reset needed)",
     "facts §3b, catalog bucket RESET_GPU / INVESTIGATE_SW (NVIDIA: cold reset)"},
    {119, 119, "GSP_RPC_TIMEOUT", C::reset, "the GSP firmware did not answer an RPC in time",
     "facts §3b, catalog bucket RESET_GPU / INVESTIGATE_SW"},
    {120, 120, "GSP_ERROR", C::reset, "error in code running on the GSP",
     "facts §3b, catalog bucket RESET_GPU / INVESTIGATE_SW"},
    {121, 121, "C2C_ERROR", C::informational, "corrected errors on the C2C link to a Grace CPU",
     "facts §3b, catalog bucket IGNORE / CONTACT_SUPPORT"},
    {122, 125, "SPI_PMU_RPC / INFOROM_FS_ERROR", C::warning,
     "micro-controller or InfoROM error (unused in the Ampere+ catalog)",
     "facts §3b, catalog bucket CONTACT_SUPPORT"},
    {126, 135, "ROBUST_CHANNEL_CEn_ERROR", C::application,
     "copy-engine exception confined to the application",
     "facts §3b, catalog bucket RESTART_APP / CONTACT_SUPPORT"},
    {136, 136, "ALI_TRAINING_FAIL", C::reset, "NVLink link training failed",
     "facts §3b, catalog bucket RESET_GPU / INVESTIGATE_LINK_SI"},
    {137, 137, "NVLINK_PRIV_ERR", C::application,
     "remote-MMU fault from an illegal NVLink peer access, usually the application",
     "facts §3b, catalog bucket IGNORE / XID_137_FLOW"},
    {140, 140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", C::reset,
     "uncorrectable memory errors the driver could not retire or remap",
     "facts §3b, catalog bucket RESET_GPU / CONTACT_SUPPORT"},
    {141, 141, "ROBUST_CHANNEL_FAST_PATH_ERROR", C::informational, "CUDA fast-path error",
     "facts §3b, catalog bucket IGNORE / CONTACT_SUPPORT"},
    {143, 143, "GPU_INIT_ERROR", C::reset, "GPU initialisation error",
     "facts §3b, catalog bucket RESET_GPU / CONTACT_SUPPORT"},
    {144, 150, "NVLINK5_UNIT_ERROR", C::warning,
     "NVLink5 unit error (SAW/RLW/TLW/TREX/NVLPW_CTRL/NETIR/MSE); an accompanying Xid 154 says whether a reset is needed",
     "facts §3b, catalog bucket WORKFLOW_NVLINK5_ERR"},
    {151, 151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", C::reboot,
     "confidential-computing key rotation error (restart the VM)",
     "facts §3b, catalog bucket RESTART_VM"},
    {154, 154, "GPU_RECOVERY_ACTION_CHANGED", C::recovery_action,
     "the recovery action the GPU needs changed", "facts §3a/§3b, catalog bucket XID_154 (gpu.c)"},
    {155, 155, "NVLINK_SW_DEFINED_ERROR", C::warning, "intentional NVLink link-down event",
     "facts §3b, catalog bucket RESET_GPU / INVESTIGATE_SW_USER"},
    {156, 156, "RESOURCE_RETIREMENT_EVENT", C::warning,
     "a resource was retired; a GPU reset applies it",
     "facts §3b, catalog bucket RESET_GPU / IGNORE"},
    {157, 157, "RESOURCE_RETIREMENT_FAILURE", C::warning,
     "resource retirement failed: no spare resources left",
     "facts §3b, catalog bucket IGNORE / CONTACT_SUPPORT"},
    {158, 158, "GPU_FATAL_TIMEOUT", C::reset, "fatal GPU timeout",
     "facts §3b, catalog bucket RESET_GPU / CONTACT_SUPPORT"},
    {159, 159, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", C::warning, "CHI non-data error on a C2C GPU",
     "facts §3b, catalog bucket CHECK_UVM"},
    {160, 160, "CHANNEL_RETIREMENT_EVENT", C::informational, "a channel was retired",
     "facts §3b, catalog bucket IGNORE / INVESTIGATE_SW"},
    {161, 161, "CHANNEL_RETIREMENT_FAILURE", C::informational, "channel retirement failed",
     "facts §3b, catalog bucket IGNORE / INVESTIGATE_SW"},
    {162, 165, "POWER_SMOOTHING", C::informational, "power-smoothing circuitry status changed",
     "facts §3b, catalog (advice text)"},
    {167, 167, "PCIE_FATAL_TIMEOUT", C::reboot, "fatal PCIe timeout",
     "facts §3b (bucket blank; reboot is our judgement)"},
    {168, 168, "REDUCED_GPU_MEMORY_CAPACITY", C::warning,
     "errors found in WPR memory; expected only with ECC disabled",
     "facts §3b, catalog advice: enable ECC"},
    {169, 169, "SEC2_HALT_ERROR", C::reset, "internal micro-controller (SEC2) halt",
     "facts §3b (bucket blank; reset is our judgement)"},
    {171, 171, "UNCORRECTABLE_DRAM_ERROR", C::reset,
     "uncorrectable DRAM error (detail of an Xid 48)", "facts §3b (follow Xid 48)"},
    {172, 172, "UNCORRECTABLE_SRAM_ERROR", C::reset,
     "uncorrectable SRAM error (detail of an Xid 48)", "facts §3b (follow Xid 48)"},
    {173, 173, "C2C_FATAL_LINK_FAILURE", C::warning,
     "C2C link failure (new code, not in the catalog read)",
     "facts §3b (nverror.h 595; UNVERIFIED, default warn)"},
    {174, 174, "RESETCHANNEL_KILL_PROCESS_SILENT", C::warning,
     "a process was killed silently (new code)",
     "facts §3b (nverror.h 595; UNVERIFIED, default warn)"},
    {175, 175, "MEMORY_SUBSYSTEM_ERROR", C::warning, "memory subsystem error (new code)",
     "facts §3b (nverror.h 595; UNVERIFIED, default warn)"},
    {176, 176, "PCIE_CORRECTABLE_ERROR_FAULT", C::warning,
     "PCIe correctable error fault (new code)",
     "facts §3b (nverror.h 595; UNVERIFIED, default warn)"},
};

constexpr std::string_view k_generic_init_remedy =
    "Reset the GPU (`nvidia-smi -r -i <bus id>` with no process on it) or reboot; if it fails again at the same "
    "stage, power-cycle the node and contact the hardware vendor";
constexpr std::string_view k_src_init = "facts §4b (osinit.c rm_init_status)";

constexpr CodeInfo k_rm_init[] = {
    {0x00, "RM_INIT_OK", "success", "", k_src_init},
    {0x10, "RM_INIT_REG_SETUP_FAILED", "registry (regkey) setup failed",
     "Check the driver's module options (NVreg_RegistryDwords and other NVreg_* settings in /etc/modprobe.d/) and "
     "remove unknown or malformed keys, then reload the driver",
     k_src_init},
    {0x11, "RM_INIT_SYS_ENVIRONMENT_FAILED",
     "the system environment check failed, typically the GPU's interrupt not firing",
     "Fix interrupt delivery: in a VM check the passthrough/MSI configuration of the hypervisor; try the module option "
     "NVreg_EnableMSI=0; check the BIOS/IOMMU interrupt remapping settings",
     k_src_init},
    {0x20, "RM_INIT_GPU_GPUMGR_ALLOC_GPU_FAILED", "allocating the GPU instance failed",
     k_generic_init_remedy, k_src_init},
    {0x21, "RM_INIT_GPU_GPUMGR_CREATE_DEV_FAILED", "creating the device failed",
     k_generic_init_remedy, k_src_init},
    {0x22, "RM_INIT_GPU_GPUMGR_ATTACH_GPU_FAILED",
     "attaching the GPU failed (early hardware access, BAR/PCI problems)",
     "Check the GPU's PCI resources: enable \"Above 4G decoding\" (and Resizable BAR if used) in the BIOS, or boot with "
     "pci=realloc; check `lspci -vv` for unassigned BARs; reseat the GPU if it persists",
     k_src_init},
    {0x23, "RM_INIT_GPU_PRE_INIT_FAILED", "GPU pre-initialisation failed", k_generic_init_remedy,
     k_src_init},
    {0x24, "RM_INIT_GPU_STATE_INIT_FAILED", "GPU state initialisation failed",
     k_generic_init_remedy, k_src_init},
    {0x25, "RM_INIT_GPU_LOAD_FAILED", "loading the GPU state failed", k_generic_init_remedy,
     k_src_init},
    {0x26, "RM_INIT_GPU_DMA_CONFIGURATION_FAILED", "the driver could not configure the GPU for DMA",
     "Fix DMA/IOMMU configuration: check the kernel's IOMMU settings (intel_iommu=/amd_iommu=, iommu=pt), the "
     "hypervisor's DMA remapping for a passed-through GPU and the GPU's BAR assignment (Above 4G decoding); on a "
     "cloud instance, stop and start it so it lands on other hardware, and report the GPU to the provider",
     k_src_init},
    {0x27, "RM_INIT_GPU_GPUMGR_EXPANDED_VISIBILITY_FAILED", "expanding GPU visibility failed",
     k_generic_init_remedy, k_src_init},
    {0x30, "RM_INIT_VBIOS_FAILED",
     "the VBIOS could not be read (classically: failed to copy vbios to system memory)",
     "The GPU's VBIOS is unreachable: in a VM check that the GPU's ROM is passed through, on bare metal check the "
     "BIOS settings (CSM/UEFI) and reseat the GPU; if it persists the board needs service",
     k_src_init},
    {0x31, "RM_INIT_VBIOS_POST_FAILED", "VBIOS POST failed",
     "The GPU could not be POSTed: power-cycle the node; if it persists the board needs service",
     k_src_init},
    {0x32, "RM_INIT_VBIOS_X86EMU_FAILED", "the x86 emulator for the VBIOS failed to start",
     "Power-cycle the node; if it persists update the driver and contact the vendor", k_src_init},
    {0x40, "RM_INIT_SCALABILITY_FAILED", "scalability initialisation failed", k_generic_init_remedy,
     k_src_init},
    {0x41, "RM_INIT_WATCHDOG_FAILED", "RC watchdog initialisation failed", k_generic_init_remedy,
     k_src_init},
    {0x42, "RM_FIFO_GET_UD_BAR1_MAP_INFO_FAILED", "mapping USERD through BAR1 failed",
     "Check the GPU's BAR1 assignment (Above 4G decoding in the BIOS, pci=realloc), then reset the GPU or reboot",
     k_src_init},
    {0x43, "RM_GPUDB_REGISTER_FAILED", "registering the GPU in the GPU database failed",
     k_generic_init_remedy, k_src_init},
    {0x44, "RM_INIT_ALLOC_RMAPI_FAILED", "allocating the RM API client failed",
     k_generic_init_remedy, k_src_init},
    {0x45, "RM_INIT_GPUINFO_WITH_RMAPI_FAILED",
     "gathering GPU information through the RM API failed", k_generic_init_remedy, k_src_init},
    {0x60, "RM_INIT_FIRMWARE_POLICY_FAILED",
     "GSP firmware was expected but is not usable and falling back is not allowed",
     "Check EnableGpuFirmware in /proc/driver/nvidia/params and the module flavour: the open module requires GSP; "
     "install the GSP firmware matching the driver or use the proprietary module for GPUs that must run without it",
     k_src_init},
    {0x61, "RM_INIT_FIRMWARE_FETCH_FAILED",
     "the GSP firmware image could not be loaded (No firmware image found)",
     "Reinstall the driver package that ships /lib/firmware/nvidia/<driver version>/gsp_*.bin for exactly the loaded "
     "driver version (e.g. the distribution's nvidia-firmware-<branch> package), then reload the driver",
     k_src_init},
    {0x62, "RM_INIT_FIRMWARE_INIT_FAILED",
     "the GSP firmware failed to boot (Cannot initialize GSP firmware RM)",
     "Reset the GPU or power-cycle the node (a GPU left in a bad state needs a cold reset); check that the GSP firmware "
     "files match the driver version; if it repeats, the GPU needs service",
     k_src_init},
};

constexpr std::string_view k_src_status = "facts §4c (nvstatuscodes.h)";

constexpr CodeInfo k_nv_status[] = {
    {0x00, "NV_OK", "success", "", k_src_status},
    {0x0B, "NV_ERR_ECC_ERROR", "generic ECC error", "", k_src_status},
    {0x0F, "NV_ERR_GPU_IS_LOST", "GPU lost from the bus", "", k_src_status},
    {0x10, "NV_ERR_GPU_IN_FULLCHIP_RESET", "GPU currently in full-chip reset", "", k_src_status},
    {0x11, "NV_ERR_GPU_NOT_FULL_POWER", "GPU not in full power", "", k_src_status},
    {0x1A, "NV_ERR_INSUFFICIENT_RESOURCES", "ran out of a critical resource other than memory", "",
     k_src_status},
    {0x1C, "NV_ERR_INSUFFICIENT_POWER", "low power (power cables not connected)", "", k_src_status},
    {0x1F, "NV_ERR_INVALID_ARGUMENT", "invalid argument", "", k_src_status},
    {0x25, "NV_ERR_INVALID_DATA", "invalid data (e.g. a bad VBIOS image)", "", k_src_status},
    {0x26, "NV_ERR_INVALID_DEVICE", "the device is not valid", "", k_src_status},
    {0x40, "NV_ERR_INVALID_STATE", "invalid state (e.g. the GPU needs a reset)", "", k_src_status},
    {0x45, "NV_ERR_IRQ_NOT_FIRING", "the GPU's interrupt is not firing", "", k_src_status},
    {0x47, "NV_ERR_MEMORY_TRAINING_FAILED", "memory training failed", "", k_src_status},
    {0x51, "NV_ERR_NO_MEMORY", "out of memory", "", k_src_status},
    {0x55, "NV_ERR_NOT_READY", "not ready", "", k_src_status},
    {0x56, "NV_ERR_NOT_SUPPORTED", "not supported (e.g. a firmware file missing)", "",
     k_src_status},
    {0x59, "NV_ERR_OPERATING_SYSTEM", "operating system error", "", k_src_status},
    {0x61, "NV_ERR_REJECTED_VBIOS", "the VBIOS was rejected or is invalid", "", k_src_status},
    {0x62, "NV_ERR_RESET_REQUIRED", "a reset is required", "", k_src_status},
    {0x65, "NV_ERR_TIMEOUT", "timed out", "", k_src_status},
    {0x66, "NV_ERR_TIMEOUT_RETRY", "timed out, retry later", "", k_src_status},
    {0x6A, "NV_ERR_LIB_RM_VERSION_MISMATCH", "library version does not match the driver version",
     "", k_src_status},
    {0x70, "NV_ERR_FLCN_ERROR", "falcon micro-controller assert or halt", "", k_src_status},
    {0x71, "NV_ERR_FATAL_ERROR", "fatal, unrecoverable error", "", k_src_status},
    {0x72, "NV_ERR_MEMORY_ERROR", "memory error", "", k_src_status},
    {0x74, "NV_ERR_NVLINK_INIT_ERROR", "NVLink initialisation error", "", k_src_status},
    {0x75, "NV_ERR_NVLINK_MINION_ERROR", "NVLink MINION error", "", k_src_status},
    {0x76, "NV_ERR_NVLINK_CLOCK_ERROR", "NVLink clock error", "", k_src_status},
    {0x77, "NV_ERR_NVLINK_TRAINING_ERROR", "NVLink training error", "", k_src_status},
    {0x78, "NV_ERR_NVLINK_CONFIGURATION_ERROR", "NVLink configuration error", "", k_src_status},
    {0x79, "NV_ERR_RISCV_ERROR", "RISC-V (GSP) assert or halt", "", k_src_status},
    {0x7A, "NV_ERR_FABRIC_MANAGER_NOT_PRESENT", "Fabric Manager is not running", "", k_src_status},
    {0x7F, "NV_ERR_SECURE_BOOT_FAILED", "GPU firmware secure boot failed", "", k_src_status},
    {0x81, "NV_ERR_NVLINK_FABRIC_NOT_READY", "NVLink fabric probe not complete", "", k_src_status},
    {0x82, "NV_ERR_NVLINK_FABRIC_FAILURE", "NVLink fabric probe failed", "", k_src_status},
    {0xFFFF, "NV_ERR_GENERIC", "generic error", "", k_src_status},
};

constexpr std::string_view k_src_recovery =
    "facts §3a (gpu.c _gpuRecoveryActionName), §11 (Xid 154)";

constexpr RecoveryActionInfo k_recovery[] = {
    {"None", RecoveryEffect::none, "No action needed", k_src_recovery},
    {"GPU Reset Required", RecoveryEffect::reset,
     "Reset the GPU (`nvidia-smi -r -i <bus id>` with no process on it) or reboot before using it",
     k_src_recovery},
    {"Node Reboot Required", RecoveryEffect::reboot,
     "Drain the node and reboot it before using this GPU", k_src_recovery},
    {"Drain P2P", RecoveryEffect::drain,
     "Do not start peer-to-peer (multi-GPU) jobs on this GPU until it has been drained and reset",
     k_src_recovery},
    {"Drain and Reset", RecoveryEffect::reset,
     "Let running work finish, then reset the GPU before using it again", k_src_recovery},
    {"Recover IMEX Domain", RecoveryEffect::drain,
     "Recover the IMEX domain (restart the IMEX daemons of the domain)", k_src_recovery},
};

template <class Row> const Row* find_code(std::span<const Row> rows, unsigned value) {
  const auto it =
      std::find_if(rows.begin(), rows.end(), [value](const Row& r) { return r.value == value; });
  return it == rows.end() ? nullptr : &*it;
}

// The row whose range first..last holds value (the Xid and SXid catalogs list ranges).
template <class Row> const Row* find_in_range(std::span<const Row> rows, unsigned value) {
  const auto it = std::find_if(rows.begin(), rows.end(), [value](const Row& r) {
    return value >= r.first && value <= r.last;
  });
  return it == rows.end() ? nullptr : &*it;
}

} // namespace

std::span<const XidInfo> xid_table() {
  return k_xids;
}

// The Fabric Manager User Guide's SXid appendix: non-fatal (D.4), potentially fatal (D.5), always
// fatal (D.6) and other notable (D.7) SXids, guide DU-09883-001 v1.3.
constexpr std::string_view k_src_fm =
    "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html";

constexpr SxidInfo k_sxids[] = {
    {10001, 10002, "Host priv error / timeout (may be followed by fatal events)",
     SxidClass::degraded, k_src_fm},
    {10003, 10003, "Host unhandled interrupt", SxidClass::fatal, k_src_fm},
    {10004, 10005, "Host thermal event (links may enter single-lane mode)", SxidClass::degraded,
     k_src_fm},
    {11001, 11001, "ingress invalid command", SxidClass::fatal, k_src_fm},
    {11004, 11004, "ingress invalid ACL", SxidClass::stalled, k_src_fm},
    {11009, 11009, "ingress invalid VCSet", SxidClass::fatal, k_src_fm},
    {11012, 11012, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {11013, 11013, "ingress header DBE", SxidClass::fatal, k_src_fm},
    {11018, 11020, "ingress RID/RLAN DBE or control parity", SxidClass::fatal, k_src_fm},
    {11021, 11023, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {12001, 12002, "egress crossbar overflow / packet route", SxidClass::fatal, k_src_fm},
    {12021, 12021, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {12022, 12022, "egress input ECC DBE error", SxidClass::fatal, k_src_fm},
    {12023, 12023, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {12024, 12027, "egress output ECC DBE, credit overflow or destination ID error",
     SxidClass::fatal, k_src_fm},
    {12028, 12028, "egress non-posted PRIV error", SxidClass::stalled, k_src_fm},
    {12030, 12032, "egress parity error or flit type mismatch", SxidClass::fatal, k_src_fm},
    {14017, 14017, "TS ATO timeout", SxidClass::fatal, k_src_fm},
    {15001, 15001, "route buffer over/underflow", SxidClass::fatal, k_src_fm},
    {15006, 15006, "route transdone over/underflow", SxidClass::fatal, k_src_fm},
    {15008, 15008, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {15009, 15010, "route GLT DBE or parity", SxidClass::fatal, k_src_fm},
    {15011, 15011, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {15012, 15013, "route incoming DBE or credit parity", SxidClass::fatal, k_src_fm},
    {19047, 19048, "NCISOC ECC DBE error", SxidClass::fatal, k_src_fm},
    {19049, 19049, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {19054, 19054, "HDR RAM ECC DBE error", SxidClass::fatal, k_src_fm},
    {19055, 19055, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {19056, 19056, "DAT0 RAM ECC DBE error", SxidClass::fatal, k_src_fm},
    {19057, 19057, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {19058, 19058, "DAT1 RAM ECC DBE error", SxidClass::fatal, k_src_fm},
    {19059, 19059, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {19060, 19061, "CREQ RAM ECC DBE error", SxidClass::fatal, k_src_fm},
    {19062, 19062, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {19065, 19065, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {19068, 19068, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {19071, 19071, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
    {19084, 19084, "AN1 heartbeat timeout (reset all GPUs and NVSwitches)", SxidClass::stalled,
     k_src_fm},
    {20001, 20001, "TX replay error (NVLink throughput)", SxidClass::degraded, k_src_fm},
    {20012, 20012, "broken or inconsistent connection", SxidClass::stalled, k_src_fm},
    {22011, 22011, "Minion exterror", SxidClass::fatal, k_src_fm},
    {22013, 22013, "Minion link DLREQ interrupt (can be safely ignored)", SxidClass::harmless,
     k_src_fm},
    {23001, 23017, "ingress/egress buffer, credit, packet or parity error", SxidClass::fatal,
     k_src_fm},
    {24001, 24003, "single-bit ECC error (corrected)", SxidClass::harmless, k_src_fm},
};

const SxidInfo* find_sxid(unsigned sxid) {
  return find_in_range<SxidInfo>(k_sxids, sxid);
}

const XidInfo* find_xid(unsigned xid) {
  return find_in_range<XidInfo>(k_xids, xid);
}

std::span<const CodeInfo> rm_init_table() {
  return k_rm_init;
}
std::span<const CodeInfo> nv_status_table() {
  return k_nv_status;
}
const CodeInfo* find_rm_init(unsigned value) {
  return find_code(rm_init_table(), value);
}
const CodeInfo* find_nv_status(unsigned value) {
  return find_code(nv_status_table(), value);
}

std::span<const RecoveryActionInfo> recovery_action_table() {
  return k_recovery;
}

const RecoveryActionInfo* find_recovery_action(std::string_view name) {
  const auto it = std::find_if(std::begin(k_recovery), std::end(k_recovery),
                               [name](const RecoveryActionInfo& r) { return r.name == name; });
  return it == std::end(k_recovery) ? nullptr : &*it;
}

} // namespace gpf
