// A fake libnvidia-ml.so.1 for the NVML probe's tests: exports the entry points the probe uses,
// with the probe's own declarations of NVML's types (the layouts of nvml.h, checked by
// tests/unit/nvml_layout_test.cpp), and answers as the FAKE_NVML_* environment variables say.
// "GPU i" is the i-th bus id of FAKE_NVML_BUS_IDS. Per-GPU variables are lists "i:value,j:value".
//   FAKE_NVML_INIT_RC=n           nvmlInit* returns n
//   FAKE_NVML_INIT_HANG=1         nvmlInit* never returns and ignores SIGTERM
//   FAKE_NVML_LINK_AT=path        nvmlInit* creates a symlink there, as the real one re-creates
//                                 /dev/char/195:255 (the children's isolation must stop it)
//   FAKE_NVML_HANG=i:step         GPU i never returns from that step ("handle", "remapped_rows",
//   ...) FAKE_NVML_LOST=i,...          GPU i's handle call answers NVML_ERROR_GPU_IS_LOST
//   FAKE_NVML_ARCH=i:a            architecture (default 9, Hopper); < 7 has page retirement,
//                                 no row remapping and no MIG; < 9 no fabric (NOT_SUPPORTED)
//   FAKE_NVML_REMAP_PENDING, _REMAP_FAILURE, _RETIRED_PENDING, _ECC_VOL, _ECC_AGG, _RECOVERY
//   (absent: field NOT_SUPPORTED, as on R535), _CLOCKS (mask), _PCIE_WIDTH (max 16), _PCIE_GEN
//   (max 5), _NVLINKS (link count), _NVLINK_DOWN (i:link), _FABRIC (i:state), _FABRIC_STATUS,
//   _COMPUTE_MODE, _PROCS (i:pid, 1 GiB each), _MIG_PENDING (i:1 with current 0), _PERSISTENCE
//   (default 1); FAKE_NVML_PROC_COUNT=n: every GPU lists n processes (pids 10000.., 1 MiB each);
//   FAKE_NVML_STDERR_BYTES=n: nvmlInit* writes about n bytes, half on stderr, half on stdout
// The counters read around the CUDA stage answer 0 (SRAM threshold: not exceeded) until a rise is
// injected: FAKE_NVML_RISE=i:what,… raises GPU i's counter once the process has sampled the clocks
// (the probe samples only while it waits for the CUDA stage, so `before` is never risen and `after`
// is): what is nvlinkN (link N's replay and CRC-flit counters +2), pcie (replay +2), ecc_corr
// (volatile corrected +2), ecc_unc (volatile uncorrected +1), sram (threshold exceeded), remap
// (a row remap pending).
//   FAKE_NVML_SM_CLOCK=i:MHz (default 1980), FAKE_NVML_POWER_MW=i:mW (default 350000): the samples
//   FAKE_NVML_INFOROM_CORRUPT=i,…  nvmlDeviceValidateInforom answers CORRUPTED_INFOROM (14)
// MIG (Ampere and later): FAKE_NVML_MIG=i:1 enables it now (pending too, unless _MIG_PENDING says);
// FAKE_NVML_GPU_INSTANCES=i:ID@START+ID@START… are its GPU instances, by GI profile id and
// placement start, numbered 1, 2, … in that order, on the profile table below (an H100 80GB's ids);
// FAKE_NVML_GI_DENY=i,… nvmlDeviceGetGpuInstances answers NO_PERMISSION (4), as for a non-root
// user. Memory total: 81559 MiB from Hopper, 81920 MiB for Ampere, 32768 MiB before.
#include "probes/nvml/nvml_api.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

using namespace gpf::nvml;

struct gpf::nvml::nvmlDevice_st {
  int index;
};

struct gpf::nvml::nvmlGpuInstance_st {
  int gpu;
  nvmlGpuInstanceInfo_t info;
};

