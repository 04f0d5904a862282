//===- VerifierTest.cpp - ABI v2 fields the verifier checks at load -------===//
#include "GpuKernelReference.h"
#include "nncc/runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using ::testing::HasSubstr;

namespace {

std::string loadError(const char *path) {
  nncc_module_handle *m = nullptr;
  nncc_status s = nncc_module_load(path, &m);
  nncc_module_release(m);
  EXPECT_EQ(s, NNCC_ERROR_INVALID_MODULE) << path;
  return nncc_last_error();
}

TEST(Verifier, RejectsInconsistentParallelLayouts) {
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_GROUP_SIZE_SO),
              HasSubstr("entry 'both' step 0 ('tensor_sum'): its tensor group has 4 ranks, but the module's "
                        "layout dp=2 x pp=1 x tp=2 gives it 2"));
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_GROUP_SO),
              HasSubstr("unknown parallel group 5 (1: data, 2: tensor, 3: pipeline)"));
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_PARTS_SO),
              HasSubstr("state 'w' is split in 3 parts along axis 1, but a sharded state needs as many parts "
                        "as the module's tensor-parallel ranks (2)"));
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_WEIGHT_SO),
              HasSubstr("state 'w' starts from weight 0, which is no weight of its whole (all parts') size"));
  EXPECT_THAT(loadError(FIXTURE_TP_BAD_LAYOUT_SO), HasSubstr("invalid parallel layout dp=0 x pp=1 x tp=2"));
}

// All-gather, reduce-scatter and broadcast (fixtures/single_collectives.c,
// 2 ranks): bytes that do not pair up over the group, a root outside it, a
// reduction on a byte move; a collective op of a newer compiler is refused
// as unsupported, by number (what an older runtime says of these kinds).
TEST(Verifier, RejectsInconsistentSingleCollectives) {
  EXPECT_THAT(loadError(FIXTURE_SINGLE_BAD_GATHER_BYTES_SO),
              HasSubstr("entry 'step' step 0 ('all_gather'): the input 0 (32 bytes) and output 1 (32 bytes) of an "
                        "all-gather do not pair up over 2 ranks"));
  EXPECT_THAT(loadError(FIXTURE_SINGLE_BAD_ROOT_SO),
              HasSubstr("step 3 ('broadcast'): a broadcast from rank 2 of its data group of 2 ranks (the root, its "
                        "peer, must be a rank of the group)"));
  EXPECT_THAT(loadError(FIXTURE_SINGLE_BAD_SCATTER_BYTES_SO),
              HasSubstr("step 1 ('reduce_scatter_sum'): the input 0 (32 bytes) and output 1 (2 bytes) of a "
                        "reduce-scatter do not pair up over 2 ranks as whole f32"));
  EXPECT_THAT(loadError(FIXTURE_SINGLE_BAD_GATHER_REDUCTION_SO),
              HasSubstr("step 0 ('all_gather'): an all-gather moves bytes: reduction and dtype 0 (has 1 and 0)"));
  nncc_module_handle *m = nullptr;
  EXPECT_EQ(nncc_module_load(FIXTURE_SINGLE_UNKNOWN_OP_SO, &m), NNCC_ERROR_UNSUPPORTED);
  nncc_module_release(m);
  EXPECT_THAT(nncc_last_error(), HasSubstr("step 0 ('all_gather'): collective op 7 is not supported by this "
                                           "runtime (all-reduce, all-gather, reduce-scatter, broadcast, send and "
                                           "receive are)"));
}

