//===- CApiTest.cpp - small C ABI utilities -------------------------------===//
#include "nncc/runtime.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(CApi, Versions) {
  EXPECT_EQ(nncc_runtime_module_abi_version(), NNCC_MODULE_ABI_VERSION);
  EXPECT_STREQ(nncc_runtime_version(), NNCC_RUNTIME_VERSION);
}

TEST(CApi, StatusNames) {
  EXPECT_STREQ(nncc_status_name(NNCC_OK), "NNCC_OK");
  EXPECT_STREQ(nncc_status_name(NNCC_ERROR_ABI_MISMATCH), "NNCC_ERROR_ABI_MISMATCH");
  EXPECT_STREQ(nncc_status_name(static_cast<nncc_status>(77)), "NNCC_ERROR_UNKNOWN");
}

TEST(CApi, Dtypes) {
  EXPECT_STREQ(nncc_dtype_name(NNCC_DTYPE_F32), "f32");
  EXPECT_STREQ(nncc_dtype_name(NNCC_DTYPE_BOOL), "bool");
  EXPECT_STREQ(nncc_dtype_name(NNCC_DTYPE_BF16), "bf16");
  EXPECT_STREQ(nncc_dtype_name(8), "?"); // ONNX strings: not a tensor dtype here
  EXPECT_EQ(nncc_dtype_size(NNCC_DTYPE_I64), 8u);
  EXPECT_EQ(nncc_dtype_size(NNCC_DTYPE_F16), 2u);
  EXPECT_EQ(nncc_dtype_size(NNCC_DTYPE_BOOL), 1u);
  EXPECT_EQ(nncc_dtype_size(99), 0u);
}

TEST(CApi, NullHandlesAreSafe) {
  nncc_module_release(nullptr);
  nncc_session_destroy(nullptr);
  nncc_buffer_free(nullptr);
  EXPECT_EQ(nncc_module_num_entries(nullptr), 0);
  EXPECT_EQ(nncc_session_allocated_bytes(nullptr), 0);
  EXPECT_EQ(nncc_session_run(nullptr, "forward", nullptr, 0, nullptr, 0),
            NNCC_ERROR_INVALID_ARGUMENT);
  nncc_entry_info e;
  EXPECT_EQ(nncc_module_entry_info(nullptr, 0, &e), NNCC_ERROR_INVALID_ARGUMENT);
}

} // namespace

namespace {

/// A world of one rank: collectives are the identity; a broadcast from a
/// rank that does not exist is refused, naming it.
TEST(CApi, SelfCommunicator) {
  nncc_communicator *comm = nullptr;
  ASSERT_EQ(nncc_communicator_create_self(&comm), NNCC_OK) << nncc_last_error();
  EXPECT_EQ(nncc_communicator_rank(comm), 0);
  EXPECT_EQ(nncc_communicator_size(comm), 1);
  EXPECT_STREQ(nncc_communicator_backend(comm), "self");
  float v[3] = {1.5f, -2.0f, 3.25f};
  ASSERT_EQ(nncc_communicator_all_reduce_f32(comm, v, 3, /*mean=*/1), NNCC_OK);
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(v[2], 3.25f);
  EXPECT_EQ(nncc_communicator_barrier(comm), NNCC_OK);
  EXPECT_EQ(nncc_communicator_broadcast(comm, v, sizeof(v), 1), NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(nncc_last_error(), "broadcast root 1 is no rank of a world of 1");
  // Only a rank of local GPUs has device memory to time (a runtime built
  // without NCCL says it has none).
  double seconds = -1;
  nncc_status timed = nncc_communicator_time_all_reduce(comm, 1024, 1, 1, &seconds);
  EXPECT_TRUE(timed == NNCC_ERROR_INVALID_ARGUMENT || timed == NNCC_ERROR_UNAVAILABLE) << timed;
  if (timed == NNCC_ERROR_INVALID_ARGUMENT) {
    EXPECT_NE(std::string(nncc_last_error()).find("not a 'self' communicator"), std::string::npos)
        << nncc_last_error();
  }
  EXPECT_EQ(seconds, -1);
  nncc_communicator_retain(comm);
  nncc_communicator_release(comm);
  nncc_communicator_release(comm);
  nncc_communicator_release(nullptr);
  EXPECT_EQ(nncc_communicator_create_self(nullptr), NNCC_ERROR_INVALID_ARGUMENT);
}

} // namespace
