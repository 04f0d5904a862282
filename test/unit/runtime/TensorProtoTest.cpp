//===- TensorProtoTest.cpp - the protobuf-free TensorProto reader ---------===//
#include "Compare.h"
#include "TensorProto.h"
#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace nncc::tools;
using ::testing::HasSubstr;

namespace {

/// Builds wire-format bytes by hand, to test what other writers produce.
struct Wire {
  std::vector<uint8_t> b;
  Wire &varint(uint64_t v) {
    while (v >= 0x80) {
      b.push_back(uint8_t(v | 0x80));
      v >>= 7;
    }
    b.push_back(uint8_t(v));
    return *this;
  }
  Wire &key(int field, int wire) { return varint(uint64_t(field) << 3 | wire); }
  Wire &field(int f, uint64_t v) { return key(f, 0).varint(v); }
  Wire &bytes(int f, const void *p, size_t n) {
    key(f, 2).varint(n);
    b.insert(b.end(), static_cast<const uint8_t *>(p), static_cast<const uint8_t *>(p) + n);
    return *this;
  }
  Wire &fixed32(int f, float v) {
    key(f, 5);
    uint8_t raw[4];
    std::memcpy(raw, &v, 4);
    b.insert(b.end(), raw, raw + 4);
    return *this;
  }
};

HostTensor parseOk(const std::vector<uint8_t> &bytes) {
  HostTensor t;
  std::string error;
  EXPECT_TRUE(parseTensorProto(bytes.data(), bytes.size(), &t, &error)) << error;
  return t;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  HostTensor t;
  std::string error;
  EXPECT_FALSE(parseTensorProto(bytes.data(), bytes.size(), &t, &error));
  return error;
}

template <typename T> std::vector<T> values(const HostTensor &t) {
  std::vector<T> v(t.data.size() / sizeof(T));
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

TEST(TensorProto, RoundTrip) {
  HostTensor t;
  t.name = "x";
  t.dtype = NNCC_DTYPE_F32;
  t.dims = {2, 3};
  std::vector<float> v = {1.5f, -2, 0, 3.25f, NAN, 1e30f};
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  HostTensor r = parseOk(serializeTensorProto(t));
  EXPECT_EQ(r.name, "x");
  EXPECT_EQ(r.dtype, NNCC_DTYPE_F32);
  EXPECT_EQ(r.dims, t.dims);
  EXPECT_EQ(r.data, t.data);
  EXPECT_EQ(r.typeString(), "f32[2,3]");

  HostTensor s; // a scalar i64
  s.dtype = NNCC_DTYPE_I64;
  int64_t big = -(int64_t(1) << 40);
  s.data.resize(8);
  std::memcpy(s.data.data(), &big, 8);
  HostTensor rs = parseOk(serializeTensorProto(s));
  EXPECT_TRUE(rs.dims.empty());
  EXPECT_EQ(values<int64_t>(rs)[0], big);

  HostTensor e; // empty
  e.dtype = NNCC_DTYPE_BOOL;
  e.dims = {0, 4};
  HostTensor re = parseOk(serializeTensorProto(e));
  EXPECT_EQ(re.dims, e.dims);
  EXPECT_TRUE(re.data.empty());
}

TEST(TensorProto, FileRoundTrip) {
  std::string dir = nncc::test::makeTempDir("TensorProto.File");
  HostTensor t;
  t.dtype = NNCC_DTYPE_U8;
  t.dims = {3};
  t.data = {1, 2, 255};
  std::string error;
  ASSERT_TRUE(writeTensorProtoFile(dir + "/t.pb", t, &error)) << error;
  HostTensor r;
  ASSERT_TRUE(readTensorProtoFile(dir + "/t.pb", &r, &error)) << error;
  EXPECT_EQ(r.data, t.data);
  EXPECT_FALSE(readTensorProtoFile(dir + "/missing.pb", &r, &error));
  EXPECT_THAT(error, HasSubstr(dir + "/missing.pb: No such file"));
  std::vector<uint8_t> junk = {0x0a, 0xff};
  nncc::test::writeFile(dir + "/junk.pb", junk.data(), junk.size());
  EXPECT_FALSE(readTensorProtoFile(dir + "/junk.pb", &r, &error));
  EXPECT_THAT(error, HasSubstr(dir + "/junk.pb: malformed TensorProto"));
}

TEST(TensorProto, TypedFields) {
  // float_data unpacked, dims unpacked, name, and an unknown field skipped.
  Wire f;
  f.field(1, 2).field(2, NNCC_DTYPE_F32).fixed32(4, 1.5f).fixed32(4, -3.0f);
  f.bytes(12, "doc", 3).bytes(8, "w", 1);
  HostTensor t = parseOk(f.b);
  EXPECT_EQ(t.name, "w");
  EXPECT_EQ(values<float>(t), (std::vector<float>{1.5f, -3.0f}));

  // float_data packed.
  float packed[3] = {1, 2, 3};
  Wire p;
  p.field(1, 3).field(2, NNCC_DTYPE_F32).bytes(4, packed, sizeof(packed));
  EXPECT_EQ(values<float>(parseOk(p.b)), (std::vector<float>{1, 2, 3}));

  // int32_data holds int8 (negative: 10-byte varints) and bool.
  Wire i8;
  i8.field(1, 2).field(2, NNCC_DTYPE_I8).field(5, uint64_t(int64_t(-5))).field(5, 7);
  EXPECT_EQ(values<int8_t>(parseOk(i8.b)), (std::vector<int8_t>{-5, 7}));
  Wire bl;
  bl.field(1, 3).field(2, NNCC_DTYPE_BOOL).field(5, 1).field(5, 0).field(5, 1);
  EXPECT_EQ(values<uint8_t>(parseOk(bl.b)), (std::vector<uint8_t>{1, 0, 1}));

  // int64_data packed, with packed dims.
  Wire i64;
  Wire dims, vals;
  dims.varint(1).varint(2);
  vals.varint(uint64_t(int64_t(-1))).varint(uint64_t(1) << 50);
  i64.bytes(1, dims.b.data(), dims.b.size()).field(2, NNCC_DTYPE_I64);
  i64.bytes(7, vals.b.data(), vals.b.size());
  HostTensor ti = parseOk(i64.b);
  EXPECT_EQ(ti.dims, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values<int64_t>(ti), (std::vector<int64_t>{-1, int64_t(1) << 50}));

  // double_data and uint64_data (for u32).
  double d[2] = {0.25, -1e300};
  Wire dd;
  dd.field(1, 2).field(2, NNCC_DTYPE_F64).bytes(10, d, sizeof(d));
  EXPECT_EQ(values<double>(parseOk(dd.b)), (std::vector<double>{0.25, -1e300}));
  Wire u32;
  u32.field(1, 1).field(2, NNCC_DTYPE_U32).field(11, 4000000000u);
  EXPECT_EQ(values<uint32_t>(parseOk(u32.b)), (std::vector<uint32_t>{4000000000u}));
}

TEST(TensorProto, MalformedInputs) {
  float v = 1;
  auto base = [] { return Wire().field(1, 1).field(2, NNCC_DTYPE_F32); };
  EXPECT_THAT(parseError({0x08}), HasSubstr("field 1 (wire type 0) is truncated"));
  EXPECT_THAT(parseError({0x08, 0x80, 0x80}), HasSubstr("truncated"));
  EXPECT_THAT(parseError({0x4a, 0x10, 0x00}), HasSubstr("field 9")); // raw_data past the end
  EXPECT_THAT(parseError({0x0b}), HasSubstr("wire type 3"));         // groups
  EXPECT_THAT(parseError(Wire().field(1, 1).b), HasSubstr("no data_type"));
  EXPECT_THAT(parseError(base().bytes(9, &v, 3).b), HasSubstr("needs 4 bytes of raw_data, has 3"));
  EXPECT_THAT(parseError(base().b), HasSubstr("has 0 elements, its dims need 1"));
  EXPECT_THAT(parseError(base().fixed32(4, 1).bytes(9, &v, 4).b),
              HasSubstr("both raw_data and typed data"));
  EXPECT_THAT(parseError(base().field(7, 1).b), HasSubstr("data in a field of another type"));
  EXPECT_THAT(parseError(base().bytes(3, "", 0).b), HasSubstr("segment"));
  EXPECT_THAT(parseError(base().field(14, 1).b), HasSubstr("external data"));
  EXPECT_THAT(parseError(base().bytes(13, "", 0).b), HasSubstr("external data"));
  EXPECT_THAT(parseError(Wire().field(2, 8).b), HasSubstr("string tensors"));
  EXPECT_THAT(parseError(Wire().field(2, 17).b), HasSubstr("unsupported TensorProto data_type 17"));
  EXPECT_THAT(parseError(Wire().field(1, uint64_t(int64_t(-2))).field(2, 1).b),
              HasSubstr("invalid TensorProto dims"));
  // Huge dims with no data: an error, not an attempt to allocate.
  EXPECT_THAT(parseError(Wire().field(1, 1u << 30).field(1, 1u << 30).field(2, 1).bytes(9, &v, 4).b),
              HasSubstr("too large"));
  EXPECT_THAT(parseError(Wire().field(1, 1u << 20).field(1, 1u << 10).field(2, 1).bytes(9, &v, 4).b),
              HasSubstr("needs 4294967296 bytes of raw_data, has 4"));
  float packed[1] = {1};
  EXPECT_THAT(parseError(Wire().field(1, 1).field(2, 1).bytes(4, packed, 3).b),
              HasSubstr("field 4"));
}

TEST(TensorProto, NoCrashOnGarbage) {
  // Every prefix of a valid file, and random bytes, give an answer, never a crash.
  HostTensor t;
  t.dtype = NNCC_DTYPE_F32;
  t.dims = {4, 4};
  t.data.assign(64, 0x3f);
  t.name = "input";
  std::vector<uint8_t> good = serializeTensorProto(t);
  for (size_t n = 0; n < good.size(); ++n) {
    HostTensor out;
    std::string error;
    EXPECT_FALSE(parseTensorProto(good.data(), n, &out, &error)) << n;
  }
  std::mt19937 rng(42);
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint8_t> junk(rng() % 64);
    for (uint8_t &b : junk)
      b = static_cast<uint8_t>(rng());
    if (i % 2 && junk.size() > 2) // mostly plausible keys
      junk[0] = static_cast<uint8_t>((rng() % 14 + 1) << 3 | (rng() % 3));
    HostTensor out;
    std::string error;
    parseTensorProto(junk.data(), junk.size(), &out, &error);
  }
}

TEST(Compare, Tolerances) {
  std::vector<float> exp = {1.0f, 100.0f, NAN, INFINITY, 0.0f};
  std::vector<float> got = {1.0f + 1e-6f, 100.05f, NAN, INFINITY, 5e-6f};
  TensorView g{NNCC_DTYPE_F32, {5}, got.data()}, e{NNCC_DTYPE_F32, {5}, exp.data()};
  CompareResult r = compareTensors(g, e, 1e-3, 1e-5);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_NEAR(r.maxAbsError, 0.05, 1e-3);

  got[1] = 100.2f;
  got[2] = 1.0f;
  r = compareTensors(g, e, 1e-3, 1e-5);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.firstMismatch, 1);
  EXPECT_THAT(r.message, HasSubstr("2 of 5 elements differ; first at index [1] (flat 1): got 100.1"));