namespace {

constexpr nvmlReturn_t k_ok = 0;
constexpr nvmlReturn_t k_uninit = 1;
constexpr nvmlReturn_t k_invalid = 2;
constexpr nvmlReturn_t k_not_supported = 3;
constexpr nvmlReturn_t k_not_found = 6;
constexpr nvmlReturn_t k_size = 7;
constexpr nvmlReturn_t k_lost = 15;

bool g_init = false;
bool g_sampled = false; // nvmlDeviceGetClockInfo was called: injected rises show from now on
std::vector<nvmlDevice_st> g_devices;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> bus_ids() {
  const char* v = env("FAKE_NVML_BUS_IDS");
  return v ? split(v, ',') : std::vector<std::string>{};
}

// "i:value" for GPU i, or nullopt-like fallback.
long per_gpu(const char* name, int gpu, long fallback) {
  const char* v = env(name);
  if (!v) {
    return fallback;
  }
  for (const auto& item : split(v, ',')) {
    const auto colon = item.find(':');
    if (colon != std::string::npos && std::atoi(item.substr(0, colon).c_str()) == gpu) {
      return std::strtol(item.substr(colon + 1).c_str(), nullptr, 0);
    }
  }
  return fallback;
}

bool listed(const char* name, int gpu) {
  const char* v = env(name);
  if (!v) {
    return false;
  }
  for (const auto& item : split(v, ',')) {
    if (!item.empty() && std::atoi(item.c_str()) == gpu) {
      return true;
    }
  }
  return false;
}

// GPU i's text in a per-GPU list "i:text,j:text"; "" when absent.
std::string per_gpu_text(const char* name, int gpu) {
  const char* v = env(name);
  if (!v) {
    return {};
  }
  for (const auto& item : split(v, ',')) {
    const auto colon = item.find(':');
    if (colon != std::string::npos && std::atoi(item.substr(0, colon).c_str()) == gpu) {
      return item.substr(colon + 1);
    }
  }
  return {};
}

// Never returns; SIGTERM is ignored, so only SIGKILL ends the process.
[[noreturn]] void hang_forever() {
  std::signal(SIGTERM, SIG_IGN);
  for (;;) {
    ::pause();
  }
}

void maybe_hang(int gpu, const char* step) {
  const char* v = env("FAKE_NVML_HANG");
  if (!v) {
    return;
  }
  for (const auto& item : split(v, ',')) {
    const auto colon = item.find(':');
    if (colon != std::string::npos && std::atoi(item.substr(0, colon).c_str()) == gpu &&
        item.substr(colon + 1) == step) {
      hang_forever();
    }
  }
}

// FAKE_NVML_RISE names this GPU's counter and the clocks were sampled: 1, else 0.
unsigned long long risen(int gpu, const std::string& what) {
  const char* v = env("FAKE_NVML_RISE");
  if (!v || !g_sampled) {
    return 0;
  }
  for (const auto& item : split(v, ',')) {
    const auto colon = item.find(':');
    if (colon != std::string::npos && std::atoi(item.substr(0, colon).c_str()) == gpu &&
        item.substr(colon + 1) == what) {
      return 1;
    }
  }
  return 0;
}

int arch(int gpu) {
  return static_cast<int>(per_gpu("FAKE_NVML_ARCH", gpu, 9));
}

// A valid handle's GPU index, or -1.
int gpu_of(nvmlDevice_t d) {
  for (auto& dev : g_devices) {
    if (&dev == d) {
      return dev.index;
    }
  }
  return -1;
}

nvmlReturn_t init_common() {
  if (const char* chatter = std::getenv("FAKE_NVML_STDERR_BYTES")) {
    // a chatty library: that many bytes on stderr and on stdout, half each
    const std::string line(99, 'c');
    const unsigned long n = std::strtoul(chatter, nullptr, 10) / 100;
    for (unsigned long i = 0; i < n; ++i) {
      std::fprintf(i % 2 ? stdout : stderr, "%s\n", line.c_str());
    }
    std::fflush(nullptr);
  }
  if (const char* link = env("FAKE_NVML_LINK_AT")) {
    ::symlink("../nvidiactl", link); // what the real nvmlInit does to /dev/char/195:255
  }
  if (env("FAKE_NVML_INIT_HANG")) {
    hang_forever();
  }
  const long rc =
      std::strtol(env("FAKE_NVML_INIT_RC") ? env("FAKE_NVML_INIT_RC") : "0", nullptr, 0);
  if (rc != 0) {
    return static_cast<nvmlReturn_t>(rc);
  }
  g_init = true;
  g_devices.clear();
  const auto ids = bus_ids();
  g_devices.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    g_devices.push_back({static_cast<int>(i)});
  }
  return k_ok;
}

