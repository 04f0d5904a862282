//===- TensorProto.cpp - protobuf wire format for TensorProto -------------===//
#include "TensorProto.h"

#include "nncc/runtime.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "TensorProto raw_data is little-endian; this reader assumes a little-endian host");

namespace nncc::tools {

namespace {

// TensorProto field numbers (onnx.proto).
enum Field {
  kDims = 1,
  kDataType = 2,
  kSegment = 3,
  kFloatData = 4,
  kInt32Data = 5,
  kStringData = 6,
  kInt64Data = 7,
  kName = 8,
  kRawData = 9,
  kDoubleData = 10,
  kUint64Data = 11,
  kExternalData = 13,
  kDataLocation = 14,
};

enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

constexpr size_t kMaxRank = 64;

/// A bounds-checked cursor over a byte range.
class Reader {
public:
  Reader(const uint8_t *p, size_t n) : p_(p), end_(p + n) {}
  bool done() const { return p_ == end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

  bool varint(uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_)
        return false;
      uint8_t b = *p_++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *out = v;
        return true;
      }
    }
    return false; // more than 10 bytes
  }
  bool fixed32(uint32_t *out) { return raw(out, 4); }
  bool fixed64(uint64_t *out) { return raw(out, 8); }
  bool bytes(const uint8_t **data, size_t *size) {
    uint64_t n;
    if (!varint(&n) || n > remaining())
      return false;
    *data = p_;
    *size = static_cast<size_t>(n);
    p_ += n;
    return true;
  }
  bool skip(int wire) {
    uint64_t v;
    const uint8_t *d;
    size_t n;
    switch (wire) {
    case kVarint: return varint(&v);
    case kFixed64: return fixed64(&v);
    case kLengthDelimited: return bytes(&d, &n);
    case kFixed32: {
      uint32_t w;
      return fixed32(&w);
    }
    default: return false; // groups (3, 4) and invalid types
    }
  }

  bool raw(void *out, size_t n) {
    if (remaining() < n)
      return false;
    std::memcpy(out, p_, n);
    p_ += n;
    return true;
  }

private:
  const uint8_t *p_, *end_;
};

/// Reads one element (or, for wire type 2, a packed run) of a repeated
/// varint field.
template <typename T> bool readVarints(Reader &r, int wire, std::vector<T> *out) {
  uint64_t v;
  if (wire == kVarint) {
    if (!r.varint(&v))
      return false;
    out->push_back(static_cast<T>(v));
    return true;
  }
  if (wire != kLengthDelimited)
    return false;
  const uint8_t *d;
  size_t n;
  if (!r.bytes(&d, &n))
    return false;
  Reader packed(d, n);
  while (!packed.done()) {
    if (!packed.varint(&v))
      return false;
    out->push_back(static_cast<T>(v));
  }
  return true;
}

/// Same for fixed-width fields (float: 4 bytes, double: 8).
template <typename T> bool readFixed(Reader &r, int wire, std::vector<T> *out) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "fixed32 or fixed64");
  constexpr int single = sizeof(T) == 4 ? kFixed32 : kFixed64;
  if (wire == single) {
    T v;
    if (!r.raw(&v, sizeof(T)))
      return false;
    out->push_back(v);
    return true;
  }
  if (wire != kLengthDelimited)
    return false;
  const uint8_t *d;
  size_t n;
  if (!r.bytes(&d, &n) || n % sizeof(T) != 0)
    return false;
  size_t old = out->size();
  out->resize(old + n / sizeof(T));
  if (n)
    std::memcpy(out->data() + old, d, n);
  return true;
}

template <typename Src, typename Dst> void convert(const std::vector<Src> &src, uint8_t *dst) {
  for (size_t i = 0; i < src.size(); ++i) {
    Dst v = static_cast<Dst>(src[i]);
    std::memcpy(dst + i * sizeof(Dst), &v, sizeof(Dst));
  }
}

bool fail(std::string *error, const std::string &msg) {
  if (error)
    *error = msg;
  return false;
}

} // namespace

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::string HostTensor::typeString() const {
  std::string s = nncc_dtype_name(dtype);
  s += '[';
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + ']';
}

