//===- TestUtil.cpp -------------------------------------------------------===//
#include "TestUtil.h"

#include "../../../runtime/cpu/Sgemm.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace nncc::test {

const int64_t kXDims[2] = {FIXTURE_ROWS, FIXTURE_COLS};
const int64_t kYDims[2] = {FIXTURE_ROWS, FIXTURE_N};

std::string makeTempDir(const std::string &name) {
  std::string root = TEST_TMP_ROOT;
  mkdir(root.c_str(), 0755);
  // One folder per test name (unique across the suite), emptied first.
  std::string dir = root + "/" + name;
  std::string cmd = "rm -rf '" + dir + "'";
  if (std::system(cmd.c_str()) != 0)
    ADD_FAILURE() << "cannot clear " << dir;
  if (mkdir(dir.c_str(), 0755) != 0)
    ADD_FAILURE() << "cannot create " << dir;
  return dir;
}

void copyFile(const std::string &from, const std::string &to, size_t maxBytes) {
  std::string data = readFile(from);
  if (data.size() > maxBytes)
    data.resize(maxBytes);
  writeFile(to, data.data(), data.size());
}

void writeFile(const std::string &path, const void *data, size_t bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(static_cast<const char *>(data), static_cast<std::streamsize>(bytes));
  ASSERT_TRUE(f.good()) << "cannot write " << path;
}

std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<uint8_t> fixtureWeightBlob() {
  const float w[8] = FIXTURE_W_INIT;
  const float m[32] = FIXTURE_M_INIT;
  std::vector<uint8_t> blob(FIXTURE_WEIGHTS_BYTES, 0);
  std::memcpy(blob.data() + FIXTURE_W_OFFSET, w, sizeof(w));
  std::memcpy(blob.data() + FIXTURE_M_OFFSET, m, sizeof(m));
  return blob;
}

std::vector<float> makeX(int seed) {
  std::vector<float> x(FIXTURE_ROWS * FIXTURE_COLS);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i * 7 + static_cast<size_t>(seed) * 13) % 32) / 16.0f - 1.0f;
  return x;
}

int64_t fixtureSessionBytes(int threads) {
  const nncc::rt::SgemmKernel *kern = nncc::rt::sgemmKernelFor();
  if (!kern)
    return 512;
  // The GEMM: 2 batches of 8 x 4 x 8, B broadcast (packed once).
  size_t floats = nncc::rt::packedBFloats(*kern, 8, FIXTURE_N) +
                  nncc::rt::sgemmTasks(threads) * nncc::rt::sgemmScratchFloats(*kern, 8, 8);
  return 512 + static_cast<int64_t>(floats * sizeof(float));
}

std::vector<float> referenceForward(const std::vector<float> &x) {
  const float w[8] = FIXTURE_W_INIT;
  const float m[32] = FIXTURE_M_INIT;
  std::vector<float> y(FIXTURE_ROWS * FIXTURE_N, 0.0f);
  for (int r = 0; r < FIXTURE_ROWS; ++r)
    for (int n = 0; n < FIXTURE_N; ++n) {
      double acc = 0;
      for (int k = 0; k < FIXTURE_COLS; ++k) {
        float t = x[r * FIXTURE_COLS + k] + w[k];
        acc += double(t > 0 ? t : 0) * m[k * FIXTURE_N + n];
      }
      y[r * FIXTURE_N + n] = static_cast<float>(acc);
    }
  return y;
}

ModulePtr loadModule(const std::string &path) {
  nncc_module_handle *m = nullptr;
  nncc_status s = nncc_module_load(path.c_str(), &m);
  EXPECT_EQ(s, NNCC_OK) << nncc_last_error();
  return ModulePtr(s == NNCC_OK ? m : nullptr);
}

SessionPtr openSession(nncc_module_handle *m, int threads) {
  nncc_session_options o;
  nncc_session_options_init(&o);
  o.threads = threads;
  nncc_session *s = nullptr;
  nncc_status st = nncc_session_create(m, "cpu", &o, &s);
  EXPECT_EQ(st, NNCC_OK) << nncc_last_error();
  return SessionPtr(st == NNCC_OK ? s : nullptr);
}

nncc_status runForward(nncc_session *s, const std::vector<float> &x, std::vector<float> *y,
                       std::vector<float> *yCopy) {
  y->assign(FIXTURE_ROWS * FIXTURE_N, -1.0f);
  yCopy->assign(FIXTURE_ROWS * FIXTURE_N, -1.0f);
  nncc_tensor in[] = {{"x", NNCC_DTYPE_F32, 2, kXDims, const_cast<float *>(x.data())}};
  nncc_tensor out[] = {{"y_copy", NNCC_DTYPE_F32, 2, kYDims, yCopy->data()},
                       {"y", NNCC_DTYPE_F32, 2, kYDims, y->data()}};
  return nncc_session_run(s, "forward", in, 1, out, 2);
}

} // namespace nncc::test
