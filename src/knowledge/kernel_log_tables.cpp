// The kernel-log decode tables: one row per code, each with its source. Facts: osinit.c
// rm_init_status and nvstatuscodes.h (docs/sources.md#rminitadapter-failures), gpu.c recovery
// action names. Meanings are in our words; rows stay sorted by number (a test checks).
#include "gpf/knowledge/kernel_log_tables.hpp"

#include <algorithm>

namespace gpf {
namespace {

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

} // namespace

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
