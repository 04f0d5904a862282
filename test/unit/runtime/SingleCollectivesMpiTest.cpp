//===- SingleCollectivesMpiTest.cpp - all-gather, reduce-scatter, broadcast -===//
//
// Run by ctest under `mpirun -np 2` and `-np 4` on the CPU, over MPI (also
// with the collectives on the calling thread, NNCC_SYNC_COLLECTIVES=1):
// fixtures/single_collectives.c for the world's size, its outputs checked
// against SingleCollectives.h's references on every rank, over several runs.
#include "SingleCollectives.h"

#include <gtest/gtest.h>

namespace {

TEST(SingleCollectivesMpi, EveryRankGetsItsResults) {
  nncc::Distributed world = nncc::Distributed::fromMpi();
  int n = world.size(), r = world.rank();
  ASSERT_TRUE(n == 2 || n == 4) << "run under mpirun -np 2 or 4";
  nncc::Module m = nncc::Module::load(n == 2 ? FIXTURE_SINGLE_NP2_SO : FIXTURE_SINGLE_NP4_SO);
  nncc::SessionOptions options(1);
  options.distributed = world;
  nncc::Session s(m, nncc::Device::cpu(), options);
  for (int run = 0; run < 3; ++run) {
    std::vector<float> x = nncc::test::singleInput(r, run);
    nncc::TensorMap out = s.run("step", {{"x", nncc::test::wrapSingleInput(x)}});
    nncc::test::expectSingleCollectives(out, n, r, run);
  }
  world.barrier();
}

} // namespace
