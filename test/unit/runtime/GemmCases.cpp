//===- GemmCases.cpp ------------------------------------------------------===//
#include "GemmCases.h"

#include "nncc/runtime.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace nncc::test {

namespace {

constexpr int32_t F32 = NNCC_DTYPE_F32, F16 = NNCC_DTYPE_F16, BF16 = NNCC_DTYPE_BF16;

// Reference conversions, written out plainly (no bit tricks) so they do not
// share code with the runtime's.
double fromBits(int32_t dtype, const void *p, int64_t i) {
  if (dtype == F32)
    return static_cast<const float *>(p)[i];
  uint16_t h = static_cast<const uint16_t *>(p)[i];
  if (dtype == BF16) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  return (h & 0x8000) ? -v : v;
}

/// Values k/8 - 1 for small integers k: exact in every dtype, so inputs need
/// no rounding and the reference sees exactly what the device sees.
double inputValue(int seed, int64_t i) { return static_cast<double>((i * 5 + seed * 3) % 17) / 8 - 1; }

void store(int32_t dtype, void *p, int64_t i, double v) {
  float f = static_cast<float>(v);
  if (dtype == F32) {
    static_cast<float *>(p)[i] = f;
    return;
  }
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (dtype == BF16) { // inputValue is exact in bf16: truncation is exact
    static_cast<uint16_t *>(p)[i] = static_cast<uint16_t>(u >> 16);
    return;
  }
  // f16: v = m * 2^e with |m| < 2048 exactly for inputValue's values.
  uint16_t sign = f < 0 ? 0x8000 : 0;
  double a = std::fabs(v);
  if (a == 0) {
    static_cast<uint16_t *>(p)[i] = sign;
    return;
  }
  int e;
  double fr = std::frexp(a, &e); // a = fr * 2^e, fr in [0.5, 1)
  uint16_t bits = static_cast<uint16_t>(((e + 14) << 10) | (static_cast<int>(fr * 2048) - 1024));
  static_cast<uint16_t *>(p)[i] = sign | bits;
}

double activate(int act, double v) {
  if (act == 1)
    return v > 0 ? v : 0;
  if (act == 2)
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  return v;
}

/// Half the spacing of representable values around v: the error of one
/// round-to-nearest into `dtype`.
double halfUlp(int32_t dtype, double v) {
  int bits = dtype == F32 ? 24 : dtype == F16 ? 11 : 8;
  double a = std::fabs(v);
  if (dtype == F16 && a < std::ldexp(1, -14))
    return std::ldexp(1, -25);
  int e;
  std::frexp(a == 0 ? 1e-30 : a, &e);
  return std::ldexp(1, e - bits - 1);
}

} // namespace

std::string fixturePath(const char *built) {
  const char *dir = std::getenv("NNCC_TEST_FIXTURE_DIR");
  if (!dir || !*dir)
    return built;
  std::string path = built;
  return std::string(dir) + path.substr(path.rfind('/'));
}

const std::vector<GemmCase> &gemmCases() {
  static const std::vector<GemmCase> cases = {
      {"f32_bias_relu", 1, 5, 7, 3, false, false, 3, 7, 7, 0, 0, 0, F32, F32, F32, 1, true, false,
       1.0, 0.0},
      {"f16_bias_gelu", 1, 5, 7, 3, false, true, 3, 3, 7, 0, 0, 0, F16, F16, F16, 2, true, false,
       1.0, 0.0},
      {"bf16_batched_broadcast", 3, 4, 5, 6, false, false, 6, 5, 5, 24, 0, 20, BF16, BF16, F32, 0,
       false, false, 2.0, 0.0},
      {"f32_tf32_beta", 1, 3, 6, 4, true, false, 3, 6, 6, 0, 0, 0, F32, F32, F32, 0, false, true,
       0.5, 2.0},
      {"bf16_bias_relu", 2, 3, 4, 5, false, false, 5, 4, 4, 0, 20, 12, BF16, BF16, BF16, 1, true,
       false, 1.0, 0.0},
      {"large_bias_gelu", 1, 64, 300, 16, false, false, 16, 300, 300, 0, 0, 0, F32, F32, F32, 2,
       true, false, 1.0, 0.0},
  };
  return cases;
}

void checkGemmEntry(const std::string &modulePath, const std::string &device, const GemmCase &c,
                    const DeviceTolerance &tol) {
  nncc::Module mod = nncc::Module::load(modulePath);
  nncc::EntryInfo info = mod.entry(c.entry);
  nncc::TensorMap inputs;
  std::vector<nncc::Tensor> in; // a, b[, bias][, c0] in signature order
  for (size_t i = 0; i < info.inputs.size(); ++i) {
    const nncc::TensorInfo &t = info.inputs[i];
    nncc::Tensor x = nncc::Tensor::empty(t.dtype, t.dims);
    for (int64_t j = 0; j < t.numel(); ++j)
      store(static_cast<int32_t>(t.dtype), x.data(), j, inputValue(static_cast<int>(i) + 1, j));
    inputs[t.name] = x;
    in.push_back(x);
  }
  const void *a = in[0].data(), *b = in[1].data();
  const void *bias = c.bias ? in[2].data() : nullptr;
  const void *c0 = c.c0 ? in.back().data() : nullptr;

  nncc::Session session(mod, nncc::Device::parse(device));
  nncc::TensorMap outs = session.run(c.entry, inputs);
  const nncc::Tensor &out = outs.at("c");
  ASSERT_EQ(static_cast<int32_t>(out.dtype()), c.dtypeC);

  int failures = 0;
  for (int64_t bi = 0; bi < c.batch; ++bi)
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t col = 0; col < c.n; ++col) {
        double acc = 0, mag = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          int64_t ia = bi * c.strideA + (c.transA ? kk * c.lda + r : r * c.lda + kk);
          int64_t ib = bi * c.strideB + (c.transB ? col * c.ldb + kk : kk * c.ldb + col);
          double p = fromBits(c.dtypeA, a, ia) * fromBits(c.dtypeB, b, ib);
          acc += p;
          mag += std::fabs(p);
        }
        int64_t ic = bi * c.strideC + r * c.ldc + col;
        double v = c.alpha * acc;
        if (c0)
          v += c.beta * fromBits(c.dtypeC, c0, ic);
        if (bias)
          v += fromBits(c.dtypeC, bias, col);
        double want = activate(c.activation, v);
        double got = fromBits(c.dtypeC, out.data(), ic);
        // Rounding C once, f32 accumulation, and the device's own slack.
        double allowed = halfUlp(c.dtypeC, want) + 1e-6 * (mag + 1) +
                         (c.activation == 2 ? tol.gelu : 0) + tol.tf32 * (mag + 1);
        if (!(std::fabs(got - want) <= allowed) && ++failures <= 5)
          ADD_FAILURE() << c.entry << " on " << device << ": c[" << bi << "," << r << "," << col
                        << "] = " << got << ", expected " << want << " (allowed error " << allowed
                        << ")";
      }
  EXPECT_EQ(failures, 0) << c.entry << " on " << device;
}

} // namespace nncc::test
