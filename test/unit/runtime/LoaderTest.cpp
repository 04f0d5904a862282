//===- LoaderTest.cpp - module loading and its errors ---------------------===//
#include "TestUtil.h"

#include "nncc/plan_hash.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace nncc::test;
using ::testing::HasSubstr;

namespace {

/// Loads a module that must fail; returns the status and the message.
std::pair<nncc_status, std::string> loadError(const std::string &path) {
  nncc_module_handle *m = nullptr;
  nncc_status s = nncc_module_load(path.c_str(), &m);
  EXPECT_NE(s, NNCC_OK) << path << " loaded";
  if (s == NNCC_OK)
    nncc_module_release(m);
  return {s, nncc_last_error()};
}

TEST(Loader, LoadsValidModule) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  EXPECT_STREQ(nncc_last_error(), "");
  EXPECT_STREQ(nncc_module_producer(m.get()), "nncc test fixture");
  EXPECT_EQ(nncc_module_weights_bytes(m.get()), FIXTURE_WEIGHTS_BYTES);
}

TEST(Loader, MissingFile) {
  auto [status, msg] = loadError("/nonexistent/dir/model.so");
  EXPECT_EQ(status, NNCC_ERROR_NOT_FOUND);
  EXPECT_THAT(msg, HasSubstr("cannot load module '/nonexistent/dir/model.so'"));
  EXPECT_THAT(msg, HasSubstr("No such file or directory"));
}

TEST(Loader, NullArguments) {
  nncc_module_handle *m = nullptr;
  EXPECT_EQ(nncc_module_load(nullptr, &m), NNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(nncc_last_error(), HasSubstr("NULL"));
  EXPECT_EQ(nncc_module_load(FIXTURE_OK_SO, nullptr), NNCC_ERROR_INVALID_ARGUMENT);
}

TEST(Loader, WrongAbiVersion) {
  auto [status, msg] = loadError(FIXTURE_WRONG_ABI_SO);
  EXPECT_EQ(status, NNCC_ERROR_ABI_MISMATCH);
  EXPECT_THAT(msg, HasSubstr("module ABI version 99"));
  EXPECT_THAT(msg, HasSubstr("loads version " + std::to_string(NNCC_MODULE_ABI_VERSION)));
  EXPECT_THAT(msg, HasSubstr("relu_gemm_wrong_abi.so"));
}

TEST(Loader, TruncatedCopies) {
  std::string dir = makeTempDir("Loader.Truncated");
  std::string full = readFile(FIXTURE_OK_SO);
  ASSERT_GT(full.size(), 1000u);
  // Cut in the ELF header, in the segments, and just before the end (only
  // the section headers are lost: dlopen alone would accept that).
  for (size_t keep : {size_t(0), size_t(10), size_t(100), full.size() / 3, full.size() / 2,
                      full.size() - 1}) {
    std::string path = dir + "/truncated_" + std::to_string(keep) + ".so";
    copyFile(FIXTURE_OK_SO, path, keep);
    auto [status, msg] = loadError(path);
    EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE) << keep << ": " << msg;
    EXPECT_THAT(msg, HasSubstr("truncated or corrupt")) << keep;
    EXPECT_THAT(msg, HasSubstr(path)) << keep;
  }
}

TEST(Loader, NotAnElfFile) {
  std::string dir = makeTempDir("Loader.NotElf");
  std::string path = dir + "/model.so";
  std::string text(200, 'x');
  writeFile(path, text.data(), text.size());
  auto [status, msg] = loadError(path);
  EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(msg, HasSubstr("not an ELF shared library"));
}