bool parseTensorProto(const uint8_t *bytes, size_t size, HostTensor *out, std::string *error) {
  Reader r(bytes, size);
  HostTensor t;
  bool hasDataType = false, hasRaw = false, external = false;
  const uint8_t *raw = nullptr;
  size_t rawSize = 0;
  std::vector<float> floats;
  std::vector<int32_t> int32s;
  std::vector<int64_t> int64s;
  std::vector<double> doubles;
  std::vector<uint64_t> uint64s;
  size_t strings = 0;

  while (!r.done()) {
    uint64_t key;
    if (!r.varint(&key))
      return fail(error, "malformed TensorProto: truncated field key");
    uint64_t field = key >> 3;
    int wire = static_cast<int>(key & 7);
    bool ok = true;
    uint64_t v = 0;
    const uint8_t *d;
    size_t n;
    switch (field) {
    case kDims:
      ok = readVarints(r, wire, &t.dims);
      if (ok && t.dims.size() > kMaxRank)
        return fail(error, "malformed TensorProto: more than 64 dims");
      break;
    case kDataType:
      ok = wire == kVarint && r.varint(&v);
      t.dtype = static_cast<int32_t>(v);
      hasDataType = true;
      break;
    case kSegment:
      return fail(error, "segmented TensorProto (field 'segment') is not supported");
    case kFloatData: ok = readFixed(r, wire, &floats); break;
    case kInt32Data: ok = readVarints(r, wire, &int32s); break;
    case kStringData:
      ok = wire == kLengthDelimited && r.bytes(&d, &n);
      ++strings;
      break;
    case kInt64Data: ok = readVarints(r, wire, &int64s); break;
    case kName:
      ok = wire == kLengthDelimited && r.bytes(&d, &n);
      if (ok)
        t.name.assign(reinterpret_cast<const char *>(d), n);
      break;
    case kRawData:
      ok = wire == kLengthDelimited && r.bytes(&raw, &rawSize);
      hasRaw = true;
      break;
    case kDoubleData: ok = readFixed(r, wire, &doubles); break;
    case kUint64Data: ok = readVarints(r, wire, &uint64s); break;
    case kExternalData:
      ok = wire == kLengthDelimited && r.bytes(&d, &n);
      external = true;
      break;
    case kDataLocation:
      ok = wire == kVarint && r.varint(&v);
      if (ok && v == 1)
        external = true;
      break;
    default:
      if (field == 0)
        return fail(error, "malformed TensorProto: field number 0");
      ok = r.skip(wire);
      break;
    }
    if (!ok)
      return fail(error, "malformed TensorProto: field " + std::to_string(field) +
                             " (wire type " + std::to_string(wire) + ") is truncated or invalid");
  }

  if (external)
    return fail(error, "TensorProto with external data is not supported");
  if (!hasDataType)
    return fail(error, "TensorProto has no data_type");
  if (t.dtype == 8 || strings > 0)
    return fail(error, "string tensors are not supported");
  size_t elem = nncc_dtype_size(t.dtype);
  if (elem == 0)
    return fail(error, "unsupported TensorProto data_type " + std::to_string(t.dtype));
  int64_t numel = 1;
  for (int64_t dim : t.dims)
    if (dim < 0 || __builtin_mul_overflow(numel, dim, &numel))
      return fail(error, "invalid TensorProto dims " + t.typeString());
  int64_t bytesNeeded;
  if (__builtin_mul_overflow(numel, static_cast<int64_t>(elem), &bytesNeeded) ||
      bytesNeeded > int64_t(1) << 40)
    return fail(error, "TensorProto " + t.typeString() + " is too large");
  size_t count = static_cast<size_t>(numel);

  // Which typed field holds which dtype (onnx.proto's comments).
  size_t typedCount = 0;
  switch (t.dtype) {
  case NNCC_DTYPE_F32: typedCount = floats.size(); break;
  case NNCC_DTYPE_F64: typedCount = doubles.size(); break;
  case NNCC_DTYPE_I64: typedCount = int64s.size(); break;
  case NNCC_DTYPE_U32:
  case NNCC_DTYPE_U64: typedCount = uint64s.size(); break;
  default: typedCount = int32s.size(); break; // 8/16-bit ints, i32, bool, f16, bf16
  }
  size_t otherCount =
      floats.size() + doubles.size() + int64s.size() + uint64s.size() + int32s.size() - typedCount;
  if (otherCount > 0)
    return fail(error, std::string("TensorProto of type ") + nncc_dtype_name(t.dtype) +
                           " has data in a field of another type");
  if (hasRaw && typedCount > 0)
    return fail(error, "TensorProto has both raw_data and typed data");

  // Sizes are checked against the data actually present before allocating,
  // so huge dims in a small file cannot exhaust memory.
  if (hasRaw) {
    if (rawSize != static_cast<size_t>(bytesNeeded))
      return fail(error, "TensorProto " + t.typeString() + " needs " +
                             std::to_string(bytesNeeded) + " bytes of raw_data, has " +
                             std::to_string(rawSize));
    t.data.resize(rawSize);
    if (rawSize)
      std::memcpy(t.data.data(), raw, rawSize);
  } else {
    if (typedCount != count)
      return fail(error, "TensorProto " + t.typeString() + " has " + std::to_string(typedCount) +
                             " elements, its dims need " + std::to_string(count));
    t.data.resize(static_cast<size_t>(bytesNeeded));
    uint8_t *dst = t.data.data();
    switch (t.dtype) {
    case NNCC_DTYPE_F32: convert<float, float>(floats, dst); break;
    case NNCC_DTYPE_F64: convert<double, double>(doubles, dst); break;
    case NNCC_DTYPE_I64: convert<int64_t, int64_t>(int64s, dst); break;
    case NNCC_DTYPE_U32: convert<uint64_t, uint32_t>(uint64s, dst); break;
    case NNCC_DTYPE_U64: convert<uint64_t, uint64_t>(uint64s, dst); break;
    case NNCC_DTYPE_I32: convert<int32_t, int32_t>(int32s, dst); break;
    case NNCC_DTYPE_I16: convert<int32_t, int16_t>(int32s, dst); break;
    case NNCC_DTYPE_U16:
    case NNCC_DTYPE_F16:
    case NNCC_DTYPE_BF16: convert<int32_t, uint16_t>(int32s, dst); break;
    case NNCC_DTYPE_I8: convert<int32_t, int8_t>(int32s, dst); break;
    case NNCC_DTYPE_U8: convert<int32_t, uint8_t>(int32s, dst); break;
    case NNCC_DTYPE_BOOL:
      for (size_t i = 0; i < count; ++i)
        dst[i] = int32s[i] != 0;
      break;
    }
  }
  *out = std::move(t);
  return true;
}