TEST(Verifier, RejectsInconsistentPipelines) {
  EXPECT_THAT(loadError(FIXTURE_PP_BAD_PEER_SO),
              HasSubstr("entry 'step' (stage 0) step 1 ('send_a0'): a send to or from rank 2 of its pipeline group "
                        "of 2 ranks (the peer must be another rank of the group)"));
  EXPECT_THAT(loadError(FIXTURE_PP_BAD_LONE_SEND_SO),
              HasSubstr("step 1 ('send_a0'): a send to or from rank 0 of its tensor group of 1 ranks"));
  EXPECT_THAT(loadError(FIXTURE_PP_BAD_SEND_DTYPE_SO),
              HasSubstr("step 1 ('send_a0'): a send has reduction and dtype 0 (has 0 and 1)"));
  EXPECT_THAT(loadError(FIXTURE_PP_BAD_REDUCE_PEER_SO),
              HasSubstr("entry 'step' (stage 0) step 9 ('mean_out'): an all-reduce has peer -1 (has 0)"));
  EXPECT_THAT(loadError(FIXTURE_PP_BAD_STAGE_SO),
              HasSubstr("entry 'step' (stage 2) is for pipeline stage 2, but the module has 2 stages"));
  EXPECT_THAT(loadError(FIXTURE_PP_MISSING_STAGE_SO),
              HasSubstr("entry 'step' is listed for 1 of the module's 2 pipeline stages"));
  EXPECT_THAT(loadError(FIXTURE_PP_BAD_SIGNATURE_SO),
              HasSubstr("entry 'step' has other inputs or outputs in stage 1 than in stage 0"));
  EXPECT_THAT(loadError(FIXTURE_PP_BAD_STATE_STAGE_SO),
              HasSubstr("state 'w1' is updated by pipeline stage 2, but the module has 2 stages"));
  EXPECT_THAT(loadError(FIXTURE_PP_BAD_STATE_REF_SO),
              HasSubstr("entry 'step' (stage 1) step 10 ('update_w1'): arg 0: state 'w0' belongs to pipeline "
                        "stage 0, which alone allocates it, not to this entry's stage 1 (an internal compiler "
                        "error"));
  EXPECT_THAT(loadError(FIXTURE_PP_BAD_LAYOUT_SO),
              HasSubstr("invalid parallel layout dp=65536 x pp=65536 x tp=1 (each at least 1, the product an "
                        "int32)"));
}

TEST(Verifier, RejectsBadGpuLaunches) {
  EXPECT_THAT(loadError(FIXTURE_GPU_BAD_BLOCK_SO),
              HasSubstr("kernel 'add_w_twice' GPU launch 0 ('add_w') has a block of 2048 threads "
                        "(at most 1024)"));
  EXPECT_THAT(loadError(FIXTURE_GPU_EMPTY_GRID_SO),
              HasSubstr("kernel 'add_w_twice' GPU launch 0 ('add_w') has an empty grid 2x0x1"));
  EXPECT_THAT(loadError(FIXTURE_GPU_NULL_FUNCTION_SO),
              HasSubstr("kernel 'add_w_twice' GPU launch 1 has no function name"));
}

TEST(Verifier, RejectsBadGpuImages) {
  EXPECT_THAT(loadError(FIXTURE_GPU_NO_PTX_SO), HasSubstr("GPU image 0 (sm_80) has no PTX"));
  EXPECT_THAT(loadError(FIXTURE_GPU_NO_ARCH_SO), HasSubstr("GPU image 0 has no architecture"));
  EXPECT_THAT(loadError(FIXTURE_GPU_NO_IMAGES_SO),
              HasSubstr("kernel 'add_w_twice' has GPU launches but the module has no GPU image"));
}

TEST(Verifier, RejectsBadGemmOptions) {
  EXPECT_THAT(loadError(FIXTURE_GPU_SHORT_BIAS_SO),
              HasSubstr("step 2 ('Gemm_3+Relu_4'): GEMM bias (arg 3) has 12 bytes, needs N=4 f32 "
                        "elements"));
  EXPECT_THAT(loadError(FIXTURE_GPU_BAD_GEMM_DTYPE_SO),
              HasSubstr("GEMM dtypes f32 x i32 -> f32: each must be f32, f16 or bf16"));
  EXPECT_THAT(loadError(FIXTURE_GPU_BAD_ACTIVATION_SO),
              HasSubstr("unknown GEMM activation 7 (0 none, 1 relu, 2 gelu, 3 clip)"));
  EXPECT_THAT(loadError(FIXTURE_GPU_BROADCAST_C_SO),
              HasSubstr("GEMM output C has stride 0 over a batch of 2: the batches would "
                        "overwrite each other"));
  EXPECT_THAT(loadError(FIXTURE_GPU_MANY_IPARAMS_SO),
              HasSubstr("a GEMM needs 3 or 4 args, 12 to 18 integer and 2 float parameters (has "
                        "4, 19, 2)"));
  // Clip: its bounds are two more float parameters, and cuBLASLt has no
  // clamp epilogue, so a CUDA plan may not use it (the CPU plan's).
  EXPECT_THAT(loadError(FIXTURE_GPU_CLIP_NO_BOUNDS_SO),
              HasSubstr("a GEMM with a clip activation takes 4 float parameters (has 2)"));
  EXPECT_THAT(loadError(FIXTURE_GPU_CLIP_ON_GPU_SO),
              HasSubstr("a GEMM with a clip activation runs only in a CPU plan"));
}

