//===- SingleCollectives.h - fixtures/single_collectives.c's references ---===//
//
// Rank r's input and the outputs every rank of a group of n must get from
// the fixture's entry "step", computed here from the inputs alone: shared by
// the CPU (MPI) and the GPU (NCCL) tests.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_TEST_UNIT_RUNTIME_SINGLECOLLECTIVES_H
#define NNCC_TEST_UNIT_RUNTIME_SINGLECOLLECTIVES_H

#include "nncc/runtime.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace nncc::test {

/// x of rank `r` in run `run`: distinct per rank, element and run, and
/// exact in f32 (sums of four of them too).
inline std::vector<float> singleInput(int r, int run) {
  std::vector<float> x(8);
  for (int i = 0; i < 8; ++i)
    x[i] = static_cast<float>(100 * r + 10 * i + run) + 0.25f * static_cast<float>(r);
  return x;
}

/// Checks rank r's outputs of "step" in a group of n: the gathered inputs
/// in rank order, part r of their sum and mean, and rank n - 1's input.
inline void expectSingleCollectives(const nncc::TensorMap &out, int n, int r, int run) {
  const float *gathered = out.at("gathered").data<float>();
  for (int q = 0; q < n; ++q)
    for (int i = 0; i < 8; ++i)
      ASSERT_EQ(gathered[q * 8 + i], singleInput(q, run)[i])
          << "rank " << r << " of " << n << ", run " << run << ": gathered part " << q << " [" << i << "]";
  int part = 8 / n;
  for (int i = 0; i < part; ++i) {
    float sum = 0;
    for (int q = 0; q < n; ++q)
      sum += singleInput(q, run)[r * part + i];
    ASSERT_EQ(out.at("sum_part").data<float>()[i], sum) << "rank " << r << " of " << n << ", run " << run
                                                        << ": sum_part[" << i << "]";
    ASSERT_FLOAT_EQ(out.at("mean_part").data<float>()[i], sum / static_cast<float>(n))
        << "rank " << r << " of " << n << ", run " << run << ": mean_part[" << i << "]";
  }
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(out.at("from_root").data<float>()[i], singleInput(n - 1, run)[i])
        << "rank " << r << " of " << n << ", run " << run << ": from_root[" << i << "]";
}

inline nncc::Tensor wrapSingleInput(std::vector<float> &x) {
  return nncc::Tensor::wrap(x.data(), nncc::DType::f32, {8});
}

} // namespace nncc::test

#endif // NNCC_TEST_UNIT_RUNTIME_SINGLECOLLECTIVES_H
