//===- CApiTest.cpp - small C ABI utilities -------------------------------===//
#include "nncc/runtime.h"

#include <gtest/gtest.h>

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