void copy(char* out, unsigned len, const std::string& s) {
  if (len > 0) {
    std::snprintf(out, len, "%s", s.c_str());
  }
}

// Common prologue of a device query: initialised, valid handle, maybe hang in this step.
#define DEVICE_PROLOGUE(step)                                                                      \
  if (!g_init) {                                                                                   \
    return k_uninit;                                                                               \
  }                                                                                                \
  const int gpu = gpu_of(device);                                                                  \
  if (gpu < 0) {                                                                                   \
    return k_invalid;                                                                              \
  }                                                                                                \
  maybe_hang(gpu, step)

} // namespace

FAKE_EXPORT nvmlReturn_t nvmlInit_v2() {
  return init_common();
}

FAKE_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int) {
  return init_common();
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
  case 0:
    return "Success";
  case 1:
    return "Uninitialized";
  case 3:
    return "Not Supported";
  case 4:
    return "Insufficient Permissions";
  case 9:
    return "Driver Not Loaded";
  case 15:
    return "GPU is lost";
  case 18:
    return "Driver/library version mismatch";
  default:
    return "Unknown Error";
  }
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  copy(version, length, "12.535.261.03");
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (!g_init) {
    return k_uninit;
  }
  copy(version, length, "535.261.03");
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!g_init) {
    return k_uninit;
  }
  *count = static_cast<unsigned>(g_devices.size());
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (!g_init) {
    return k_uninit;
  }
  if (index >= g_devices.size()) {
    return k_invalid;
  }
  maybe_hang(static_cast<int>(index), "handle");
  if (listed("FAKE_NVML_LOST", static_cast<int>(index))) {
    return k_lost;
  }
  *device = &g_devices[index];
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id,
                                                          nvmlDevice_t* device) {
  if (!g_init) {
    return k_uninit;
  }
  // Compare case-insensitively after the domain (NVML accepts 4- or 8-digit domains).
  auto tail = [](std::string s) {
    for (auto& c : s) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    const auto first = s.find(':');
    return first == std::string::npos ? s : s.substr(first + 1);
  };
  const auto ids = bus_ids();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (tail(ids[i]) == tail(bus_id)) {
      return nvmlDeviceGetHandleByIndex_v2(static_cast<unsigned>(i), device);
    }
  }
  return k_not_found;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  DEVICE_PROLOGUE("pci_info");
  std::memset(pci, 0, sizeof *pci);
  unsigned dom = 0;
  unsigned bus = 0;
  unsigned dev = 0;
  std::sscanf(bus_ids()[static_cast<std::size_t>(gpu)].c_str(), "%x:%x:%x", &dom, &bus, &dev);
  pci->domain = dom;
  pci->bus = bus;
  pci->device = dev;
  pci->pciDeviceId = 0x233010DE;
  std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", dom, bus, dev);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", dom, bus, dev);
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  DEVICE_PROLOGUE("name");
  copy(name, length,
       arch(gpu) >= 9   ? "NVIDIA H100 80GB HBM3"
       : arch(gpu) >= 7 ? "NVIDIA A100-SXM4-80GB"
                        : "Tesla V100-SXM2-32GB");
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  DEVICE_PROLOGUE("uuid");
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-00000000-0000-0000-0000-%012d", gpu);
  copy(uuid, length, buf);
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  DEVICE_PROLOGUE("minor");
  *minor = static_cast<unsigned>(gpu);
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device,
                                                   nvmlDeviceArchitecture_t* a) {
  DEVICE_PROLOGUE("architecture");
  *a = static_cast<unsigned>(arch(gpu));
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current,
                                              nvmlEnableState_t* pending) {
  DEVICE_PROLOGUE("ecc_mode");
  *current = 1;
  *pending = 1;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int type, int counter,
                                                     unsigned long long* count) {
  const bool corrected = type == k_memory_error_corrected;
  DEVICE_PROLOGUE(corrected      ? "ecc_volatile_corrected"
                  : counter == 0 ? "ecc_volatile_uncorrected"
                                 : "ecc_aggregate_uncorrected");
  if (corrected) {
    *count = 2 * risen(gpu, "ecc_corr");
    return k_ok;
  }
  *count = static_cast<unsigned long long>(
      per_gpu(counter == 0 ? "FAKE_NVML_ECC_VOL" : "FAKE_NVML_ECC_AGG", gpu, 0));
  *count += counter == 0 ? risen(gpu, "ecc_unc") : 0;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause,
                                                   unsigned int* count,
                                                   unsigned long long* addresses) {
  DEVICE_PROLOGUE("retired_pages");
  if (arch(gpu) >= 7) {
    return k_not_supported;
  }
  const unsigned have = per_gpu("FAKE_NVML_RETIRED_PENDING", gpu, 0) != 0 && cause == 1 ? 1U : 0U;
  if (*count < have) {
    *count = have;
    return k_size;
  }
  for (unsigned i = 0; i < have; ++i) {
    addresses[i] = 0x1000ULL * (i + 1);
  }
  *count = have;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device,
                                                                nvmlEnableState_t* pending) {
  DEVICE_PROLOGUE("retired_pages_pending");
  if (arch(gpu) >= 7) {
    return k_not_supported;
  }
  *pending = per_gpu("FAKE_NVML_RETIRED_PENDING", gpu, 0) != 0 ? 1 : 0;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int* corr,
                                                   unsigned int* unc, unsigned int* pending,
                                                   unsigned int* failure) {
  DEVICE_PROLOGUE("remapped_rows");
  if (arch(gpu) < 7) {
    return k_not_supported;
  }
  *pending = per_gpu("FAKE_NVML_REMAP_PENDING", gpu, 0) != 0 || risen(gpu, "remap") ? 1 : 0;
  *failure = per_gpu("FAKE_NVML_REMAP_FAILURE", gpu, 0) != 0 ? 1 : 0;
  *corr = 0;
  *unc = *pending + *failure;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count,
                                                  nvmlFieldValue_t* values) {
  DEVICE_PROLOGUE("recovery_action");
  for (int i = 0; i < count; ++i) {
    auto& v = values[i];
    const long action = per_gpu("FAKE_NVML_RECOVERY", gpu, -1);
    if (v.fieldId == k_field_recovery_action && action >= 0) {
      v.nvmlReturn = k_ok;
      v.valueType = k_value_type_uint;
      v.value.uiVal = static_cast<unsigned>(action);
    } else {
      v.nvmlReturn = k_not_supported; // R535 has no field 230
    }
  }
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                                unsigned long long* reasons) {
  DEVICE_PROLOGUE("clock_event_reasons");
  *reasons = static_cast<unsigned long long>(per_gpu("FAKE_NVML_CLOCKS", gpu, 1)); // idle
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                   unsigned long long* reasons) {
  return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int, unsigned int* temp) {
  DEVICE_PROLOGUE("temperature");
  *temp = static_cast<unsigned>(per_gpu("FAKE_NVML_TEMP", gpu, 35));
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, int,
                                                           unsigned int* temp) {
  DEVICE_PROLOGUE("slowdown_temperature");
  *temp = 87;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device,
                                                      nvmlEnableState_t* mode) {
  DEVICE_PROLOGUE("persistence_mode");
  *mode = per_gpu("FAKE_NVML_PERSISTENCE", gpu, 1) != 0 ? 1 : 0;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t* mode) {
  DEVICE_PROLOGUE("compute_mode");
  *mode = static_cast<int>(per_gpu("FAKE_NVML_COMPUTE_MODE", gpu, 0));
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                              unsigned int* pending) {
  DEVICE_PROLOGUE("mig_mode");
  if (arch(gpu) < 7) {
    return k_not_supported;
  }
  *current = per_gpu("FAKE_NVML_MIG", gpu, 0) != 0 ? 1 : 0;
  *pending = per_gpu("FAKE_NVML_MIG_PENDING", gpu, *current) != 0 ? 1 : 0;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  DEVICE_PROLOGUE("memory_info");
  const unsigned long long mib = arch(gpu) >= 9 ? 81559 : arch(gpu) >= 7 ? 81920 : 32768;
  memory->total = mib << 20U;
  memory->used = 0;
  memory->free = memory->total;
  return k_ok;
}

