//===- CudaTest.cpp - the runtime on a real GPU (cuda:0) ------------------===//
//
// Every test skips (GTEST_SKIP, which ctest reports as skipped, not passed)
// when the machine has no usable GPU, saying why. With one they allocate,
// launch PTX kernels, run cuBLASLt GEMMs and copies, replay CUDA Graphs,
// profile, and take device pointers, each checked against a reference
// computed on the host. ctest also runs them as runtime.hostcuda.* against
// fixtures/host_cuda.cpp, a driver and cuBLASLt that compute on the host, so
// the session's own logic is tested on machines without a GPU.
//
//===----------------------------------------------------------------------===//
#include "GemmCases.h"
#include "GpuKernelReference.h"
#include "nncc/runtime.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace nncc::test;
using ::testing::HasSubstr;

namespace {

/// NNCC_TEST_HOST_CUDA=libhostcuda.so (runtime.hostcuda.*) makes that fake
/// both the driver and cuBLASLt, before the runtime first looks for them.
/// (One variable: ctest's ENVIRONMENT list does not survive test discovery
/// with two.)
const bool kHostCuda = [] {
  const char *fake = std::getenv("NNCC_TEST_HOST_CUDA");
  if (!fake || !*fake)
    return false;
  setenv("NNCC_CUDA_DRIVER", fake, 1);
  setenv("NNCC_CUBLASLT_LIBRARY", fake, 1);
  return true;
}();

/// Why there is no GPU to test on, or "" when there is one.
std::string noGpuReason() {
  int32_t version = 0;
  const char *lib = nullptr;
  if (nncc_cuda_driver_info(&version, &lib) != NNCC_OK)
    return nncc_last_error();
  return nncc_device_count("cuda") > 0 ? "" : "the CUDA driver reports no devices";
}

#define SKIP_WITHOUT_GPU()                                                                         \
  do {                                                                                             \
    std::string why = noGpuReason();                                                               \
    if (!why.empty())                                                                              \
      GTEST_SKIP() << "no GPU: " << why;                                                           \
  } while (0)

std::vector<float> makeInput(int seed) {
  std::vector<float> x(128);
  for (int i = 0; i < 128; ++i)
    x[i] = static_cast<float>((i * 7 + seed * 5) % 19) / 4 - 2;
  return x;
}

nncc::Tensor wrap(std::vector<float> &v, std::vector<int64_t> dims) {
  return nncc::Tensor::wrap(v.data(), nncc::DType::f32, std::move(dims));
}

void expectGpuKernelOutputs(const nncc::TensorMap &out, const std::vector<float> &x) {
  GpuKernelOutputs ref = gpuKernelReference(x);
  for (int i = 0; i < 128; ++i) {
    ASSERT_EQ(out.at("y").data<float>()[i], ref.y[i]) << "y[" << i << "]";
    ASSERT_EQ(out.at("y_copy").data<float>()[i], ref.y[i]) << "y_copy[" << i << "]";
  }
  // cuBLASLt may use TF32-free f32 paths with another summation order.
  for (int i = 0; i < 64; ++i)
    ASSERT_NEAR(out.at("z").data<float>()[i], ref.z[i], 1e-4 * (1 + std::fabs(ref.z[i])))
        << "z[" << i << "]";
}

class CudaGemm : public ::testing::TestWithParam<GemmCase> {};

TEST_P(CudaGemm, MatchesReference) {
  SKIP_WITHOUT_GPU();
  // cuBLASLt's gelu epilogue is the tanh approximation (|diff| < 1e-3 from
  // erf's); tf32 keeps 10 mantissa bits of each operand.
  checkGemmEntry(fixturePath(FIXTURE_GEMM_VARIANTS_SO), "cuda:0", GetParam(), DeviceTolerance{1e-3, 2e-3});
}

INSTANTIATE_TEST_SUITE_P(Entries, CudaGemm, ::testing::ValuesIn(gemmCases()),
                         [](const auto &info) { return std::string(info.param.entry); });

// PTX kernels (two launches), a copy and a GEMM with bias and relu, run
// several times: the first run captures a CUDA Graph, later ones replay it
// on new inputs.
TEST(Cuda, KernelsCopyAndGemmReplayed) {
  SKIP_WITHOUT_GPU();
  nncc::Module m = nncc::Module::load(fixturePath(FIXTURE_GPU_OK_SO));
  nncc::Session s(m, nncc::Device::cuda(0));
  EXPECT_EQ(s.device(), "cuda:0");
  int64_t allocated = s.allocatedBytes();
  EXPECT_GT(allocated, 0);
  for (int seed = 0; seed < 4; ++seed) {
    std::vector<float> x = makeInput(seed);
    nncc::TensorMap out = s.run("forward", {{"x", wrap(x, {16, 8})}});
    expectGpuKernelOutputs(out, x);
  }
  EXPECT_EQ(s.allocatedBytes(), allocated);
  // A second session shares the module's code and weights on the device.
  nncc::Session s2(m, nncc::Device::cuda(0));
  std::vector<float> x = makeInput(9);
  expectGpuKernelOutputs(s2.run("forward", {{"x", wrap(x, {16, 8})}}), x);
}

TEST(Cuda, WithoutGraphsStepByStep) {
  SKIP_WITHOUT_GPU();
  setenv("NNCC_CUDA_GRAPHS", "0", 1);
  nncc::Module m = nncc::Module::load(fixturePath(FIXTURE_GPU_OK_SO));
  nncc::Session s(m, nncc::Device::cuda(0));
  unsetenv("NNCC_CUDA_GRAPHS");
  std::vector<float> x = makeInput(3);
  expectGpuKernelOutputs(s.run("forward", {{"x", wrap(x, {16, 8})}}), x);
}

// The caller's device memory is used in place; switching between device and
// host buffers re-captures the graph.
TEST(Cuda, DevicePointerInputsAndOutputs) {
  SKIP_WITHOUT_GPU();
  nncc::Module m = nncc::Module::load(fixturePath(FIXTURE_GPU_OK_SO));
  nncc::Session s(m, nncc::Device::cuda(0));
  const char *driver = std::getenv("NNCC_CUDA_DRIVER"); // the host fake, under runtime.hostcuda.*
  void *lib = dlopen(driver && *driver ? driver : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(lib);
  // The session leaves the thread's current context alone: the test makes
  // cuda:0's primary context current itself, as an application would.
  auto retain = reinterpret_cast<decltype(&cuDevicePrimaryCtxRetain)>(
      dlsym(lib, "cuDevicePrimaryCtxRetain"));
  auto setCurrent = reinterpret_cast<decltype(&cuCtxSetCurrent)>(dlsym(lib, "cuCtxSetCurrent"));
  ASSERT_TRUE(retain && setCurrent);
  CUcontext primary = nullptr;
  ASSERT_EQ(retain(&primary, 0), CUDA_SUCCESS); // CUdevice 0 is cuda:0
  ASSERT_EQ(setCurrent(primary), CUDA_SUCCESS);
  auto memAlloc = reinterpret_cast<decltype(&cuMemAlloc)>(dlsym(lib, "cuMemAlloc_v2"));
  auto memFree = reinterpret_cast<decltype(&cuMemFree)>(dlsym(lib, "cuMemFree_v2"));
  auto htod = reinterpret_cast<decltype(&cuMemcpyHtoD)>(dlsym(lib, "cuMemcpyHtoD_v2"));
  auto dtoh = reinterpret_cast<decltype(&cuMemcpyDtoH)>(dlsym(lib, "cuMemcpyDtoH_v2"));
  ASSERT_TRUE(memAlloc && memFree && htod && dtoh);
  CUdeviceptr dx = 0, dy = 0, dcopy = 0, dz = 0;
  ASSERT_EQ(memAlloc(&dx, 512), CUDA_SUCCESS);
  ASSERT_EQ(memAlloc(&dy, 512), CUDA_SUCCESS);
  ASSERT_EQ(memAlloc(&dcopy, 512), CUDA_SUCCESS);
  ASSERT_EQ(memAlloc(&dz, 256), CUDA_SUCCESS);
  auto dev = [](CUdeviceptr p, std::vector<int64_t> dims) {
    return nncc::Tensor::device(p, nncc::DType::f32, std::move(dims));
  };
  for (int round = 0; round < 2; ++round) {
    std::vector<float> x = makeInput(round + 20);
    ASSERT_EQ(htod(dx, x.data(), 512), CUDA_SUCCESS);
    nncc::TensorMap out{{"y", dev(dy, {16, 8})}, {"y_copy", dev(dcopy, {16, 8})},
                        {"z", dev(dz, {16, 4})}};
    s.run("forward", {{"x", dev(dx, {16, 8})}}, out);
    std::vector<float> y(128), yCopy(128), z(64);
    ASSERT_EQ(dtoh(y.data(), dy, 512), CUDA_SUCCESS);
    ASSERT_EQ(dtoh(yCopy.data(), dcopy, 512), CUDA_SUCCESS);
    ASSERT_EQ(dtoh(z.data(), dz, 256), CUDA_SUCCESS);
    nncc::TensorMap host{{"y", wrap(y, {16, 8})}, {"y_copy", wrap(yCopy, {16, 8})},
                         {"z", wrap(z, {16, 4})}};
    expectGpuKernelOutputs(host, x);
    // Host buffers in between: another capture, then back to device memory.
    std::vector<float> x2 = makeInput(round + 40);
    expectGpuKernelOutputs(s.run("forward", {{"x", wrap(x2, {16, 8})}}), x2);
  }
  // Device memory that is not 256-byte aligned is copied on the device
  // (into and out of the session's staging buffers), with the same results.
  CUdeviceptr big = 0;
  ASSERT_EQ(memAlloc(&big, 2048), CUDA_SUCCESS);
  std::vector<float> x = makeInput(77);
  ASSERT_EQ(htod(big + 4, x.data(), 512), CUDA_SUCCESS);
  nncc::TensorMap out{{"y", dev(big + 1028, {16, 8})}};
  s.run("forward", {{"x", dev(big + 4, {16, 8})}}, out);
  std::vector<float> y(128);
  ASSERT_EQ(dtoh(y.data(), big + 1028, 512), CUDA_SUCCESS);
  nncc::TensorMap host{{"y", wrap(y, {16, 8})}, {"y_copy", out.at("y_copy")}, {"z", out.at("z")}};
  expectGpuKernelOutputs(host, x);
  memFree(big);
  memFree(dx);
  memFree(dy);
  memFree(dcopy);
  memFree(dz);
}

/// The driver's exported name of `fn` (cuda.h maps some to their _v2).
#define NNCC_DRIVER_NAME(fn) NNCC_DRIVER_NAME_(fn)
#define NNCC_DRIVER_NAME_(fn) #fn

// A run waits (on the device) for the work queued on the caller's stream
// before it reads device inputs: by default the legacy default stream, else
// SessionOptions::cudaStream. Under the host fixture the caller's streams are
// lazy, so an input write the run did not wait for would still be undone.
TEST(Cuda, RunsWaitForTheCallersStream) {
  SKIP_WITHOUT_GPU();
  nncc::Module m = nncc::Module::load(fixturePath(FIXTURE_GPU_OK_SO));
  const char *driver = std::getenv("NNCC_CUDA_DRIVER");
  void *lib = dlopen(driver && *driver ? driver : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(lib);
  auto retain = reinterpret_cast<decltype(&cuDevicePrimaryCtxRetain)>(
      dlsym(lib, NNCC_DRIVER_NAME(cuDevicePrimaryCtxRetain)));
  auto setCurrent =
      reinterpret_cast<decltype(&cuCtxSetCurrent)>(dlsym(lib, NNCC_DRIVER_NAME(cuCtxSetCurrent)));
  auto memAlloc = reinterpret_cast<decltype(&cuMemAlloc)>(dlsym(lib, NNCC_DRIVER_NAME(cuMemAlloc)));
  auto memFree = reinterpret_cast<decltype(&cuMemFree)>(dlsym(lib, NNCC_DRIVER_NAME(cuMemFree)));
  auto htodAsync = reinterpret_cast<decltype(&cuMemcpyHtoDAsync)>(
      dlsym(lib, NNCC_DRIVER_NAME(cuMemcpyHtoDAsync)));
  auto streamCreate =
      reinterpret_cast<decltype(&cuStreamCreate)>(dlsym(lib, NNCC_DRIVER_NAME(cuStreamCreate)));
  auto streamSync = reinterpret_cast<decltype(&cuStreamSynchronize)>(
      dlsym(lib, NNCC_DRIVER_NAME(cuStreamSynchronize)));
  auto streamDestroy =
      reinterpret_cast<decltype(&cuStreamDestroy)>(dlsym(lib, NNCC_DRIVER_NAME(cuStreamDestroy)));
  ASSERT_TRUE(retain && setCurrent && memAlloc && memFree && htodAsync && streamCreate &&
              streamSync && streamDestroy);
  // Only the host fixture has it; a GPU runs the same checks without forcing the race.
  auto setLazy = reinterpret_cast<void (*)(CUstream, int)>(dlsym(lib, "nncc_host_cuda_set_lazy"));
  CUcontext primary = nullptr;
  ASSERT_EQ(retain(&primary, 0), CUDA_SUCCESS);
  ASSERT_EQ(setCurrent(primary), CUDA_SUCCESS);
  CUdeviceptr dx = 0;
  ASSERT_EQ(memAlloc(&dx, 512), CUDA_SUCCESS);
  nncc::Tensor x = nncc::Tensor::device(dx, nncc::DType::f32, {16, 8});

  // The default: work on the legacy default stream (cudaMemcpy's).
  nncc::Session byDefault(m, nncc::Device::cuda(0));
  if (setLazy)
    setLazy(CU_STREAM_LEGACY, 1);
  std::vector<float> x1 = makeInput(31);
  ASSERT_EQ(htodAsync(dx, x1.data(), 512, CU_STREAM_LEGACY), CUDA_SUCCESS);
  expectGpuKernelOutputs(byDefault.run("forward", {{"x", x}}), x1);
  if (setLazy)
    setLazy(CU_STREAM_LEGACY, 0);

  // The caller's own stream, twice (the second run replays a CUDA Graph).
  CUstream mine = nullptr;
  ASSERT_EQ(streamCreate(&mine, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  if (setLazy)
    setLazy(mine, 1);
  nncc::SessionOptions options;
  options.cudaStream = mine;
  nncc::Session onMine(m, nncc::Device::cuda(0), options);
  std::vector<float> x2 = makeInput(32), x3 = makeInput(33);
  ASSERT_EQ(htodAsync(dx, x2.data(), 512, mine), CUDA_SUCCESS);
  expectGpuKernelOutputs(onMine.run("forward", {{"x", x}}), x2);
  ASSERT_EQ(htodAsync(dx, x3.data(), 512, mine), CUDA_SUCCESS);
  expectGpuKernelOutputs(onMine.run("forward", {{"x", x}}), x3);

  if (setLazy) {
    // The fixture's race is real: a session waiting on another stream reads
    // the input before the write queued on `mine`.
    std::vector<float> x4 = makeInput(34);
    ASSERT_EQ(htodAsync(dx, x4.data(), 512, mine), CUDA_SUCCESS);
    expectGpuKernelOutputs(byDefault.run("forward", {{"x", x}}), x3);
  }
  ASSERT_EQ(streamSync(mine), CUDA_SUCCESS);
  streamDestroy(mine);
  memFree(dx);
}

// A profiled session runs step by step with events: every step is recorded
// once per run, on device cuda:0.
TEST(Cuda, ProfilingRecordsEachStep) {
  SKIP_WITHOUT_GPU();
  // NNCC_TEST_TMP_DIR: a writable folder on a machine without the build tree.
  const char *tmp = std::getenv("NNCC_TEST_TMP_DIR");
  std::string path = std::string(tmp && *tmp ? tmp : TEST_TMP_ROOT) + "/cuda_profile.json";
  {
    nncc::Module m = nncc::Module::load(fixturePath(FIXTURE_GPU_OK_SO));
    nncc::Session s(m, nncc::Device::cuda(0), {0, path});
    for (int seed = 0; seed < 3; ++seed) {
      std::vector<float> x = makeInput(seed);
      expectGpuKernelOutputs(s.run("forward", {{"x", wrap(x, {16, 8})}}), x);
    }
    EXPECT_EQ(s.profileStats("forward").calls, 3);
    for (int step = 0; step < 3; ++step) {
      nncc::ProfileStats st = s.profileStats("forward", step);
      EXPECT_EQ(st.calls, 3) << "step " << step;
      EXPECT_GT(st.totalNs, 0) << "step " << step;
    }
  }
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("\"device\":\"cuda:0\""));
  EXPECT_THAT(text.str(), HasSubstr("\"name\":\"Gemm_3+Relu_4\""));
}

TEST(Cuda, ErrorsNameTheDeviceAndKernel) {
  SKIP_WITHOUT_GPU();
  nncc::Module cpuOnly = nncc::Module::load(fixturePath(FIXTURE_OK_SO));
  try {
    nncc::Session s(cpuOnly, nncc::Device::cuda(0));
    FAIL() << "a module without GPU code opened on cuda:0";
  } catch (const nncc::Error &e) {
    EXPECT_EQ(e.status(), NNCC_ERROR_UNAVAILABLE);
    EXPECT_THAT(e.what(), HasSubstr("kernel 'add_relu' has no GPU code"));
  }
  nncc::Module m = nncc::Module::load(fixturePath(FIXTURE_GPU_OK_SO));
  try {
    nncc::Session s(m, nncc::Device::cuda(99));
    FAIL() << "cuda:99 opened";
  } catch (const nncc::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("device cuda:99 does not exist"));
  }
}

// Managed memory is used in place like device memory; the host reads it
// directly. (The host fake reports no device ordinal for it, as a GPU
// session must not require one.)
TEST(Cuda, ManagedMemoryInPlace) {
  SKIP_WITHOUT_GPU();
  nncc::Module m = nncc::Module::load(fixturePath(FIXTURE_GPU_OK_SO));
  nncc::Session s(m, nncc::Device::cuda(0));
  const char *driver = std::getenv("NNCC_CUDA_DRIVER");
  void *lib = dlopen(driver && *driver ? driver : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(lib);
  auto retain = reinterpret_cast<decltype(&cuDevicePrimaryCtxRetain)>(
      dlsym(lib, "cuDevicePrimaryCtxRetain"));
  auto setCurrent = reinterpret_cast<decltype(&cuCtxSetCurrent)>(dlsym(lib, "cuCtxSetCurrent"));
  auto allocManaged =
      reinterpret_cast<decltype(&cuMemAllocManaged)>(dlsym(lib, "cuMemAllocManaged"));
  auto memFree = reinterpret_cast<decltype(&cuMemFree)>(dlsym(lib, "cuMemFree_v2"));
  ASSERT_TRUE(retain && setCurrent && allocManaged && memFree);
  CUcontext primary = nullptr;
  ASSERT_EQ(retain(&primary, 0), CUDA_SUCCESS);
  ASSERT_EQ(setCurrent(primary), CUDA_SUCCESS);
  CUdeviceptr mx = 0, my = 0;
  ASSERT_EQ(allocManaged(&mx, 512, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(allocManaged(&my, 512, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  auto *x = reinterpret_cast<float *>(static_cast<uintptr_t>(mx));
  auto *y = reinterpret_cast<float *>(static_cast<uintptr_t>(my));
  std::vector<float> in = makeInput(11);
  std::copy(in.begin(), in.end(), x);
  nncc::TensorMap out{{"y", nncc::Tensor::wrap(y, nncc::DType::f32, {16, 8})}};
  s.run("forward", {{"x", nncc::Tensor::wrap(x, nncc::DType::f32, {16, 8})}}, out);
  std::vector<float> yv(y, y + 128);
  nncc::TensorMap host{{"y", wrap(yv, {16, 8})}, {"y_copy", out.at("y_copy")}, {"z", out.at("z")}};
  expectGpuKernelOutputs(host, in);
  memFree(mx);
  memFree(my);
  ASSERT_EQ(setCurrent(nullptr), CUDA_SUCCESS);
}

// Creating, running and destroying a session leaves the calling thread's
// current context as it was (here: none), for applications that use the CUDA
// runtime on another device.
TEST(Cuda, KeepsTheCallersContext) {
  SKIP_WITHOUT_GPU();
  const char *driver = std::getenv("NNCC_CUDA_DRIVER");
  void *lib = dlopen(driver && *driver ? driver : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(lib);
  auto getCurrent = reinterpret_cast<decltype(&cuCtxGetCurrent)>(dlsym(lib, "cuCtxGetCurrent"));
  auto setCurrent = reinterpret_cast<decltype(&cuCtxSetCurrent)>(dlsym(lib, "cuCtxSetCurrent"));
  ASSERT_TRUE(getCurrent && setCurrent);
  ASSERT_EQ(setCurrent(nullptr), CUDA_SUCCESS);
  CUcontext current = reinterpret_cast<CUcontext>(1);
  {
    nncc::Module m = nncc::Module::load(fixturePath(FIXTURE_GPU_OK_SO));
    nncc::Session s(m, nncc::Device::cuda(0));
    ASSERT_EQ(getCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr) << "after session creation";
    std::vector<float> x = makeInput(5);
    expectGpuKernelOutputs(s.run("forward", {{"x", wrap(x, {16, 8})}}), x);
    ASSERT_EQ(getCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr) << "after a run";
    nncc_cuda_device_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(nncc_cuda_get_device_info(0, &info), NNCC_OK) << nncc_last_error();
    ASSERT_EQ(getCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr) << "after a device query";
  }
  ASSERT_EQ(getCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr) << "after the session's end";
}

// Operand types cuBLASLt has no algorithm for (f32 x f32 -> bf16) fail at
// session creation, naming the step and the types.
TEST(Cuda, UnsupportedGemmTypesNameTheStep) {
  SKIP_WITHOUT_GPU();
  nncc::Module m = nncc::Module::load(fixturePath(FIXTURE_GEMM_UNSUPPORTED_SO));
  try {
    nncc::Session s(m, nncc::Device::cuda(0));
    FAIL() << "a GEMM of f32 x f32 -> bf16 opened on cuda:0";
  } catch (const nncc::Error &e) {
    EXPECT_EQ(e.status(), NNCC_ERROR_UNSUPPORTED);
    EXPECT_THAT(e.what(), HasSubstr("entry 'large_bias_gelu' step 0 ('gemm_large_bias_gelu')"));
    EXPECT_THAT(e.what(), HasSubstr("f32 x f32 -> bf16"));
  }
}

TEST(Cuda, InfoDescribesEveryDevice) {
  SKIP_WITHOUT_GPU();
  int32_t n = nncc_device_count("cuda");
  for (int32_t i = 0; i < n; ++i) {
    nncc_cuda_device_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(nncc_cuda_get_device_info(i, &info), NNCC_OK) << nncc_last_error();
    EXPECT_GT(info.compute_major, 0);
    EXPECT_GT(info.multiprocessors, 0);
    EXPECT_GT(info.memory_total, 0);
    EXPECT_GT(info.memory_free, 0);
    EXPECT_LE(info.memory_free, info.memory_total);
    EXPECT_GT(std::strlen(info.name), 0u);
  }
  // A caller built before the memory fields: nothing past its struct_size
  // is written.
  nncc_cuda_device_info old;
  std::memset(&old, 0x5a, sizeof(old));
  old.struct_size = offsetof(nncc_cuda_device_info, pci_device) + sizeof(int32_t);
  ASSERT_EQ(nncc_cuda_get_device_info(0, &old), NNCC_OK) << nncc_last_error();
  EXPECT_GT(old.compute_major, 0);
  for (size_t b = old.struct_size; b < sizeof(old); ++b)
    ASSERT_EQ(reinterpret_cast<const unsigned char *>(&old)[b], 0x5a) << "byte " << b;
  EXPECT_EQ(nncc::Device::best().str(), "cuda:0");
  // A module without GPU code stays on the CPU of a GPU machine.
  nncc::Module cpuOnly = nncc::Module::load(fixturePath(FIXTURE_OK_SO));
  EXPECT_FALSE(cpuOnly.runsOn("cuda"));
  EXPECT_EQ(nncc::Device::best(cpuOnly).str(), "cpu");
  nncc::Module gpu = nncc::Module::load(fixturePath(FIXTURE_GPU_OK_SO));
  EXPECT_EQ(nncc::Device::best(gpu).str(), "cuda:0");
}

// Tensor groups on the best-linked GPUs (nncc-run --devices). On the host
// fixture (runtime.hostcuda.device-groups: 4 devices, cuda:0-cuda:2 and
// cuda:1-cuda:3 linked) the pairs are found; on a machine with 4 or more
// GPUs the answer is a grouping of the same devices.
TEST(CudaTopology, GroupsDevicesByLinks) {
  SKIP_WITHOUT_GPU();
  if (nncc_device_count("cuda") < 4)
    GTEST_SKIP() << "needs 4 GPUs";
  std::vector<int32_t> given{0, 1, 2, 3};
  std::vector<int32_t> grouped = nncc::Distributed::groupGpusByLinks(given, 2);
  const char *links = std::getenv("NNCC_FAKE_CUDA_LINKS");
  if (kHostCuda && links && std::string(links) == "0-2:0,1-3:0") {
    EXPECT_EQ(grouped, (std::vector<int32_t>{0, 2, 1, 3}));
    nncc_cuda_peer_info linked{sizeof(nncc_cuda_peer_info), -1, -1, -1}, apart = linked;
    ASSERT_EQ(nncc_cuda_get_peer_info(2, 0, &linked), NNCC_OK) << nncc_last_error();
    ASSERT_EQ(nncc_cuda_get_peer_info(0, 1, &apart), NNCC_OK) << nncc_last_error();
    EXPECT_EQ(linked.can_access, 1);
    EXPECT_EQ(linked.performance_rank, 0);
    EXPECT_EQ(apart.can_access, 0);
    // Groups of 4: one group, as given.
    EXPECT_EQ(nncc::Distributed::groupGpusByLinks(given, 4), given);
  } else {
    std::vector<int32_t> sorted = grouped;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, given);
  }
  std::vector<int32_t> out(4);
  EXPECT_EQ(nncc_cuda_group_devices(given.data(), 4, 3, out.data()), NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(nncc_last_error(), HasSubstr("cannot group 4 devices in groups of 3"));
}

} // namespace
