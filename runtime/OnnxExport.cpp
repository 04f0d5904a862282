#include "OnnxExport.h"

#include "AtomicFile.h"
#include "DType.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace nncc::rt {
namespace {

using Bytes = std::vector<uint8_t>;

bool readVarint(const Bytes &b, size_t &at, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && at < b.size(); shift += 7) {
    uint8_t c = b[at++];
    *v |= uint64_t(c & 0x7f) << shift;
    if (!(c & 0x80))
      return true;
  }
  return false;
}

void writeVarint(Bytes &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

void writeLengthDelimited(Bytes &out, uint32_t field, const uint8_t *data, size_t n) {
  writeVarint(out, uint64_t(field) << 3 | 2);
  writeVarint(out, n);
  out.insert(out.end(), data, data + n);
}

/// One field of a message: its number, wire type, and where its bytes are
/// (`payload` the contents of a length-delimited field).
struct Field {
  uint32_t number = 0, wire = 0;
  size_t begin = 0, end = 0;             ///< the whole field, tag included
  size_t payload = 0, payloadLength = 0; ///< length-delimited fields
  uint64_t value = 0;                    ///< varint fields
};

bool nextField(const Bytes &b, size_t &at, size_t end, Field *f) {
  f->begin = at;
  uint64_t tag;
  if (!readVarint(b, at, &tag) || at > end)
    return false;
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire = static_cast<uint32_t>(tag & 7);
  switch (f->wire) {
  case 0:
    if (!readVarint(b, at, &f->value))
      return false;
    break;
  case 1:
    at += 8;
    break;
  case 5:
    at += 4;
    break;
  case 2: {
    uint64_t n;
    if (!readVarint(b, at, &n) || n > end - at)
      return false;
    f->payload = at;
    f->payloadLength = n;
    at += n;
    break;
  }
  default:
    return false;
  }
  f->end = at;
  return at <= end;
}

/// The name, data type and dims of a TensorProto.
struct TensorHeader {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
};

bool tensorHeader(const Bytes &b, size_t begin, size_t end, TensorHeader *t) {
  for (size_t at = begin; at < end;) {
    Field f;
    if (!nextField(b, at, end, &f))
      return false;
    if (f.number == 8 && f.wire == 2)
      t->name.assign(reinterpret_cast<const char *>(b.data() + f.payload), f.payloadLength);
    else if (f.number == 2 && f.wire == 0)
      t->dtype = static_cast<int32_t>(f.value);
    else if (f.number == 1 && f.wire == 0)
      t->dims.push_back(static_cast<int64_t>(f.value));
    else if (f.number == 1 && f.wire == 2)
      for (size_t p = f.payload; p < f.payload + f.payloadLength;) {
        uint64_t d;
        if (!readVarint(b, p, &d))
          return false;
        t->dims.push_back(static_cast<int64_t>(d));
      }
  }
  return true;
}

} // namespace

Status exportOnnx(Session &session, const char *original, const char *output) {
  if (!original || !output)
    return error(NNCC_ERROR_INVALID_ARGUMENT, "export: the model paths must not be NULL");
  const nncc_module &m = session.module().abi();
  // Every state, whole, in module order first: reading a sharded one is a
  // collective of its tensor group, which the other ranks join by reading
  // the states in the same order (docs/distributed.md), whatever the file
  // holds.
  std::vector<Bytes> values(static_cast<size_t>(m.num_states));
  for (int32_t i = 0; i < m.num_states; ++i) {
    values[i].resize(static_cast<size_t>(session.module().stateBytes(i)));
    NNCC_RETURN_IF_ERROR(session.readState(m.states[i].name, values[i].data(), session.module().stateBytes(i)));
  }
  std::ifstream in(original, std::ios::binary);
  if (!in)
    return error(NNCC_ERROR_NOT_FOUND, format("%s: cannot open the ONNX model", original));
  Bytes model((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto malformed = [&] {
    return error(NNCC_ERROR_INVALID_ARGUMENT, format("%s: not a readable ONNX model (protobuf)", original));
  };
  Bytes out;
  int32_t replaced = 0;
  for (size_t at = 0; at < model.size();) {
    Field f;
    if (!nextField(model, at, model.size(), &f))
      return malformed();
    if (f.number != 7 || f.wire != 2) { // not ModelProto.graph: as it is
      out.insert(out.end(), model.begin() + f.begin, model.begin() + f.end);
      continue;
    }
    Bytes graph;
    size_t graphEnd = f.payload + f.payloadLength;
    for (size_t g = f.payload; g < graphEnd;) {
      Field gf;
      if (!nextField(model, g, graphEnd, &gf))
        return malformed();
      TensorHeader t;
      int32_t state = -1;
      if (gf.number == 5 && gf.wire == 2) {
        if (!tensorHeader(model, gf.payload, gf.payload + gf.payloadLength, &t))
          return malformed();
        state = session.module().findState(t.name.c_str());
      }
      if (state < 0) {
        graph.insert(graph.end(), model.begin() + gf.begin, model.begin() + gf.end);
        continue;
      }
      const nncc_tensor_desc &st = session.module().stateDesc(state); // whole, as the ONNX model has it
      std::string have = typeString(t.dtype, static_cast<int32_t>(t.dims.size()), t.dims.data());
      std::string want = typeString(st.dtype, st.rank, st.dims);
      if (have != want)
        return error(NNCC_ERROR_INVALID_ARGUMENT,
                     format("%s: initializer '%s' is %s, the module's state of that name %s: it was compiled "
                            "from another model",
                            original, t.name.c_str(), have.c_str(), want.c_str()));
      const Bytes &value = values[state];
      Bytes tensor;
      for (int32_t d = 0; d < st.rank; ++d) {
        writeVarint(tensor, 1 << 3 | 0);
        writeVarint(tensor, static_cast<uint64_t>(st.dims[d]));
      }
      writeVarint(tensor, 2 << 3 | 0);
      writeVarint(tensor, static_cast<uint64_t>(st.dtype));
      writeLengthDelimited(tensor, 8, reinterpret_cast<const uint8_t *>(t.name.data()), t.name.size());
      writeLengthDelimited(tensor, 9, value.data(), value.size());
      writeLengthDelimited(graph, 5, tensor.data(), tensor.size());
      ++replaced;
    }
    writeLengthDelimited(out, 7, graph.data(), graph.size());
  }
  if (replaced == 0 && m.num_states > 0)
    return error(NNCC_ERROR_INVALID_ARGUMENT,
                 format("%s: no initializer is named like a state of module '%s' (%s): it was compiled from "
                        "another model",
                        original, session.module().path().c_str(), session.module().stateNames().c_str()));
  return writeFileAtomically(output, out, "the model");
}

} // namespace nncc::rt