  got[1] = 100.0f;
  got[2] = NAN;
  got[3] = -INFINITY;
  r = compareTensors(g, e, 1e-3, 1e-5);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.firstMismatch, 3);
}

TEST(Compare, IntegersAreExactAndShapesMustMatch) {
  std::vector<int64_t> a = {1, int64_t(1) << 60, 3}, b = {1, (int64_t(1) << 60) + 1, 3};
  CompareResult r = compareTensors({NNCC_DTYPE_I64, {3}, a.data()}, {NNCC_DTYPE_I64, {3}, b.data()},
                                   1, 1);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.firstMismatch, 1);
  r = compareTensors({NNCC_DTYPE_I64, {3}, a.data()}, {NNCC_DTYPE_I64, {1, 3}, a.data()}, 1, 1);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message, "expected i64[1,3], got i64[3]");
  EXPECT_EQ(formatIndex({2, 3, 4}, 23), "[1,2,3]");
}

TEST(Compare, HalfPrecisionDecoding) {
  uint16_t h[4] = {0x3c00, 0xc000, 0x0001, 0x7c00}; // 1, -2, smallest subnormal, inf
  EXPECT_EQ(elementAsDouble(NNCC_DTYPE_F16, h, 0), 1.0);
  EXPECT_EQ(elementAsDouble(NNCC_DTYPE_F16, h, 1), -2.0);
  EXPECT_EQ(elementAsDouble(NNCC_DTYPE_F16, h, 2), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(elementAsDouble(NNCC_DTYPE_F16, h, 3)));
  uint16_t bf = 0x3fc0; // 1.5
  EXPECT_EQ(elementAsDouble(NNCC_DTYPE_BF16, &bf, 0), 1.5);
}

} // namespace