namespace {

// The GPU instance profiles, by NVML_GPU_INSTANCE_PROFILE_* index: an H100 80GB's ids, slices and
// instance counts; memory sizes that name the profiles 1g.10gb, 2g.20gb, … (indexes not listed
// answer NOT_SUPPORTED up to 16, INVALID_ARGUMENT after).
struct FakeProfile {
  unsigned index;
  unsigned id;
  unsigned slices;
  unsigned count;
  unsigned placement_size;
  unsigned long long mib;
};
constexpr FakeProfile k_profiles[] = {
    {0, 19, 1, 7, 1, 9856},  {1, 14, 2, 3, 2, 19968}, {2, 9, 3, 2, 4, 40192},
    {3, 5, 4, 1, 4, 40192},  {4, 0, 7, 1, 8, 80768},  {7, 20, 1, 1, 1, 9856},
    {9, 15, 1, 4, 2, 19968},
};

bool mig_on(int gpu) {
  return arch(gpu) >= 7 && per_gpu("FAKE_NVML_MIG", gpu, 0) != 0;
}

// Every GPU instance FAKE_NVML_GPU_INSTANCES gives, made once (their handles stay valid).
std::vector<nvmlGpuInstance_st>& instances() {
  static std::vector<nvmlGpuInstance_st> all = [] {
    std::vector<nvmlGpuInstance_st> out;
    for (int gpu = 0; gpu < static_cast<int>(bus_ids().size()); ++gpu) {
      unsigned next_id = 1;
      for (const auto& one : split(per_gpu_text("FAKE_NVML_GPU_INSTANCES", gpu), '+')) {
        const auto at = one.find('@');
        if (at == std::string::npos) {
          continue;
        }
        const auto id = static_cast<unsigned>(std::atoi(one.substr(0, at).c_str()));
        for (const auto& p : k_profiles) {
          if (p.id == id) {
            nvmlGpuInstance_st gi{gpu, {}};
            gi.info.id = next_id++;
            gi.info.profileId = id;
            gi.info.placement.start = static_cast<unsigned>(std::atoi(one.substr(at + 1).c_str()));
            gi.info.placement.size = p.placement_size;
            out.push_back(gi);
          }
        }
      }
    }
    return out;
  }();
  return all;
}

} // namespace

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device,
                                                             unsigned int profile,
                                                             nvmlGpuInstanceProfileInfo_t* info) {
  DEVICE_PROLOGUE("gpu_instance_profile");
  if (profile > 16) {
    return k_invalid;
  }
  if (!mig_on(gpu)) {
    return k_not_supported;
  }
  for (const auto& p : k_profiles) {
    if (p.index == profile) {
      std::memset(info, 0, sizeof *info);
      info->id = p.id;
      info->sliceCount = p.slices;
      info->instanceCount = p.count;
      info->memorySizeMB = p.mib;
      return k_ok;
    }
  }
  return k_not_supported;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId,
                                                   nvmlGpuInstance_t* gpuInstances,
                                                   unsigned int* count) {
  DEVICE_PROLOGUE("gpu_instances");
  if (!mig_on(gpu)) {
    return k_not_supported;
  }
  if (listed("FAKE_NVML_GI_DENY", gpu)) {
    return 4; // NVML_ERROR_NO_PERMISSION
  }
  unsigned n = 0;
  for (auto& gi : instances()) {
    if (gi.gpu == gpu && gi.info.profileId == profileId) {
      if (n >= *count) {
        return k_size;
      }
      gpuInstances[n++] = &gi;
    }
  }
  *count = n;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance,
                                                nvmlGpuInstanceInfo_t* info) {
  if (!g_init) {
    return k_uninit;
  }
  for (auto& gi : instances()) {
    if (&gi == gpuInstance) {
      maybe_hang(gi.gpu, "gpu_instance_info");
      *info = gi.info;
      info->device = &g_devices[static_cast<std::size_t>(gi.gpu)];
      return k_ok;
    }
  }
  return k_invalid;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device,
                                                             unsigned int* gen) {
  DEVICE_PROLOGUE("pcie_gen");
  *gen = static_cast<unsigned>(per_gpu("FAKE_NVML_PCIE_GEN", gpu, 5));
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device,
                                                            unsigned int* gen) {
  DEVICE_PROLOGUE("pcie_gen_max");
  *gen = 5;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  DEVICE_PROLOGUE("pcie_width");
  *width = static_cast<unsigned>(per_gpu("FAKE_NVML_PCIE_WIDTH", gpu, 16));
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  DEVICE_PROLOGUE("pcie_width_max");
  *width = 16;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                                  nvmlEnableState_t* active) {
  DEVICE_PROLOGUE("nvlink");
  const long links = per_gpu("FAKE_NVML_NVLINKS", gpu, 0);
  if (links == 0) {
    return k_not_supported;
  }
  if (link >= static_cast<unsigned>(links)) {
    return k_invalid;
  }
  *active = per_gpu("FAKE_NVML_NVLINK_DOWN", gpu, -1) == static_cast<long>(link) ? 0 : 1;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device,
                                                    nvmlGpuFabricInfo_t* info) {
  DEVICE_PROLOGUE("fabric");
  const long state = per_gpu("FAKE_NVML_FABRIC", gpu, -1);
  if (arch(gpu) < 9 || state < 0) {
    return k_not_supported;
  }
  std::memset(info, 0, sizeof *info);
  info->state = static_cast<nvmlGpuFabricState_t>(state);
  info->status = static_cast<nvmlReturn_t>(per_gpu("FAKE_NVML_FABRIC_STATUS", gpu, 0));
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                                 unsigned int* count,
                                                                 nvmlProcessInfo_v2_t* infos) {
  DEVICE_PROLOGUE("processes");
  if (const char* many = std::getenv("FAKE_NVML_PROC_COUNT")) {
    const unsigned n = static_cast<unsigned>(std::strtoul(many, nullptr, 10));
    if (*count < n) {
      *count = n;
      return k_size;
    }
    for (unsigned i = 0; i < n; ++i) {
      infos[i] = {10000U + i, 1ULL << 20, 0xFFFFFFFFU, 0xFFFFFFFFU};
    }
    *count = n;
    return k_ok;
  }
  const long pid = per_gpu("FAKE_NVML_PROCS", gpu, 0);
  const unsigned have = pid > 0 ? 1U : 0U;
  if (*count < have) {
    *count = have;
    return k_size;
  }
  if (have) {
    infos[0] = {static_cast<unsigned>(pid), 1ULL << 30, 0xFFFFFFFFU, 0xFFFFFFFFU};
  }
  *count = have;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link,
                                                         int counter, unsigned long long* value) {
  DEVICE_PROLOGUE("nvlink_errors");
  const long links = per_gpu("FAKE_NVML_NVLINKS", gpu, 0);
  if (links == 0) {
    return k_not_supported;
  }
  if (link >= static_cast<unsigned>(links) || counter < 0 || counter > 4) {
    return k_invalid;
  }
  const bool rises = counter == k_nvlink_error_replay || counter == k_nvlink_error_crc_flit;
  *value = rises ? 2 * risen(gpu, "nvlink" + std::to_string(link)) : 0;
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int* value) {
  DEVICE_PROLOGUE("pcie_replay");
  *value = static_cast<unsigned>(2 * risen(gpu, "pcie"));
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSramEccErrorStatus(nvmlDevice_t device,
                                                         nvmlEccSramErrorStatus_t* status) {
  DEVICE_PROLOGUE("sram_ecc_status");
  if (status->version != k_sram_status_version) {
    return 25; // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  }
  if (arch(gpu) < 7) {
    return k_not_supported;
  }
  const unsigned version = status->version;
  std::memset(status, 0, sizeof *status);
  status->version = version;
  status->bThresholdExceeded = static_cast<unsigned>(risen(gpu, "sram"));
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceValidateInforom(nvmlDevice_t device) {
  DEVICE_PROLOGUE("inforom");
  return listed("FAKE_NVML_INFOROM_CORRUPT", gpu) ? 14 : k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type,
                                                unsigned int* clock) {
  DEVICE_PROLOGUE("sample");
  if (type != k_clock_sm) {
    return k_not_supported;
  }
  g_sampled = true;
  *clock = static_cast<unsigned>(per_gpu("FAKE_NVML_SM_CLOCK", gpu, 1980));
  return k_ok;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  DEVICE_PROLOGUE("sample");
  *power = static_cast<unsigned>(per_gpu("FAKE_NVML_POWER_MW", gpu, 350000));
  return k_ok;
}