/// `so` with nncc's integrity trailer appended (what the packager does).
std::string sealedCopy(const std::string &so, const std::string &path) {
  std::string bytes = readFile(so);
  uint64_t sum = nncc::fileChecksum(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  bytes.append(nncc::kFileTrailerMagic, sizeof(nncc::kFileTrailerMagic));
  for (int i = 0; i < 8; ++i)
    bytes.push_back(static_cast<char>(sum >> (8 * i)));
  writeFile(path, bytes.data(), bytes.size());
  return path;
}

TEST(Loader, NotAnNnccModule) {
  // Without the trailer: refused before dlopen.
  auto [status, msg] = loadError(NNCC_RUNTIME_SO);
  EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(msg, HasSubstr("not an nncc module"));
  EXPECT_THAT(msg, HasSubstr("integrity trailer"));
  // With one, a library without the module symbol is refused after it.
  std::string sealed = sealedCopy(NNCC_RUNTIME_SO, makeTempDir("Loader.NotNncc") + "/lib.so");
  std::tie(status, msg) = loadError(sealed);
  EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(msg, HasSubstr("not an nncc module"));
  EXPECT_THAT(msg, HasSubstr(NNCC_MODULE_SYMBOL));
}

TEST(Loader, AnyChangedByteIsRefused) {
  // One flipped bit anywhere before the trailer (ELF headers, code,
  // relocations, plan, weights) fails the whole-file checksum, before dlopen
  // runs anything of the file.
  std::string dir = makeTempDir("Loader.Flipped");
  std::string full = readFile(FIXTURE_OK_SO);
  for (size_t at : {size_t(100), full.size() / 4, full.size() / 2, full.size() - 17}) {
    std::string bytes = full;
    bytes[at] ^= 0x10;
    std::string path = dir + "/flipped_" + std::to_string(at) + ".so";
    writeFile(path, bytes.data(), bytes.size());
    auto [status, msg] = loadError(path);
    EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE) << at;
    EXPECT_THAT(msg, HasSubstr("corrupt")) << at << ": " << msg;
  }
}

TEST(Loader, BadChecksum) {
  auto [status, msg] = loadError(FIXTURE_BAD_CHECKSUM_SO);
  EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(msg, HasSubstr("weights checksum mismatch"));
}

TEST(Loader, UnknownStepKind) {
  auto [status, msg] = loadError(FIXTURE_BAD_STEP_SO);
  EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(msg, HasSubstr("entry 'forward' step 2 ('Identity_3'): unknown step kind 42"));
}

TEST(Loader, OutOfBoundsBufferRef) {
  auto [status, msg] = loadError(FIXTURE_BAD_REF_SO);
  EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(msg, HasSubstr("entry 'forward' step 1 ('MatMul_2'): arg 2"));
  EXPECT_THAT(msg, HasSubstr("lies outside its 256-byte buffer"));
}

class WeightsFile : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = makeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    so_ = dir_ + "/model.so";
    copyFile(FIXTURE_WEIGHTS_FILE_SO, so_);
    weights_ = dir_ + "/" + FIXTURE_WEIGHTS_FILE_NAME;
  }
  std::string dir_, so_, weights_;
};

TEST_F(WeightsFile, MappedNextToTheModule) {
  std::vector<uint8_t> blob = fixtureWeightBlob();
  writeFile(weights_, blob.data(), blob.size());
  ModulePtr m = loadModule(so_);
  ASSERT_TRUE(m);
  SessionPtr s = openSession(m.get(), 2);
  ASSERT_TRUE(s);
  std::vector<float> x = makeX(3), y, yc;
  ASSERT_EQ(runForward(s.get(), x, &y, &yc), NNCC_OK) << nncc_last_error();
  std::vector<float> ref = referenceForward(x);
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_NEAR(y[i], ref[i], 1e-5) << i;
}

TEST_F(WeightsFile, Missing) {
  auto [status, msg] = loadError(so_);
  EXPECT_EQ(status, NNCC_ERROR_NOT_FOUND);
  EXPECT_THAT(msg, HasSubstr("cannot open weights file '" + weights_ + "'"));
}

TEST_F(WeightsFile, WrongSize) {
  std::vector<uint8_t> blob = fixtureWeightBlob();
  writeFile(weights_, blob.data(), 100);
  auto [status, msg] = loadError(so_);
  EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(msg, HasSubstr("has 100 bytes, the module expects 192"));
}

TEST_F(WeightsFile, Corrupt) {
  std::vector<uint8_t> blob = fixtureWeightBlob();
  blob[70] ^= 0x40;
  writeFile(weights_, blob.data(), blob.size());
  auto [status, msg] = loadError(so_);
  EXPECT_EQ(status, NNCC_ERROR_INVALID_MODULE);
  EXPECT_THAT(msg, HasSubstr("weights checksum mismatch"));
}

TEST(Loader, ModuleOutlivesItsHandleInSessions) {
  ModulePtr m = loadModule(FIXTURE_OK_SO);
  ASSERT_TRUE(m);
  SessionPtr s = openSession(m.get(), 1);
  ASSERT_TRUE(s);
  m.reset(); // the session keeps the module loaded
  std::vector<float> x = makeX(1), y, yc;
  ASSERT_EQ(runForward(s.get(), x, &y, &yc), NNCC_OK) << nncc_last_error();
  EXPECT_NEAR(y[5], referenceForward(x)[5], 1e-5);
}

} // namespace
