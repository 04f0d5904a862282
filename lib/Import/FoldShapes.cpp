#include "lib/Import/FoldShapes.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nncc::import {
namespace {

/// Integer tensors larger than this are data, not shape computations.
constexpr int64_t kMaxElements = 64;

struct IntTensor {
  std::vector<int64_t> dims;
  std::vector<int64_t> values;
  int32_t dtype = onnx::TensorProto::INT64;
};

std::optional<IntTensor> fromProto(const onnx::TensorProto &t) {
  if (t.data_type() != onnx::TensorProto::INT64 && t.data_type() != onnx::TensorProto::INT32)
    return std::nullopt;
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return std::nullopt;
  IntTensor out;
  out.dtype = t.data_type();
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxElements)
      return std::nullopt;
    out.dims.push_back(d);
    n *= d;
  }
  if (n > kMaxElements)
    return std::nullopt;
  bool i64 = t.data_type() == onnx::TensorProto::INT64;
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    size_t width = i64 ? 8 : 4;
    if (raw.size() != size_t(n) * width)
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i) {
      if (i64) {
        int64_t v;
        std::memcpy(&v, raw.data() + i * 8, 8);
        out.values.push_back(v);
      } else {
        int32_t v;
        std::memcpy(&v, raw.data() + i * 4, 4);
        out.values.push_back(v);
      }
    }
  } else if (i64) {
    out.values.assign(t.int64_data().begin(), t.int64_data().end());
  } else {
    out.values.assign(t.int32_data().begin(), t.int32_data().end());
  }
  if (int64_t(out.values.size()) != n)
    return std::nullopt;
  return out;
}

onnx::TensorProto toProto(const IntTensor &t, const std::string &name) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(t.dtype);
  for (int64_t d : t.dims)
    p.add_dims(d);
  for (int64_t v : t.values) {
    if (t.dtype == onnx::TensorProto::INT64)
      p.add_int64_data(v);
    else
      p.add_int32_data(static_cast<int32_t>(v));
  }
  return p;
}

int64_t attrInt(const onnx::NodeProto &n, const std::string &name, int64_t fallback) {
  for (const auto &a : n.attribute())
    if (a.name() == name)
      return a.i();
  return fallback;
}

/// Elementwise with numpy broadcasting of a scalar or equal shapes only.
std::optional<IntTensor> binary(const IntTensor &a, const IntTensor &b, const std::string &op) {
  bool aScalar = a.values.size() == 1, bScalar = b.values.size() == 1;
  if (a.dims != b.dims && !aScalar && !bScalar)
    return std::nullopt;
  // The result has the larger shape: more elements, or (one each) more axes.
  bool takeA = a.values.size() != b.values.size() ? a.values.size() > b.values.size() : a.dims.size() >= b.dims.size();
  IntTensor out = takeA ? a : b;
  for (size_t i = 0; i < out.values.size(); ++i) {
    int64_t x = a.values[aScalar ? 0 : i], y = b.values[bScalar ? 0 : i];
    if (op == "Add")
      out.values[i] = x + y;
    else if (op == "Sub")
      out.values[i] = x - y;
    else if (op == "Mul")
      out.values[i] = x * y;
    else if (y == 0)
      return std::nullopt;
    else // Div: integer division truncates toward zero (C semantics, as ONNX's reference)
      out.values[i] = x / y;
  }
  return out;
}

