// CUDA's error codes as data (include/gpf/knowledge/cuda_errors.hpp). Names and values: CUDA 13.3,
// the driver API's CUresult (cuda.h; k_cuda_driver_errors_url) and the runtime API's cudaError_t
// (driver_types.h; k_cuda_runtime_errors_url); the code list is tests/data/cuda-errors-13.3.tsv.
// The meanings are ours, in short; the class and the detail are gpu-preflight's judgement of
// whose fault the error is. A printed text is the runtime's message as public job logs quote it
// (the row's URL in tests/unit/explain_log_test.cpp). Rows stay sorted by value (a test checks).
#include "gpf/knowledge/cuda_errors.hpp"

#include "gpf/util/enum_names.hpp"

#include <algorithm>

namespace gpf {
namespace {

using C = CudaErrorClass;

constexpr CudaError k_rows[] = {
    {0, "CUDA_SUCCESS", "cudaSuccess", C::none, "no error", ""},
    {1, "CUDA_ERROR_INVALID_VALUE", "cudaErrorInvalidValue", C::job,
     "an argument of the call is out of its allowed range", ""},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation", C::ambiguous,
     "not enough GPU memory (or another resource) for the request",
     "the job asking for too much is the usual cause; memory already held by another "
     "process on the GPU (or a GPU whose memory is nearly all used at the start) "
     "points at the node"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "cudaErrorInitializationError", C::ambiguous,
     "CUDA was not initialised, or its initialisation failed",
     "at the job's first CUDA call it is the node (no driver loaded, device nodes "
     "missing or not accessible in the container); after working calls, the job's "
     "use of the API (a call before cuInit, or in a forked child)"},
    {4, "CUDA_ERROR_DEINITIALIZED", "cudaErrorCudartUnloading", C::job,
     "CUDA is shutting down in this process (a call during process exit)", ""},
    {5, "CUDA_ERROR_PROFILER_DISABLED", "cudaErrorProfilerDisabled", C::job,
     "the profiler is not enabled for this run (an external profiling tool is in use)", ""},
    {6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED", "cudaErrorProfilerNotInitialized", C::job,
     "profiler not initialised (no longer returned)", ""},
    {7, "CUDA_ERROR_PROFILER_ALREADY_STARTED", "cudaErrorProfilerAlreadyStarted", C::job,
     "profiler already started (no longer returned)", ""},
    {8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", "cudaErrorProfilerAlreadyStopped", C::job,
     "profiler already stopped (no longer returned)", ""},
    {9, "", "cudaErrorInvalidConfiguration", C::job,
     "the launch asks for more than the GPU can give (threads, blocks or shared "
     "memory per block)",
     ""},
    {10, "", "cudaErrorVersionTranslation", C::job,
     "the driver is newer than the job's CUDA runtime and returned graph parameters "
     "the runtime cannot translate: update the job's runtime",
     ""},
    {12, "", "cudaErrorInvalidPitchValue", C::job, "a pitch argument is out of range", ""},
    {13, "", "cudaErrorInvalidSymbol", C::job, "the symbol named in the call is not valid", ""},
    {16, "", "cudaErrorInvalidHostPointer", C::job,
     "a host pointer is not valid (no longer returned)", ""},
    {17, "", "cudaErrorInvalidDevicePointer", C::job,
     "a device pointer is not valid (no longer returned)", ""},
    {18, "", "cudaErrorInvalidTexture", C::job, "the texture argument is not valid", ""},
    {19, "", "cudaErrorInvalidTextureBinding", C::job, "the texture is not bound as the call needs",
     ""},
    {20, "", "cudaErrorInvalidChannelDescriptor", C::job,
     "the channel format descriptor is not valid", ""},
    {21, "", "cudaErrorInvalidMemcpyDirection", C::job, "the copy direction is not one CUDA knows",
     ""},
    {22, "", "cudaErrorAddressOfConstant", C::job,
     "address of a constant variable taken (obsolete since CUDA 3.1)", ""},
    {23, "", "cudaErrorTextureFetchFailed", C::job,
     "texture fetch failed (device emulation; obsolete)", ""},
    {24, "", "cudaErrorTextureNotBound", C::job, "texture not bound (device emulation; obsolete)",
     ""},
    {25, "", "cudaErrorSynchronizationError", C::job,
     "synchronisation failed (device emulation; obsolete)", ""},
    {26, "", "cudaErrorInvalidFilterSetting", C::job,
     "linear filtering asked of a texture that is not floating point", ""},
    {27, "", "cudaErrorInvalidNormSetting", C::job,
     "a data type read as normalised float that cannot be", ""},
    {28, "", "cudaErrorMixedDeviceExecution", C::job, "device and emulation code mixed (obsolete)",
     ""},
    {31, "", "cudaErrorNotYetImplemented", C::job,
     "the call has no implementation (never in a release)", ""},
    {32, "", "cudaErrorMemoryValueTooLarge", C::job,
     "an emulated device pointer beyond 32 bits (obsolete)", ""},
    {34, "CUDA_ERROR_STUB_LIBRARY", "cudaErrorStubLibrary", C::node,
     "the libcuda the job loaded is the CUDA toolkit's link-time stub, not the "
     "driver's",
     "the toolkit's stubs directory found before the driver's libcuda "
     "(LD_LIBRARY_PATH, ld.so.conf, an image that ships the stub), or no driver "
     "libcuda at all"},
    {35, "", "cudaErrorInsufficientDriver", C::node,
     "the installed driver is older than the CUDA runtime the job was built with",
     "a driver whose CUDA version is below the job's runtime, without a working "
     "forward-compatibility package"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "cudaErrorCallRequiresNewerDriver", C::ambiguous,
     "the call needs a newer driver than the one installed",
     "the job uses an API newer than the node's driver: the node's driver version "
     "against the CUDA version the job was built for decides whether the driver or "
     "the job's build should move"},
    {37, "", "cudaErrorInvalidSurface", C::job, "the surface argument is not valid", ""},
    {43, "", "cudaErrorDuplicateVariableName", C::job,
     "two global or constant variables of the program share a name", ""},
    {44, "", "cudaErrorDuplicateTextureName", C::job, "two textures of the program share a name",
     ""},
    {45, "", "cudaErrorDuplicateSurfaceName", C::job, "two surfaces of the program share a name",
     ""},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "cudaErrorDevicesUnavailable", C::node,
     "the GPU (or every GPU the job may use) is busy or unavailable",
     "a GPU in exclusive-process compute mode already held by another process, a GPU "
     "in prohibited compute mode, or a GPU filled by another process's work"},
    {49, "", "cudaErrorIncompatibleDriverContext", C::job,
     "the current driver-API context cannot be used by the runtime (old API version, "
     "not primary, or destroyed)",
     ""},
    {52, "", "cudaErrorMissingConfiguration", C::job,
     "a kernel was invoked without a launch configuration", ""},
    {53, "", "cudaErrorPriorLaunchFailure", C::job,
     "an earlier launch failed (device emulation; obsolete)", ""},
    {65, "", "cudaErrorLaunchMaxDepthExceeded", C::job,
     "a device-side launch nests deeper than allowed", ""},
    {66, "", "cudaErrorLaunchFileScopedTex", C::job,
     "a device-side launch uses file-scoped textures, which the device runtime does "
     "not support",
     ""},
    {67, "", "cudaErrorLaunchFileScopedSurf", C::job,
     "a device-side launch uses file-scoped surfaces, which the device runtime does "
     "not support",
     ""},
    {68, "", "cudaErrorSyncDepthExceeded", C::job,
     "a device-side synchronise at a grid depth above the configured limit", ""},
    {69, "", "cudaErrorLaunchPendingCountExceeded", C::job,
     "more device-side launches pending than the configured limit", ""},
    {98, "", "cudaErrorInvalidDeviceFunction", C::job,
     "the kernel does not exist or was not built for this GPU's architecture", ""},
    {100, "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice", C::node, "CUDA finds no GPU",
     "CUDA_VISIBLE_DEVICES naming no GPU that exists, device nodes missing or not "
     "passed into the container, the NVIDIA driver not loaded, or no NVIDIA GPU on "
     "the node"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "cudaErrorInvalidDevice", C::ambiguous,
     "the device ordinal names no GPU CUDA can see, or the request does not apply to "
     "it",
     "an ordinal beyond the job's own GPU count is the job's; fewer GPUs visible "
     "than the job was scheduled with (CUDA_VISIBLE_DEVICES, a GPU that fell off the "
     "bus) is the node's"},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED", "cudaErrorDeviceNotLicensed", C::node,
     "the GPU has no valid licence (virtual GPU licensing)",
     "a vGPU guest whose licence was not acquired or has expired (the licensing "
     "client and its server)"},
    {103, "", "cudaErrorSoftwareValidityNotEstablished", C::node,
     "the runtime's self-tests of itself and the driver failed",
     "a damaged or mismatched driver or runtime installation"},
    {127, "", "cudaErrorStartupFailure", C::ambiguous,
     "the CUDA runtime failed inside its own start-up",
     "the same job failing on one node but not on others points at the node's "
     "driver; everywhere, at the job's runtime"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "cudaErrorInvalidKernelImage", C::job,
     "the kernel image or module is not valid", ""},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "cudaErrorDeviceUninitialized", C::job,
     "no usable context is current (none bound, destroyed, or of another API version)", ""},
    {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "", C::job,
     "the context is already current (no longer returned)", ""},
    {205, "CUDA_ERROR_MAP_FAILED", "cudaErrorMapBufferObjectFailed", C::job,
     "a map or register operation failed", ""},
    {206, "CUDA_ERROR_UNMAP_FAILED", "cudaErrorUnmapBufferObjectFailed", C::job,
     "an unmap or unregister operation failed", ""},
    {207, "CUDA_ERROR_ARRAY_IS_MAPPED", "cudaErrorArrayIsMapped", C::job,
     "the array is mapped and cannot be destroyed", ""},
    {208, "CUDA_ERROR_ALREADY_MAPPED", "cudaErrorAlreadyMapped", C::job,
     "the resource is already mapped", ""},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "cudaErrorNoKernelImageForDevice", C::job,
     "the program holds no kernel code for this GPU's architecture (built without it)", ""},
    {210, "CUDA_ERROR_ALREADY_ACQUIRED", "cudaErrorAlreadyAcquired", C::job,
     "the resource was already acquired", ""},
    {211, "CUDA_ERROR_NOT_MAPPED", "cudaErrorNotMapped", C::job, "the resource is not mapped", ""},
    {212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", "cudaErrorNotMappedAsArray", C::job,
     "the mapped resource cannot be used as an array", ""},
    {213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", "cudaErrorNotMappedAsPointer", C::job,
     "the mapped resource cannot be used as a pointer", ""},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE", "cudaErrorECCUncorrectable", C::node,
     "the GPU's memory had an uncorrectable ECC error while the job ran",
     "failing GPU memory: volatile uncorrectable ECC counts, pending row remaps or "
     "page retirements, a GPU that needs a reset"},
    {215, "CUDA_ERROR_UNSUPPORTED_LIMIT", "cudaErrorUnsupportedLimit", C::job,
     "the GPU does not support the limit named in the call", ""},
    {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "cudaErrorDeviceAlreadyInUse", C::ambiguous,
     "the context or device is already bound to another thread",
     "a GPU left in an exclusive compute mode by the node's setup is the node's; the "
     "job's own threads sharing one context is the job's"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "cudaErrorPeerAccessUnsupported", C::ambiguous,
     "the two GPUs cannot access each other's memory directly",
     "GPUs that should reach each other (same PCIe switch or NVLink) but cannot "
     "point at the node (PCIe ACS redirection, an IOMMU in translation mode, NVLink "
     "down); GPUs that never could, at the job assuming peer access"},
    {218, "CUDA_ERROR_INVALID_PTX", "cudaErrorInvalidPtx", C::job,
     "compiling the program's PTX at run time failed", ""},
    {219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", "cudaErrorInvalidGraphicsContext", C::job,
     "the OpenGL or DirectX context is not valid", ""},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", "cudaErrorNvlinkUncorrectable", C::node,
     "an uncorrectable NVLink error while the job ran",
     "a failing NVLink link or NVSwitch (NVLink Xids and SXids in the kernel log, "
     "links reported down)",
     "uncorrectable NVLink error detected during the execution"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "cudaErrorJitCompilerNotFound", C::node,
     "the driver's PTX JIT compiler library is missing",
     "the driver's libnvidia-ptxjitcompiler not installed, or not mounted into the "
     "container with the other driver libraries",
     "PTX JIT compiler library not found"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "cudaErrorUnsupportedPtxVersion", C::ambiguous,
     "the PTX was produced by a toolkit newer than the driver's JIT compiler "
     "understands",
     "the node's driver CUDA version below the toolkit the job was built with: "
     "update the driver, or build the job for the driver's CUDA"},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "cudaErrorJitCompilationDisabled", C::ambiguous,
     "PTX had to be compiled at run time but JIT compilation is turned off",
     "CUDA_DISABLE_PTX_JIT set in the job's environment (by the job or the node's "
     "defaults), with no kernel code built for this GPU"},
    {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "cudaErrorUnsupportedExecAffinity", C::job,
     "the GPU does not support the execution affinity asked for", ""},
    {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", "cudaErrorUnsupportedDevSideSync", C::job,
     "the code calls a device-side synchronise this GPU does not support", ""},
    {226, "CUDA_ERROR_CONTAINED", "cudaErrorContained", C::ambiguous,
     "a device exception the GPU contained; the process must restart",
     "Xids in the kernel log naming hardware (memory, NVLink) point at the node; a "
     "bad access to a peer GPU's memory is the job's"},
    {300, "CUDA_ERROR_INVALID_SOURCE", "cudaErrorInvalidSource", C::job,
     "the kernel source is not valid (compile or link errors in device code)", ""},
    {301, "CUDA_ERROR_FILE_NOT_FOUND", "cudaErrorFileNotFound", C::job,
     "the file named in the call does not exist", ""},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "cudaErrorSharedObjectSymbolNotFound",
     C::job, "a link to a shared object did not resolve", ""},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "cudaErrorSharedObjectInitFailed", C::job,
     "a shared object failed to initialise", ""},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "cudaErrorOperatingSystem", C::ambiguous,
     "an operating-system call made by CUDA failed",
     "limits and permissions of the node (locked memory, open files, /dev/shm, "
     "device-node access) are the node's; the job's own misuse of fork or signals is "
     "the job's"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "cudaErrorInvalidResourceHandle", C::job,
     "a handle (stream, event, module) passed to the call is not valid", ""},
    {401, "CUDA_ERROR_ILLEGAL_STATE", "cudaErrorIllegalState", C::job,
     "a resource the call needs is not in a state that allows it", ""},
    {402, "CUDA_ERROR_LOSSY_QUERY", "cudaErrorLossyQuery", C::job,
     "the query would lose information (an older API version, or an output left out)", ""},
    {500, "CUDA_ERROR_NOT_FOUND", "cudaErrorSymbolNotFound", C::job,
     "the named symbol (variable, function, texture) was not found", ""},
    {600, "CUDA_ERROR_NOT_READY", "cudaErrorNotReady", C::none,
     "work queried is still running (a query's answer, not a failure)", ""},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "cudaErrorIllegalAddress", C::job,
     "a kernel read or wrote an invalid address; the process must restart", ""},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "cudaErrorLaunchOutOfResources", C::job,
     "the launch needs more resources (registers, arguments) than the GPU gives it", ""},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "cudaErrorLaunchTimeout", C::ambiguous,
     "a kernel ran longer than the GPU's watchdog allows; the process must restart",
     "a kernel-run timeout is only enforced on a GPU that also drives a display: the "
     "node's setup; a kernel that never ends is the job's"},
    {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", "cudaErrorLaunchIncompatibleTexturing",
     C::job, "the launch uses an incompatible texturing mode", ""},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "cudaErrorPeerAccessAlreadyEnabled", C::job,
     "peer access to that context was already enabled", ""},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "cudaErrorPeerAccessNotEnabled", C::job,
     "peer access was never enabled, so it cannot be disabled", ""},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", "cudaErrorSetOnActiveProcess", C::job,
     "settings that must precede the primary context were changed after it was created", ""},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "cudaErrorContextIsDestroyed", C::job,
     "the current context was destroyed or never initialised", ""},
    {710, "CUDA_ERROR_ASSERT", "cudaErrorAssert", C::job,
     "a device-side assert failed in a kernel; the process must restart", ""},
    {711, "CUDA_ERROR_TOO_MANY_PEERS", "cudaErrorTooManyPeers", C::job,
     "peer access enabled to more GPUs than the hardware allows", ""},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "cudaErrorHostMemoryAlreadyRegistered",
     C::job, "the host memory range is already registered", ""},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "cudaErrorHostMemoryNotRegistered", C::job,
     "the pointer is not in a registered host memory range", ""},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "cudaErrorHardwareStackError", C::job,
     "a kernel broke its call stack (overflow, corruption); the process must restart", ""},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "cudaErrorIllegalInstruction", C::job,
     "a kernel executed an illegal instruction; the process must restart", ""},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", "cudaErrorMisalignedAddress", C::job,
     "a kernel accessed a misaligned address; the process must restart", ""},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "cudaErrorInvalidAddressSpace", C::job,
     "a kernel used an address in the wrong address space; the process must restart", ""},
    {718, "CUDA_ERROR_INVALID_PC", "cudaErrorInvalidPc", C::job,
     "a kernel's program counter went out of its code; the process must restart", ""},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "cudaErrorLaunchFailure", C::ambiguous,
     "an exception on the GPU while a kernel ran; the process must restart",
     "Xids in the kernel log at that time that name hardware (memory, the bus, a GPU "
     "that fell off) point at the node; none, or application Xids only, at the job's "
     "kernel"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "cudaErrorCooperativeLaunchTooLarge", C::job,
     "a cooperative launch asks for more blocks than can run at once", ""},
    {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK", "cudaErrorTensorMemoryLeak", C::job,
     "a kernel exited without freeing its tensor memory; the process must restart", ""},
    {800, "CUDA_ERROR_NOT_PERMITTED", "cudaErrorNotPermitted", C::ambiguous,
     "the operation is not permitted",
     "permissions or policies of the node (compute mode, MIG or MPS setup, a "
     "container's restrictions) against an operation the job may not do anywhere"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "cudaErrorNotSupported", C::ambiguous,
     "the operation is not supported on this system or GPU",
     "a feature this node's GPU, driver or setup lacks (the node's model and driver "
     "decide) against a feature no such node has"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "cudaErrorSystemNotReady", C::node,
     "the system is not ready for CUDA work yet",
     "on NVSwitch systems the Fabric Manager not running, not matched to the driver, "
     "or the NVLink fabric not set up"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cudaErrorSystemDriverMismatch", C::node,
     "the libcuda the job loaded and the loaded kernel module are different driver "
     "versions",
     "a driver upgraded without a reboot or module reload, or a driver's user-space "
     "libraries baked into the image"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "cudaErrorCompatNotSupportedOnDevice",
     C::node, "a forward-compatibility libcuda was loaded on a GPU that does not support it",
     "a cuda-compat package on the library path of a node whose GPUs are not "
     "data-center (or selected) parts"},
    {805, "CUDA_ERROR_MPS_CONNECTION_FAILED", "cudaErrorMpsConnectionFailed", C::node,
     "could not connect to the MPS control daemon or server",
     "the MPS control daemon not running, or its pipe directory not shared with the "
     "job (CUDA_MPS_PIPE_DIRECTORY)",
     "MPS client failed to connect to the MPS control daemon or the MPS server"},
    {806, "CUDA_ERROR_MPS_RPC_FAILURE", "cudaErrorMpsRpcFailure", C::node,
     "a call between the MPS client and server failed", "an MPS server that died or was restarted"},
    {807, "CUDA_ERROR_MPS_SERVER_NOT_READY", "cudaErrorMpsServerNotReady", C::node,
     "the MPS server does not accept clients yet",
     "an MPS server still starting or recovering from a fault"},
    {808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", "cudaErrorMpsMaxClientsReached", C::ambiguous,
     "no room for another MPS client",
     "other jobs' MPS clients on the GPU are the node's share; the job starting more "
     "processes than the GPU takes is the job's"},
    {809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", "cudaErrorMpsMaxConnectionsReached",
     C::ambiguous, "no room for another MPS device connection",
     "other jobs' MPS clients on the GPU are the node's share; the job's own "
     "connection count is the job's"},
    {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED", "cudaErrorMpsClientTerminated", C::ambiguous,
     "the MPS server ended this client",
     "a fault of another client or of the GPU ends every client (the node); this "
     "client's own fault ends it (the job)"},
    {811, "CUDA_ERROR_CDP_NOT_SUPPORTED", "cudaErrorCdpNotSupported", C::job,
     "the module uses dynamic parallelism, which this configuration does not support", ""},
    {812, "CUDA_ERROR_CDP_VERSION_MISMATCH", "cudaErrorCdpVersionMismatch", C::job,
     "the module mixes incompatible versions of dynamic parallelism", ""},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "cudaErrorStreamCaptureUnsupported", C::job,
     "the operation is not allowed while the stream is being captured", ""},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "cudaErrorStreamCaptureInvalidated", C::job,
     "the stream's capture was invalidated by an earlier error", ""},
    {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", "cudaErrorStreamCaptureMerge", C::job,
     "the operation would merge two separate captures", ""},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "cudaErrorStreamCaptureUnmatched", C::job,
     "the capture was not started in this stream", ""},
    {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "cudaErrorStreamCaptureUnjoined", C::job,
     "a capture forked into a stream that was not joined back", ""},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "cudaErrorStreamCaptureIsolation", C::job,
     "a dependency would cross the capture's boundary", ""},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "cudaErrorStreamCaptureImplicit", C::job,
     "an implicit dependency on the legacy stream during a capture", ""},
    {907, "CUDA_ERROR_CAPTURED_EVENT", "cudaErrorCapturedEvent", C::job,
     "the event was last recorded in a stream being captured", ""},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "cudaErrorStreamCaptureWrongThread", C::job,
     "a capture was ended from another thread than the one that began it", ""},
    {909, "CUDA_ERROR_TIMEOUT", "cudaErrorTimeout", C::job, "the wait's own timeout elapsed", ""},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "cudaErrorGraphExecUpdateFailure", C::job,
     "the graph update breaks the rules for updating an instantiated graph", ""},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE", "cudaErrorExternalDevice", C::ambiguous,
     "a device outside the GPU (such as a network adapter in a direct transfer) failed",
     "errors of the network adapter or its link on the node (InfiniBand ports, the "
     "peer-memory module) against the job's use of the external resource"},
    {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "cudaErrorInvalidClusterSize", C::job,
     "the kernel's thread-block cluster configuration is not valid", ""},
    {913, "CUDA_ERROR_FUNCTION_NOT_LOADED", "cudaErrorFunctionNotLoaded", C::job,
     "the function is not loaded yet", ""},
    {914, "CUDA_ERROR_INVALID_RESOURCE_TYPE", "cudaErrorInvalidResourceType", C::job,
     "a resource passed to the operation is of the wrong type", ""},
    {915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", "cudaErrorInvalidResourceConfiguration",
     C::job, "the resources passed do not fit the operation", ""},
    {916, "CUDA_ERROR_KEY_ROTATION", "", C::node,
     "rotating the encryption keys failed (confidential computing)",
     "a confidential-computing GPU whose key rotation failed: the GPU or its driver "
     "setup"},
    {917, "CUDA_ERROR_STREAM_DETACHED", "cudaErrorStreamDetached", C::job,
     "the stream is detached (its green or execution context was destroyed)", ""},
    {918, "CUDA_ERROR_GRAPH_RECAPTURE_FAILURE", "cudaErrorGraphRecaptureFailure", C::job,
     "recapturing a graph failed and was ended", ""},
    {999, "CUDA_ERROR_UNKNOWN", "cudaErrorUnknown", C::ambiguous,
     "an internal error CUDA does not name",
     "at initialisation (the first CUDA call) it is the node: /dev/nvidia-uvm "
     "missing, the uvm module not loaded, a GPU in a bad state; later, Xids in the "
     "kernel log decide"},
    {10000, "", "cudaErrorApiFailureBase", C::ambiguous,
     "the base of the runtime codes that carry a driver error",
     "subtract 10000 and read the remainder as a CUresult: its row says whose fault "
     "it is"},
};

} // namespace

std::span<const CudaError> cuda_errors() {
  return k_rows;
}

const CudaError* find_cuda_error(int value) {
  const auto* row = std::lower_bound(std::begin(k_rows), std::end(k_rows), value,
                                     [](const CudaError& e, int v) { return e.value < v; });
  return row != std::end(k_rows) && row->value == value ? row : nullptr;
}

const CudaError* find_cuda_error(std::string_view name) {
  if (name.empty()) {
    return nullptr;
  }
  const auto* row = std::find_if(std::begin(k_rows), std::end(k_rows), [&](const CudaError& e) {
    return e.driver == name || e.runtime == name;
  });
  return row == std::end(k_rows) ? nullptr : row;
}

std::string_view cuda_error_class_word(CudaErrorClass c) {
  static constexpr auto k_names =
      enum_names<CudaErrorClass::ambiguous>({"none", "node", "job", "ambiguous"});
  return k_names(c);
}

} // namespace gpf
