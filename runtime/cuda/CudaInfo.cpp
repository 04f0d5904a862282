//===- CudaInfo.cpp -------------------------------------------------------===//
#include "CudaInfo.h"

#include "../dist/LinkGroups.h"

#include "CublasLt.h"
#include "CudaDriver.h"

#include <cstddef>
#include <cstring>
#include <vector>

namespace nncc::rt {

namespace {

Status checkIndex(const CudaDriver &d, int32_t index) {
  if (index < 0 || index >= d.deviceCount())
    return error(NNCC_ERROR_NOT_FOUND, format("device cuda:%d does not exist (this machine has %d "
                                              "CUDA device%s)",
                                              index, d.deviceCount(),
                                              d.deviceCount() == 1 ? "" : "s"));
  return Status::ok();
}

} // namespace

Status queryCudaDriver(int32_t *version, const char **library) {
  const CudaDriver *d = nullptr;
  NNCC_RETURN_IF_ERROR(CudaDriver::get(&d));
  *version = d->version();
  *library = d->library().c_str();
  return Status::ok();
}

Status queryCudaDevice(int32_t index, nncc_cuda_device_info *out) {
  const CudaDriver *d = nullptr;
  NNCC_RETURN_IF_ERROR(CudaDriver::get(&d));
  NNCC_RETURN_IF_ERROR(checkIndex(*d, index));
  if (out->struct_size < offsetof(nncc_cuda_device_info, pci_device) + sizeof(int32_t))
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 "nncc_cuda_device_info.struct_size is too small (set it to sizeof)");
  std::string where = "cuda:" + std::to_string(index);
  CUdevice dev = d->device(index);
  NNCC_CU_CALL(*d, where, cuDeviceGetName, out->name, sizeof(out->name), dev);
  struct {
    int32_t *field;
    CUdevice_attribute attr;
  } attrs[] = {{&out->compute_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
               {&out->compute_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
               {&out->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
               {&out->clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
               {&out->memory_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE},
               {&out->memory_bus_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
               {&out->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
               {&out->pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID},
               {&out->pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID},
               {&out->pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID}};
  for (auto &a : attrs) {
    int v = 0;
    NNCC_CU_CALL(*d, where, cuDeviceGetAttribute, &v, a.attr, dev);
    *a.field = v;
  }
  size_t total = 0, free = 0;
  NNCC_CU_CALL(*d, where, cuDeviceTotalMem, &total, dev);
  // Free memory is a property of a context: the device's primary one.
  CudaContextGuard ctx;
  NNCC_RETURN_IF_ERROR(d->makeCurrent(index, &ctx));
  NNCC_CU_CALL(*d, where, cuMemGetInfo, &free, &total);
  // Fields after pci_device only when the caller's struct has them.
  auto fits = [&](size_t offset, size_t bytes) { return out->struct_size >= offset + bytes; };
  if (fits(offsetof(nncc_cuda_device_info, memory_total), sizeof(out->memory_total)))
    out->memory_total = static_cast<int64_t>(total);
  if (fits(offsetof(nncc_cuda_device_info, memory_free), sizeof(out->memory_free)))
    out->memory_free = static_cast<int64_t>(free);
  return Status::ok();
}

Status queryCudaPeer(int32_t from, int32_t to, nncc_cuda_peer_info *out) {
  const CudaDriver *d = nullptr;
  NNCC_RETURN_IF_ERROR(CudaDriver::get(&d));
  NNCC_RETURN_IF_ERROR(checkIndex(*d, from));
  NNCC_RETURN_IF_ERROR(checkIndex(*d, to));
  if (out->struct_size < sizeof(nncc_cuda_peer_info))
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 "nncc_cuda_peer_info.struct_size is too small (set it to sizeof)");
  std::string where = format("cuda:%d -> cuda:%d", from, to);
  CUdevice a = d->device(from), b = d->device(to);
  int can = 0, rank = 0, atomics = 0;
  if (from != to) {
    NNCC_CU_CALL(*d, where, cuDeviceCanAccessPeer, &can, a, b);
    NNCC_CU_CALL(*d, where, cuDeviceGetP2PAttribute, &rank,
                 CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, a, b);
    NNCC_CU_CALL(*d, where, cuDeviceGetP2PAttribute, &atomics,
                 CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, a, b);
  }
  out->can_access = can;
  out->performance_rank = rank;
  out->native_atomics = atomics;
  return Status::ok();
}

Status groupCudaDevices(const int32_t *devices, int32_t count, int32_t groupSize, int32_t *out) {
  if (count < 0 || groupSize < 1 || count % groupSize != 0)
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 format("cannot group %d devices in groups of %d", count, groupSize));
  // The link's cost: its P2P performance rank (lower is faster), or
  // kNoPeerLink without peer access.
  std::vector<std::vector<int64_t>> cost(size_t(count), std::vector<int64_t>(size_t(count), 0));
  for (int32_t a = 0; a < count; ++a)
    for (int32_t b = 0; b < count; ++b) {
      if (devices[a] == devices[b])
        continue;
      nncc_cuda_peer_info p{sizeof(nncc_cuda_peer_info), 0, 0, 0};
      NNCC_RETURN_IF_ERROR(queryCudaPeer(devices[a], devices[b], &p));
      cost[size_t(a)][size_t(b)] = p.can_access ? p.performance_rank : kNoPeerLink;
    }
  std::vector<int32_t> order = bestLinkGroups(cost, groupSize);
  for (int32_t i = 0; i < count; ++i)
    out[i] = devices[order[size_t(i)]];
  return Status::ok();
}

Status queryCublasLt(int64_t *version, const char **library) {
  const CublasLt *lt = nullptr;
  NNCC_RETURN_IF_ERROR(CublasLt::get(&lt));
  *version = static_cast<int64_t>(lt->sym().cublasLtGetVersion());
  *library = lt->library().c_str();
  return Status::ok();
}

} // namespace nncc::rt
