// The job-log tables (docs/explain-log.md): the pattern table, and NCCL's WARN families — the two
// places besides the rule rows that name rule ids, as candidates a job log points at.
// The pattern table. Error names and numbers: the CUDA runtime API's
// cudaError enumeration; NVML's nvmlReturn_t; the rest from the public issue where the cause was
// established. tests/data/explain-log/ holds a real excerpt per row, with its URL.
#include "gpf/knowledge/log_patterns.hpp"

#include <algorithm>

namespace gpf {
namespace {

constexpr std::string_view k_cuda_errors =
    "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html";
constexpr std::string_view k_nccl_ib_p2p =
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net_ib/p2p.cc";

constexpr LogPattern k_rows[] = {
    {"cuda.system-not-ready",
     LogCause::node,
     {"system not yet initialized", "CUDA_ERROR_SYSTEM_NOT_READY", "cudaErrorSystemNotReady"},
     "nvswitch.fabric-manager-missing nvswitch.fabric-manager-version nvml.fabric-incomplete "
     "nvswitch.fabric-manager-unchecked",
     "CUDA error 802: the system is not ready for CUDA work; on NVSwitch systems the Fabric "
     "Manager is not running or not matched to the driver",
     k_cuda_errors},
    {"cuda.compat-not-supported",
     LogCause::node,
     {"forward compatibility was attempted on non supported HW",
      "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "cudaErrorCompatNotSupportedOnDevice"},
     "gpu.forward-compat-unsupported cuda.forward-compat",
     "CUDA error 804: a forward-compatibility libcuda was loaded on a GPU that does not support "
     "forward compatibility",
     k_cuda_errors},
    {"cuda.system-driver-mismatch",
     LogCause::node,
     {"system has unsupported display driver / cuda driver combination",
      "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cudaErrorSystemDriverMismatch"},
     "cuda.driver-mismatch driver.library-version-mismatch driver.api-mismatch",
     "CUDA error 803: the libcuda the job loaded and the loaded kernel module come from different "
     "drivers (typically an upgrade without a reboot, or a driver baked into the image)",
     k_cuda_errors},
    {"cuda.stub-library",
     LogCause::node,
     {"CUDA driver is a stub library", "CUDA_ERROR_STUB_LIBRARY", "cudaErrorStubLibrary"},
     "driver.libcuda-stub-first cuda.stub-library",
     "CUDA error 34: the libcuda the job loaded is the toolkit's link-time stub, not the driver's",
     k_cuda_errors},
    {"nvml.driver-library-mismatch",
     LogCause::node,
     {"Driver/library version mismatch", "NVML_ERROR_LIB_RM_VERSION_MISMATCH", ""},
     "driver.library-version-mismatch driver.module-version-mismatch driver.api-mismatch",
     "NVML error 18: the user-space driver libraries and the loaded kernel module have different "
     "versions (typically a driver upgrade without a reboot or module reload)",
     "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html"},
    {"xla.kernel-dso-mismatch",
     LogCause::node,
     {"does not match DSO version", "", ""},
     "driver.library-version-mismatch cuda.driver-mismatch driver.api-mismatch",
     "TensorFlow's or JAX's CUDA diagnostics found the loaded kernel module and the libcuda the job "
     "loaded at different driver versions",
     "https://github.com/jax-ml/jax/issues/25822"},
    {"nvidia-smi.no-driver",
     LogCause::node,
     {"has failed because it couldn't communicate with the NVIDIA driver", "", ""},
     "module.nouveau-loaded driver.probe-not-called driver.not-loaded",
     "nvidia-smi found no NVIDIA kernel driver to talk to: it is not loaded, or another driver "
     "(nouveau) owns the GPUs",
     "https://github.com/mattshma/bigdata/issues/133"},
    {"container.nvml-driver-not-loaded",
     LogCause::node,
     {"nvml error: driver not loaded", "", ""},
     "module.nouveau-loaded driver.not-loaded",
     "The NVIDIA container runtime could not start the container's GPUs: the host's NVIDIA "
     "kernel driver is not loaded",
     "https://github.com/NVIDIA/nvidia-docker/issues/1393"},
    {"container.nvml-library-missing",
     LogCause::node,
     {"load library failed: libnvidia-ml.so.1", "", ""},
     "nvml.library-missing driver.not-loaded",
     "The NVIDIA container runtime could not load the host's NVML library: the driver's user-space "
     "libraries are not installed",
     "https://github.com/NVIDIA/nvidia-container-toolkit/issues/154"},
    {"nccl.shm-no-space",
     LogCause::node,
     {"posix_fallocate failed", "failed to extend /dev/shm/", ""},
     "shm.too-small",
     "NCCL could not create its shared-memory segment: /dev/shm is too small or full (64 MiB in a "
     "default Docker container)",
     "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"},
    {"accelerate.kernel-below-5.5",
     LogCause::node,
     {"which is below the recommended minimum of 5.5.0", "", ""},
     "kernel.below-5.5-multi-gpu",
     "accelerate warns that the kernel is older than 5.5, on which multi-GPU jobs have been seen "
     "to hang",
     "https://github.com/huggingface/accelerate/pull/2077"},
    {"cuda.devices-unavailable",
     LogCause::node,
     // "all CUDA-capable devices are ..." (older runtimes) and "CUDA-capable device(s) is/are ..."
     {"are busy or unavailable", "cudaErrorDevicesUnavailable", "CUDA_ERROR_DEVICE_UNAVAILABLE"},
     "nvml.exclusive-process-busy gpu.compute-mode-exclusive gpu.compute-mode-prohibited "
     "nvml.compute-prohibited cuda.gpu-in-use",
     "CUDA error 46: every GPU the job may use is taken by another process (exclusive compute "
     "mode) or prohibited",
     k_cuda_errors},
    {"cuda.ecc-uncorrectable",
     LogCause::node,
     {"uncorrectable ECC error encountered", "CUDA_ERROR_ECC_UNCORRECTABLE",
      "cudaErrorECCUncorrectable"},
     "nvml.ecc-volatile-uncorrectable nvml.row-remap-pending nvml.row-remap-failure "
     "nvml.retired-pages-pending xid.reset-required",
     "CUDA error 214: the GPU's memory had an uncorrectable ECC error; the GPU needs a reset and "
     "may be failing",
     k_cuda_errors},
    {"cuda.insufficient-driver",
     LogCause::node,
     {"CUDA driver version is insufficient for CUDA runtime version", "cudaErrorInsufficientDriver",
      ""},
     "cuda.driver-too-old cuda.minor-version-compat",
     "CUDA error 35: the installed driver is older than the CUDA runtime the job was built with",
     k_cuda_errors},
    {"torch.driver-too-old",
     LogCause::node,
     {"The NVIDIA driver on your system is too old", "", ""},
     "cuda.driver-too-old cuda.minor-version-compat",
     "PyTorch found a driver older than the CUDA version it was built with (the number is the "
     "driver's CUDA version, e.g. 11040 = 11.4)",
     "https://github.com/IEIT-Yuan/Yuan-2.0/issues/65"},
    {"cuda.unknown-init-error",
     LogCause::node,
     {"CUDA unknown error - this may be due to an incorrectly set up environment",
      "failed call to cuInit: CUDA_ERROR_UNKNOWN", ""},
     "devnode.nvidia-uvm-missing devnode.not-accessible driver.not-loaded",
     "CUDA initialisation failed with error 999; most often /dev/nvidia-uvm is missing (nvidia_uvm "
     "not loaded, or lost after a suspend)",
     "https://github.com/pytorch/pytorch/issues/49081"},
    {"torch.no-nvidia-driver",
     LogCause::node,
     {"Found no NVIDIA driver on your system", "", ""},
     "driver.not-loaded driver.no-nvidia-device module.nouveau-loaded",
     "PyTorch found no NVIDIA driver: the kernel driver is not loaded on this node (or the "
     "container was started without the NVIDIA runtime), or the node has no NVIDIA GPU at all "
     "(a virtual machine without the GPU passed through)",
     "https://github.com/facebookresearch/detectron2/issues/3104"},
    {"nccl.ib-reg-mr-no-memory",
     LogCause::node,
     {"ibv_reg_mr failed with error Cannot allocate memory",
      "ibv_reg_mr_iova2 failed with error Cannot allocate memory", ""},
     "limits.memlock-low rdma.peer-memory-missing",
     "NCCL could not register memory with the InfiniBand device (ENOMEM from ibv_reg_mr): almost "
     "always the job's locked-memory limit (ulimit -l) is too low; it must be unlimited for RDMA",
     "https://github.com/NVIDIA/nccl-tests/issues/206"},
    {"nccl.ib-completion-error",
     LogCause::node,
     {"Got completion from peer", "", ""},
     "ib.port-not-active ib.port-disabled pcie.acs-redirect iommu.not-passthrough",
     "NCCL's InfiniBand transport got a failed work completion from a peer; status=12 is "
     "IBV_WC_RETRY_EXC_ERR (transport retries exceeded): the peer could not be reached over the "
     "fabric - a port or link down or flapping, a subnet-manager or routing fault, or on this node "
     "PCIe ACS redirecting GPU-NIC traffic",
     k_nccl_ib_p2p},
    {"torch.nccl-watchdog-timeout",
     LogCause::node,
     {"Watchdog caught collective operation timeout", "", ""},
     "nccl.all-reduce-hung cuda.multi-gpu-hung pcie.acs-redirect ib.port-not-active "
     "ib.port-disabled nvml.nvlink-down kernel.below-5.5-multi-gpu",
     "PyTorch's NCCL watchdog gave up on a collective that did not finish within its timeout "
     "(10 min by default). Ambiguous: a node fault (a GPU, NVLink, PCIe peer path or network path "
     "that stopped completing) or the job's own (ranks that diverged, one rank stuck in data "
     "loading or much slower); the node rules below are the causes to rule out, and the first "
     "NCCL WARN line before it usually names the failed transport",
     "https://github.com/pytorch/pytorch/issues/118369"},
    {"cuda.no-device",
     LogCause::node,
     {"no CUDA-capable device is detected", "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice"},
     "env.cuda-visible-devices-unknown-entry env.cuda-visible-devices-empty "
     "devnode.nvidiactl-missing gpu.devnode-unusable driver.not-loaded",
     "CUDA error 100: CUDA sees no GPU: CUDA_VISIBLE_DEVICES names none that exists, or the "
     "device nodes or the driver are missing",
     k_cuda_errors},
    {"job.cuda-out-of-memory",
     LogCause::job,
     {"CUDA out of memory. Tried to allocate", "torch.cuda.OutOfMemoryError", ""},
     "",
     "The job asked for more GPU memory than was free: reduce the batch or model size; if "
     "another process holds the memory, `gpu-preflight check --expect-idle` names it",
     "https://pytorch.org/docs/stable/notes/cuda.html#memory-management"},
    {"job.torch-arch-not-in-build",
     LogCause::job,
     {"is not compatible with the current PyTorch installation", "", ""},
     "",
     "The job's PyTorch build contains no code for this GPU: the line names the GPU and its "
     "compute capability (sm_XY), the next one the build's architecture list (\"The current "
     "PyTorch install supports CUDA capabilities ...\"); install a build whose list includes it "
     "(for Blackwell sm_100/sm_120 a CUDA 12.8 or newer wheel)",
     "https://github.com/pytorch/pytorch/issues/150733"},
    {"job.no-kernel-image",
     LogCause::job,
     {"no kernel image is available for execution on the device", "CUDA_ERROR_NO_BINARY_FOR_GPU",
      "cudaErrorNoKernelImageForDevice"},
     "",
     "CUDA error 209: the job's code (the framework or one of its compiled extensions) holds no "
     "kernel for this GPU's compute capability: rebuild it for this GPU (TORCH_CUDA_ARCH_LIST, "
     "nvcc -gencode) or install a build that targets it; `gpu-preflight check --expect-cuda X.Y` "
     "names the GPUs a toolkit cannot target",
     "https://github.com/csuhan/ReDet/issues/49"},
    {"job.device-side-assert",
     LogCause::job,
     {"device-side assert triggered", "", ""},
     "",
     "A kernel of the job failed an assertion (often an index or label out of range): rerun "
     "with CUDA_LAUNCH_BLOCKING=1 to see where",
     "https://github.com/ultralytics/ultralytics/issues/4160"},
    {"job.import-error",
     LogCause::job,
     {"ModuleNotFoundError: No module named", "", ""},
     "",
     "The job's Python environment lacks a module: install it in the job's environment or image",
     "https://docs.python.org/3/library/exceptions.html#ModuleNotFoundError"},
};

} // namespace

std::span<const LogPattern> log_patterns() {
  return k_rows;
}

const LogPattern* find_log_pattern(std::string_view id) {
  const auto* row = std::find_if(std::begin(k_rows), std::end(k_rows),
                                 [&](const LogPattern& p) { return p.id == id; });
  return row == std::end(k_rows) ? nullptr : row;
}

// NCCL's WARN families. The message starts are the format strings' fixed beginnings in
// NVIDIA/nccl at k_nccl_warn_tag (WARN(...) calls of the files each row's source names); the rules
// are gpu-preflight's judgement of what on the node can cause them.
namespace {

constexpr NcclWarnFamily k_families[] = {
    {"shared-memory",
     "shared memory",
     {"Error while creating shared memory segment",
      "Error while attaching to shared memory segment", "Error: failed to extend", "", "", ""},
     "shm.too-small",
     "NCCL could not create or grow its /dev/shm segment: /dev/shm is too small or full (64 MiB in "
     "a default Docker container)",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/os/linux.cc"},
    {"ib-verbs",
     "InfiniBand verbs",
     {"NET/IB", "Call to ibv_", "ibv_post_send() failed", "ibv_post_recv() failed",
      "Call to ibv_poll_cq()", ""},
     "limits.memlock-low ib.port-not-active ib.port-disabled rdma.peer-memory-missing "
     "rdma.peermem-version pcie.acs-redirect",
     "NCCL's InfiniBand/RoCE transport failed: memory registration (the locked-memory limit, the "
     "GPUDirect peer-memory module), a port or link that is down, or a peer it could not reach",
     "https://github.com/NVIDIA/nccl/tree/v2.30.7-1/src/transport/net_ib ; "
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/ibvwrap.cc"},
    {"sockets",
     "sockets",
     {"NET/Socket", "Net : ", "socketProgress: Connection closed by remote peer", "", "", ""},
     "nccl.call-failed",
     "NCCL's socket transport or bootstrap failed: no usable network interface "
     "(NCCL_SOCKET_IFNAME), an address that does not resolve, or a peer that closed the "
     "connection (often another rank that died first)",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/socket.cc ; "
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/bootstrap.cc"},
    {"p2p-ipc",
     "P2P / CUDA IPC",
     {"failed to peer with device", "cudaIpcGetMemHandle failed", "", "", "", ""},
     "cuda.multi-gpu-failed pcie.acs-redirect iommu.not-passthrough",
     "NCCL could not enable peer access between two GPUs or share a buffer between processes: "
     "the PCIe path (ACS redirection, an IOMMU in translation mode) or a GPU that failed",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/p2p.cc"},
    {"cuda-calls",
     "CUDA calls",
     {"Cuda failure", "", "", "", "", ""},
     "cuda.gpu-failed xid.reset-required nvml.gpu-unreachable cuda.driver-too-old",
     "A CUDA call inside NCCL failed; the quoted CUDA error says whether it is the node (a GPU that "
     "failed or fell off the bus, a driver too old) or the job (out of memory, an illegal address)",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/checks.h ; "
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/cudawrap.h"},
    {"plugins",
     "network plugins",
     {"Failed to initialize any NET plugin", "NCCL_DEVICE_UNPACK plugin has incompatible version",
      "", "", "", ""},
     "ib.port-not-active rdma.peer-memory-missing",
     "NCCL found no network plugin it could start (not even its own IB or socket transport), or a "
     "plugin built for another NCCL",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/plugin/net.cc"},
    {"timeouts-aborts",
     "timeouts and aborts",
     {"Comm ", "commReclaim: ", "", "", "", ""},
     "nccl.all-reduce-hung cuda.multi-gpu-hung",
     "A communicator was aborted or reclaimed, usually after a timeout or another rank's failure: "
     "look for the first WARN of another family before it",
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/proxy.cc ; "
     "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc"},
};

constexpr std::string_view k_marker = "NCCL WARN ";

} // namespace

std::span<const NcclWarnFamily> nccl_warn_families() {
  return k_families;
}

const NcclWarnFamily* nccl_warn_family(std::string_view line) {
  const auto at = line.find(k_marker);
  if (at == std::string_view::npos) {
    return nullptr;
  }
  const std::string_view message = line.substr(at + k_marker.size());
  for (const auto& family : k_families) {
    for (const auto start : family.starts) {
      if (!start.empty() && message.substr(0, start.size()) == start) {
        return &family;
      }
    }
  }
  return nullptr;
}

} // namespace gpf
