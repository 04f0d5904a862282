//===- NcclSymbols.h - the NCCL functions the runtime calls ---------------===//
//
// As CudaSymbols.h: one line per function, prototypes from the toolkit's
// nccl.h (decltype), resolved from libnccl.so.2 at run time (Nccl.cpp).
//
//===----------------------------------------------------------------------===//

NNCC_NCCL(ncclGetVersion)
NNCC_NCCL(ncclGetErrorString)
NNCC_NCCL(ncclGetUniqueId)
NNCC_NCCL(ncclCommInitRank)
NNCC_NCCL(ncclCommInitAll)
NNCC_NCCL(ncclCommDestroy)
NNCC_NCCL(ncclCommAbort)
NNCC_NCCL(ncclCommGetAsyncError)
NNCC_NCCL(ncclAllReduce)
NNCC_NCCL(ncclBroadcast)
NNCC_NCCL(ncclAllGather) // all-gather and reduce-scatter steps
NNCC_NCCL(ncclReduceScatter)
NNCC_NCCL(ncclSend) // 2.7: pipeline stages' send and receive steps
NNCC_NCCL(ncclRecv)
NNCC_NCCL(ncclGroupStart)
NNCC_NCCL(ncclGroupEnd)
