//===- GpuKernelReference.h - fixtures/gpu_kernel.c, computed here --------===//
#ifndef NNCC_TEST_RUNTIME_GPUKERNELREFERENCE_H
#define NNCC_TEST_RUNTIME_GPUKERNELREFERENCE_H

#include <vector>

namespace nncc::test {

struct GpuKernelOutputs {
  std::vector<float> y, z; // y = 2 (x + w[i % 8]) (16x8); z = relu(y m + bias) (16x4)
};

/// The fixture's forward on x (16x8), from its weights as written here.
inline GpuKernelOutputs gpuKernelReference(const std::vector<float> &x) {
  const float w[8] = {0.5f, -1, 2, -0.25f, 0, 1, -2, 0.75f};
  const float m[32] = {0.5f, -0.5f, 1,  0,     0.25f, 1,  -1, 0.5f,  -0.75f, 0, 0.5f,
                       1,    1,     0.25f, -0.5f, -1,  0,  0.5f, 1,   -1,     0.5f, -1,
                       0,    2,     1,  1,     -0.25f, 0,  -0.5f, 0, 0.75f, 0.25f};
  const float bias[4] = {1, -2, 3, -4};
  GpuKernelOutputs out;
  out.y.resize(128);
  out.z.resize(64);
  for (int i = 0; i < 128; ++i)
    out.y[i] = 2 * (x[i] + w[i % 8]);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 4; ++c) {
      double acc = bias[c];
      for (int k = 0; k < 8; ++k)
        acc += double(out.y[r * 8 + k]) * m[k * 4 + c];
      out.z[r * 4 + c] = acc > 0 ? static_cast<float>(acc) : 0.0f;
    }
  return out;
}

} // namespace nncc::test

#endif