// The well-formed variant loads and runs on the CPU: its kernel's CPU code,
// the copy and the GEMM with bias and relu against the reference.
TEST(Verifier, GpuModuleRunsOnCpu) {
  nncc::Module m = nncc::Module::load(FIXTURE_GPU_OK_SO);
  EXPECT_TRUE(m.runsOn("cpu"));
  EXPECT_TRUE(m.runsOn("cuda"));
  EXPECT_FALSE(m.runsOn("tpu"));
  EXPECT_FALSE(nncc::Module::load(FIXTURE_NO_CPU_SO).runsOn("cpu"));
  EXPECT_FALSE(nncc::Module::load(FIXTURE_OK_SO).runsOn("cuda"));
  nncc::Session s(m, nncc::Device::cpu(), {2});
  std::vector<float> x(128);
  for (int i = 0; i < 128; ++i)
    x[i] = static_cast<float>(i % 13) / 4 - 1.5f;
  nncc::TensorMap out = s.run("forward", {{"x", nncc::Tensor::wrap(x.data(), nncc::DType::f32, {16, 8})}});
  nncc::test::GpuKernelOutputs ref = nncc::test::gpuKernelReference(x);
  for (int i = 0; i < 128; ++i) {
    ASSERT_EQ(out.at("y").data<float>()[i], ref.y[i]) << i;
    ASSERT_EQ(out.at("y_copy").data<float>()[i], ref.y[i]) << i;
  }
  for (int i = 0; i < 64; ++i)
    ASSERT_NEAR(out.at("z").data<float>()[i], ref.z[i], 1e-5) << i;
}

// The plan checksum covers every table: a module whose tables do not hash to
// the recorded value is refused before any of its counts is trusted.
// One plan per device kind, every plan listing the same entries.
TEST(Verifier, RejectsInconsistentPlans) {
  EXPECT_THAT(loadError(FIXTURE_DUPLICATE_PLAN_SO), HasSubstr("two plans for cpu devices"));
  EXPECT_THAT(loadError(FIXTURE_PLAN_MISMATCH_SO), HasSubstr("the cuda plan has 1 entries, the cpu plan 2"));
}

TEST(Verifier, RejectsPlanChecksumMismatch) {
  EXPECT_THAT(loadError(FIXTURE_BAD_PLAN_CHECKSUM_SO),
              HasSubstr("plan checksum mismatch (the tables hash to 0x"));
  EXPECT_THAT(loadError(FIXTURE_BAD_PLAN_CHECKSUM_SO), HasSubstr("the module is corrupt"));
}

// num_kernels corrupted to 2^30: the table would run far past the module's
// segments; the walk refuses it before reading a kernel (this crashed).
TEST(Verifier, RejectsTablesOutsideTheModule) {
  EXPECT_THAT(loadError(FIXTURE_CORRUPT_COUNT_SO),
              HasSubstr("corrupt module: kernels (1073741824 entries at "));
  EXPECT_THAT(loadError(FIXTURE_CORRUPT_COUNT_SO), HasSubstr(") lies outside the module"));
}

TEST(Verifier, RejectsCheckFlagOutsideTheArena) {
  EXPECT_THAT(loadError(FIXTURE_CHECKED_BAD_CHECK_OFFSET_SO),
              HasSubstr("entry 'forward' check 0 ('Gather_0: index out of range [-4, 4) in input "
                        "'idx''): flag at arena offset 64 is not an aligned int32 inside the "
                        "64-byte arena"));
}

} // namespace