bool readTensorProtoFile(const std::string &path, HostTensor *out, std::string *error) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return fail(error, path + ": " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    bytes.insert(bytes.end(), buf, buf + n);
  bool readError = std::ferror(f);
  std::fclose(f);
  if (readError)
    return fail(error, path + ": read error");
  std::string why;
  if (!parseTensorProto(bytes.data(), bytes.size(), out, &why))
    return fail(error, path + ": " + why);
  return true;
}

namespace {
void putVarint(std::vector<uint8_t> &o, uint64_t v) {
  while (v >= 0x80) {
    o.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  o.push_back(static_cast<uint8_t>(v));
}
void putKey(std::vector<uint8_t> &o, int field, int wire) {
  putVarint(o, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire));
}
void putBytes(std::vector<uint8_t> &o, int field, const void *p, size_t n) {
  putKey(o, field, kLengthDelimited);
  putVarint(o, n);
  const uint8_t *b = static_cast<const uint8_t *>(p);
  o.insert(o.end(), b, b + n);
}
} // namespace

std::vector<uint8_t> serializeTensorProto(const HostTensor &t) {
  std::vector<uint8_t> o;
  if (!t.dims.empty()) {
    std::vector<uint8_t> packed;
    for (int64_t d : t.dims)
      putVarint(packed, static_cast<uint64_t>(d));
    putBytes(o, kDims, packed.data(), packed.size());
  }
  putKey(o, kDataType, kVarint);
  putVarint(o, static_cast<uint64_t>(static_cast<int64_t>(t.dtype)));
  if (!t.name.empty())
    putBytes(o, kName, t.name.data(), t.name.size());
  putBytes(o, kRawData, t.data.data(), t.data.size());
  return o;
}

bool writeTensorProtoFile(const std::string &path, const HostTensor &tensor, std::string *error) {
  std::vector<uint8_t> bytes = serializeTensorProto(tensor);
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return fail(error, path + ": " + std::strerror(errno));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok)
    return fail(error, path + ": write error");
  return true;
}

} // namespace nncc::tools