std::optional<IntTensor> evaluate(const onnx::NodeProto &n, const std::vector<const IntTensor *> &in,
                                  const std::map<std::string, std::vector<int64_t>> &shapes) {
  const std::string &op = n.op_type();
  auto all = [&] {
    for (const IntTensor *t : in)
      if (!t)
        return false;
    return !in.empty();
  };
  if (op == "Shape" || op == "Size") {
    auto it = shapes.find(n.input(0));
    if (it == shapes.end())
      return std::nullopt;
    const std::vector<int64_t> &dims = it->second;
    IntTensor out;
    if (op == "Size") {
      int64_t size = 1;
      for (int64_t d : dims)
        size *= d;
      out.values = {size};
      return out;
    }
    int64_t rank = dims.size();
    int64_t start = attrInt(n, "start", 0), end = attrInt(n, "end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    for (int64_t i = start; i < end; ++i)
      out.values.push_back(dims[i]);
    out.dims = {int64_t(out.values.size())};
    return out;
  }
  if (!all())
    return std::nullopt;
  if (op == "Cast") {
    int64_t to = attrInt(n, "to", 0);
    if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32)
      return std::nullopt;
    IntTensor out = *in[0];
    out.dtype = static_cast<int32_t>(to);
    return out;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")
    return in.size() == 2 ? binary(*in[0], *in[1], op) : std::nullopt;
  if (op == "Unsqueeze" || op == "Squeeze") {
    // Shapes only change: a scalar <-> [1], a vector stays a vector.
    IntTensor out = *in[0];
    if (op == "Unsqueeze" && out.dims.empty())
      out.dims = {1};
    else if (op == "Squeeze" && out.dims == std::vector<int64_t>{1})
      out.dims = {};
    else
      return std::nullopt;
    return out;
  }
  if (op == "Concat") {
    IntTensor out;
    out.dtype = in[0]->dtype;
    for (const IntTensor *t : in) {
      if (t->dims.size() != 1)
        return std::nullopt;
      out.values.insert(out.values.end(), t->values.begin(), t->values.end());
    }
    out.dims = {int64_t(out.values.size())};
    return out;
  }
  if (op == "Gather") {
    const IntTensor &data = *in[0], &idx = *in[1];
    if (data.dims.size() != 1 || attrInt(n, "axis", 0) != 0)
      return std::nullopt;
    IntTensor out = idx;
    out.dtype = data.dtype;
    int64_t size = data.values.size();
    for (int64_t &v : out.values) {
      int64_t i = v < 0 ? v + size : v;
      if (i < 0 || i >= size)
        return std::nullopt;
      v = data.values[i];
    }
    return out;
  }
  if (op == "Slice" && in.size() >= 3) {
    const IntTensor &data = *in[0];
    if (data.dims.size() != 1 || in[1]->values.size() != 1 || in[2]->values.size() != 1)
      return std::nullopt;
    if (in.size() > 3 && in[3]->values != std::vector<int64_t>{0})
      return std::nullopt;
    int64_t step = in.size() > 4 ? in[4]->values[0] : 1;
    if (step != 1)
      return std::nullopt;
    int64_t size = data.values.size();
    int64_t start = in[1]->values[0], end = in[2]->values[0];
    start = std::clamp<int64_t>(start < 0 ? start + size : start, 0, size);
    end = std::clamp<int64_t>(end < 0 ? end + size : end, 0, size);
    IntTensor out;
    out.dtype = data.dtype;
    for (int64_t i = start; i < end; ++i)
      out.values.push_back(data.values[i]);
    out.dims = {int64_t(out.values.size())};
    return out;
  }
  return std::nullopt;
}

} // namespace

int foldShapeComputations(onnx::ModelProto &model) {
  onnx::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, IntTensor> known;
  for (const auto &init : graph.initializer())
    if (auto t = fromProto(init))
      known[init.name()] = *t;
  // Static shapes of every value shape inference (or the model) gives.
  std::map<std::string, std::vector<int64_t>> shapes;
  auto record = [&](const onnx::ValueInfoProto &v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
      return;
    std::vector<int64_t> dims;
    for (const auto &d : v.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value())
        return;
      dims.push_back(d.dim_value());
    }
    shapes[v.name()] = dims;
  };
  for (const auto &v : graph.input())
    record(v);
  for (const auto &v : graph.value_info())
    record(v);
  for (const auto &init : graph.initializer())
    shapes[init.name()] = std::vector<int64_t>(init.dims().begin(), init.dims().end());

  int folded = 0;
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      continue;
    if (node.op_type() == "Constant") {
      for (const auto &a : node.attribute())
        if (a.name() == "value" && a.has_t() && node.output_size() == 1)
          if (auto t = fromProto(a.t()))
            known[node.output(0)] = *t;
      continue;
    }
    if (node.output_size() != 1)
      continue;
    std::vector<const IntTensor *> inputs;
    for (const std::string &name : node.input()) {
      auto it = known.find(name);
      inputs.push_back(name.empty() || it == known.end() ? nullptr : &it->second);
    }
    std::optional<IntTensor> value = evaluate(node, inputs, shapes);
    // Empty results stay computed: libonnx's inference of Concat rejects an
    // empty Constant operand (the expanded LayerNormalization tests).
    if (!value || value->values.empty() || int64_t(value->values.size()) > kMaxElements)
      continue;
    std::string output = node.output(0), name = node.name();
    node.Clear();
    node.set_op_type("Constant");
    node.set_name(name);
    node.add_output(output);
    onnx::AttributeProto *attr = node.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    *attr->mutable_t() = toProto(*value, output);
    known[output] = *value;
    ++folded;
  }
  return folded;
}

} // namespace nncc::import
