//===- Compare.h - compare outputs with expected tensors ------------------===//
//
// The check nncc-run --compare applies: floats pass when
// |got - expected| <= atol + rtol * |expected| (NaN matches NaN, infinities
// must match exactly); integer and bool tensors must match exactly.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_TOOLS_COMPARE_H
#define NNCC_RUNTIME_TOOLS_COMPARE_H

#include <cstdint>
#include <string>
#include <vector>

namespace nncc::tools {

struct TensorView {
  int32_t dtype;
  std::vector<int64_t> dims;
  const void *data;
};

struct CompareResult {
  bool ok = true;
  int64_t mismatches = 0;
  double maxAbsError = 0, maxRelError = 0; // over finite, non-NaN pairs
  int64_t firstMismatch = -1;              // flat index
  double firstGot = 0, firstExpected = 0;
  /// Empty when ok; else one line: the type/shape difference, or the count
  /// of differing elements and the first one with its index ("[1,3]").
  std::string message;
};

CompareResult compareTensors(const TensorView &got, const TensorView &expected, double rtol,
                             double atol);

/// Element i of a tensor as a double (f16/bf16 decoded).
double elementAsDouble(int32_t dtype, const void *data, int64_t i);

/// Flat index -> "[i,j,k]".
std::string formatIndex(const std::vector<int64_t> &dims, int64_t flat);

} // namespace nncc::tools

#endif // NNCC_RUNTIME_TOOLS_COMPARE_H
