//===- LinkGroups.h - devices grouped by the links between them -----------===//
//
// A tensor-parallel group all-reduces inside every split layer, so its GPUs
// should be the ones with the fastest links between them (NVLink pairs on a
// machine whose GPUs are not all connected alike). `nncc-run --devices` and
// nncc_cuda_group_devices hand the ranks to GPUs in an order whose
// consecutive groups have the best links: this file is that choice, on a
// cost matrix, without CUDA (the CUDA side fills the matrix: CudaInfo.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_DIST_LINKGROUPS_H
#define NNCC_RUNTIME_DIST_LINKGROUPS_H

#include <cstdint>
#include <vector>

namespace nncc::rt {

/// The cost of a link no group should use: two GPUs without peer access.
constexpr int64_t kNoPeerLink = 1 << 20;

/// A group's cost is its slowest link (the ring of its all-reduce runs at
/// that pace); an order's cost, the sum over its consecutive groups of
/// `size`. `cost[i][j]` is the link from device i to j (the order's
/// positions), symmetric or not (the slower direction counts).
int64_t groupsCost(const std::vector<std::vector<int64_t>> &cost, const std::vector<int32_t> &order, int32_t size);

/// A permutation of 0..n-1 whose consecutive groups of `size` cost least,
/// found by exhaustive search over the partitions (each group headed by its
/// lowest index, so every partition is seen once; n <= 16). The identity
/// when no order costs less, so a caller's order stands unless a better
/// one exists; also the identity for n > 16 or a size that does not divide n.
std::vector<int32_t> bestLinkGroups(const std::vector<std::vector<int64_t>> &cost, int32_t size);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_DIST_LINKGROUPS_H
