//===- CudaSymbols.h - the CUDA driver functions the runtime calls --------===//
//
// One line per driver function, in the style of IREE's
// dynamic_symbol_tables.h. The prototypes come from the toolkit's cuda.h
// (decltype), never written by hand; cuda.h's own macros map a name to its
// current ABI version (cuMemAlloc -> cuMemAlloc_v2), so the struct field and
// the dlsym fallback name are the versioned ones, while cuGetProcAddress is
// asked for the plain name at CUDA_VERSION (CudaDriver.cpp).
//
// NNCC_CU(name): required; the driver is unusable without it.
//
//===----------------------------------------------------------------------===//

// Errors and versions.
NNCC_CU(cuGetErrorName)
NNCC_CU(cuGetErrorString)
NNCC_CU(cuInit)
NNCC_CU(cuDriverGetVersion)
// Devices and their primary contexts.
NNCC_CU(cuDeviceGetCount)
NNCC_CU(cuDeviceGet)
NNCC_CU(cuDeviceGetName)
NNCC_CU(cuDeviceGetAttribute)
NNCC_CU(cuDeviceTotalMem)
NNCC_CU(cuDeviceCanAccessPeer)
NNCC_CU(cuDeviceGetP2PAttribute)
NNCC_CU(cuDevicePrimaryCtxRetain)
NNCC_CU(cuCtxPushCurrent)
NNCC_CU(cuCtxPopCurrent)
NNCC_CU(cuMemGetInfo)
// Memory.
NNCC_CU(cuMemAlloc)
NNCC_CU(cuMemFree)
NNCC_CU(cuMemsetD8Async)
NNCC_CU(cuMemcpyHtoDAsync)
NNCC_CU(cuMemcpyDtoHAsync)
NNCC_CU(cuMemcpyDtoDAsync)
NNCC_CU(cuPointerGetAttribute)
// Code.
NNCC_CU(cuModuleLoadData)
NNCC_CU(cuModuleLoadDataEx)
NNCC_CU(cuModuleUnload)
NNCC_CU(cuModuleGetFunction)
NNCC_CU(cuFuncSetAttribute)
NNCC_CU(cuLaunchKernel)
// Streams, events, graphs.
NNCC_CU(cuStreamCreate)
NNCC_CU(cuStreamDestroy)
NNCC_CU(cuStreamSynchronize)
NNCC_CU(cuStreamQuery)
NNCC_CU(cuStreamBeginCapture)
NNCC_CU(cuStreamEndCapture)
NNCC_CU(cuEventCreate)
NNCC_CU(cuEventDestroy)
NNCC_CU(cuEventRecord)
NNCC_CU(cuEventElapsedTime)
NNCC_CU(cuStreamWaitEvent)
NNCC_CU(cuGraphInstantiateWithFlags)
NNCC_CU(cuGraphExecUpdate)
NNCC_CU(cuGraphLaunch)
NNCC_CU(cuGraphDestroy)
NNCC_CU(cuGraphExecDestroy)
