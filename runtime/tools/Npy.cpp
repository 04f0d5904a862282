#include "Npy.h"

#include "nncc/module_abi.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace nncc::tools {
namespace {

/// The value of `key` in numpy's header dict, as written by numpy
/// ("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }").
bool field(const std::string &header, const std::string &key, std::string *value) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return false;
  at = header.find(':', at);
  if (at == std::string::npos)
    return false;
  ++at;
  while (at < header.size() && header[at] == ' ')
    ++at;
  size_t end = at;
  if (at < header.size() && header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos)
      return false;
    ++end;
  } else if (at < header.size() && header[at] == '\'') {
    end = header.find('\'', at + 1);
    if (end == std::string::npos)
      return false;
    ++end;
  } else {
    end = header.find_first_of(",}", at);
    if (end == std::string::npos)
      return false;
  }
  *value = header.substr(at, end - at);
  return true;
}

int32_t dtypeOf(const std::string &descr) {
  static const struct {
    const char *descr;
    int32_t dtype;
  } kTypes[] = {{"'<f4'", NNCC_DTYPE_F32}, {"'<f8'", NNCC_DTYPE_F64}, {"'<f2'", NNCC_DTYPE_F16},
                {"'|i1'", NNCC_DTYPE_I8},  {"'<i2'", NNCC_DTYPE_I16}, {"'<i4'", NNCC_DTYPE_I32},
                {"'<i8'", NNCC_DTYPE_I64}, {"'|u1'", NNCC_DTYPE_U8},  {"'<u2'", NNCC_DTYPE_U16},
                {"'<u4'", NNCC_DTYPE_U32}, {"'<u8'", NNCC_DTYPE_U64}, {"'|b1'", NNCC_DTYPE_BOOL}};
  for (const auto &t : kTypes)
    if (descr == t.descr)
      return t.dtype;
  return 0;
}

} // namespace

bool parseNpy(const uint8_t *bytes, size_t size, HostTensor *out, std::string *error) {
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0) {
    *error = "not a .npy file (no \\x93NUMPY magic)";
    return false;
  }
  uint8_t major = bytes[6];
  size_t headerLen, start;
  if (major == 1) {
    headerLen = bytes[8] | size_t(bytes[9]) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) {
      *error = "truncated header";
      return false;
    }
    headerLen = bytes[8] | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 | size_t(bytes[11]) << 24;
    start = 12;
  } else {
    *error = "unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (headerLen > size - start) {
    *error = "truncated header";
    return false;
  }
  std::string header(reinterpret_cast<const char *>(bytes + start), headerLen);
  std::string descr, order, shape;
  if (!field(header, "descr", &descr) || !field(header, "fortran_order", &order) ||
      !field(header, "shape", &shape)) {
    *error = "header without descr, fortran_order or shape: " + header;
    return false;
  }
  out->dtype = dtypeOf(descr);
  if (out->dtype == 0) {
    *error = "unsupported element type " + descr + " (little-endian numbers and bools only)";
    return false;
  }
  if (order != "False") {
    *error = "Fortran-order arrays are not supported (save with numpy.ascontiguousarray)";
    return false;
  }
  out->dims.clear();
  uint64_t numel = 1;
  for (size_t i = 1; i + 1 < shape.size();) { // inside the parentheses
    while (i + 1 < shape.size() && (shape[i] == ' ' || shape[i] == ','))
      ++i;
    if (i + 1 >= shape.size())
      break;
    size_t end = i;
    while (end + 1 < shape.size() && shape[end] >= '0' && shape[end] <= '9')
      ++end;
    if (end == i || end - i > 15) {
      *error = "bad shape " + shape;
      return false;
    }
    int64_t d = std::stoll(shape.substr(i, end - i));
    out->dims.push_back(d);
    if (d != 0 && numel > (uint64_t(1) << 40) / uint64_t(d)) {
      *error = "shape " + shape + " is too large";
      return false;
    }
    numel *= uint64_t(d);
    i = end;
  }
  uint64_t bytesNeeded = numel * uint64_t(nncc_dtype_bytes(out->dtype));
  size_t dataStart = start + headerLen;
  if (size - dataStart != bytesNeeded) {
    *error = "holds " + std::to_string(size - dataStart) + " data bytes; shape " + shape + " of " + descr +
             " needs " + std::to_string(bytesNeeded);
    return false;
  }
  out->data.assign(bytes + dataStart, bytes + size);
  return true;
}

bool readNpyFile(const std::string &path, HostTensor *out, std::string *error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!parseNpy(bytes.data(), bytes.size(), out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

} // namespace nncc::tools
