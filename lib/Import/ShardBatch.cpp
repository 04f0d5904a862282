/// The batch-dimension analysis and the constant rewrites that turn a model
/// loaded at the global batch into one data-parallel rank's graph (see
/// ShardBatch.h). Shape inference at the shard's batch then recomputes every
/// shape from the rewritten constants, so the importer needs nothing else.
#include "lib/Import/ShardBatch.h"
#include "lib/Support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace nncc::import {
namespace {

using Dims = std::vector<int64_t>;

/// Where a value holds the batch.
struct Batch {
  enum Kind { None, Axis, Unknown };
  /// None: computed without the batch inputs (weights, constants).
  /// Axis: the batch is the outermost factor of dimension `axis`.
  /// Unknown: follows the batch in a way the analysis has no rule for;
  /// `why` says where it was lost.
  Kind kind = None;
  int64_t axis = -1;
  std::string why;
  static Batch at(int64_t axis) { return {Axis, axis, ""}; }
  static Batch unknown(std::string why) { return {Unknown, -1, std::move(why)}; }
};

std::string render(const Dims &dims) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(dims))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

std::optional<Dims> intValues(const onnx::TensorProto &t) {
  if (t.data_type() != onnx::TensorProto::INT64 && t.data_type() != onnx::TensorProto::INT32)
    return std::nullopt;
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.dims_size() > 1)
    return std::nullopt;
  bool i64 = t.data_type() == onnx::TensorProto::INT64;
  Dims out;
  if (t.has_raw_data()) {
    size_t width = i64 ? 8 : 4;
    if (t.raw_data().size() % width)
      return std::nullopt;
    for (size_t i = 0; i < t.raw_data().size(); i += width) {
      if (i64) {
        int64_t v;
        std::memcpy(&v, t.raw_data().data() + i, 8);
        out.push_back(v);
      } else {
        int32_t v;
        std::memcpy(&v, t.raw_data().data() + i, 4);
        out.push_back(v);
      }
    }
  } else if (i64) {
    out.assign(t.int64_data().begin(), t.int64_data().end());
  } else {
    out.assign(t.int32_data().begin(), t.int32_data().end());
  }
  return out;
}

int64_t product(const Dims &d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i)
    p *= d[i];
  return p;
}

/// ONNX Reshape's result for `in` and the shape operand `shape`, or nullopt
/// when they do not fit.
std::optional<Dims> reshapeResult(const Dims &in, const Dims &shape, bool allowZero) {
  Dims out = shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(out)) {
    if (d == 0 && !allowZero) {
      if (i >= in.size())
        return std::nullopt;
      d = in[i];
    }
    if (d == -1) {
      if (inferred >= 0)
        return std::nullopt;
      inferred = int64_t(i);
      continue;
    }
    if (d < 0)
      return std::nullopt;
    known *= d;
  }
  int64_t total = product(in, 0, in.size());
  if (inferred >= 0) {
    if (known == 0 || total % known)
      return std::nullopt;
    out[inferred] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return out;
}

/// Multidirectional broadcasting of `a` and `b` (Expand's result), or nullopt.
std::optional<Dims> broadcastResult(const Dims &a, const Dims &b) {
  size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t y = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

bool oneOf(llvm::StringRef op, std::initializer_list<llvm::StringRef> names) {
  return llvm::is_contained(names, op);
}

/// Ops whose outputs broadcast their inputs elementwise (multidirectionally):
/// the batch stays on its axis, counted from the right.
bool isElementwise(llvm::StringRef op) {
  return oneOf(op, {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where", "Equal",
                    "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Not", "BitShift",
                    "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "PRelu", "Relu", "LeakyRelu", "Elu",
                    "Selu", "Celu", "Gelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus", "Softsign",
                    "Mish", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Sign", "Floor", "Ceil",
                    "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                    "Cast", "CastLike", "Identity", "Dropout", "Clip", "IsNaN", "IsInf", "ThresholdedRelu",
                    "Shrink"});
}

/// Ops on [N, C, ...] images: the batch must be dimension 0 of input 0.
bool isImageOp(llvm::StringRef op) {
  return oneOf(op, {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool",
                    "GlobalMaxPool", "GlobalLpPool", "BatchNormalization", "InstanceNormalization", "LRN",
                    "GroupNormalization", "SpaceToDepth", "DepthToSpace", "MeanVarianceNormalization"});
}

bool isReduction(llvm::StringRef op) {
  return oneOf(op, {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin"});
}

/// A constant shape operand to rewrite: `node`'s input `input` becomes `values`.
struct Rewrite {
  onnx::NodeProto *node;
  int input;
  Dims values;
};

class Sharder {
public:
  Sharder(onnx::ModelProto &model, const std::set<std::string> &batchInputs, int64_t batch, int64_t ranks,
          llvm::StringRef displayName)
      : graph(*model.mutable_graph()), batchInputs(batchInputs), batch(batch), ranks(ranks),
        displayName(displayName) {
    for (const auto &opset : model.opset_import())
      if (opset.domain().empty() || opset.domain() == "ai.onnx")
        opsetVersion = opset.version();
  }

  llvm::Error run();

private:
  onnx::GraphProto &graph;
  const std::set<std::string> &batchInputs;
  int64_t batch, ranks;
  llvm::StringRef displayName;
  int64_t opsetVersion = 0;

  std::map<std::string, Dims> shapes;
  std::map<std::string, const onnx::TensorProto *> literals;
  /// The tensors of Constant nodes written as `value_ints`.
  std::deque<onnx::TensorProto> owned;
  std::map<std::string, onnx::NodeProto *> producers;
  std::map<std::string, Batch> states;
  /// Batch-free values found to meet the batch in a broadcast, and the axis
  /// they must hold it on: their producer's constant shape is rewritten.
  std::map<std::string, int64_t> demanded;
  bool restart = false;
  std::vector<Rewrite> rewrites;

  void collectShapes();
  llvm::Error visit(onnx::NodeProto &node);
  llvm::Expected<Batch> rule(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims *out);
  llvm::Expected<Batch> demandedOutput(onnx::NodeProto &node, int64_t axis);
  llvm::Expected<Batch> elementwise(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims &out);
  llvm::Expected<Batch> matmul(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims &out);
  llvm::Expected<Batch> reshape(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims &out);
  llvm::Expected<Batch> expand(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims &out);
  llvm::Error demand(onnx::NodeProto &consumer, const std::string &value, int64_t axis, int64_t extent);
  void apply();
  void fixOutputs();

  const Dims *shapeOf(const std::string &name) const {
    auto it = shapes.find(name);
    if (it == shapes.end() || llvm::any_of(it->second, [](int64_t d) { return d < 0; }))
      return nullptr;
    return &it->second;
  }
  std::optional<Dims> literal(const std::string &name) const {
    auto it = literals.find(name);
    return it == literals.end() ? std::nullopt : intValues(*it->second);
  }
  const Batch &state(const std::string &name) const {
    static const Batch none;
    auto it = states.find(name);
    return it == states.end() ? none : it->second;
  }
  llvm::Error refuse(const onnx::NodeProto &node, const llvm::Twine &why) const {
    return fail(displayName, llvm::Twine("--parallel=dp:") + std::to_string(ranks) + ": " + where(node) + ": " + why);
  }
  /// Names a node by its name, or by its first result when it has none.
  static std::string where(const onnx::NodeProto &node) {
    std::string name = node.name().empty() ? "making '" + (node.output_size() ? node.output(0) : "") + "'"
                                           : "'" + node.name() + "'";
    return "node " + name + " (" + node.op_type() + ")";
  }
  int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name, int64_t otherwise) const {
    for (const auto &a : node.attribute())
      if (a.name() == name && a.type() == onnx::AttributeProto::INT)
        return a.i();
    return otherwise;
  }
  std::optional<Dims> intsAttr(const onnx::NodeProto &node, llvm::StringRef name) const {
    for (const auto &a : node.attribute())
      if (a.name() == name && a.type() == onnx::AttributeProto::INTS)
        return Dims(a.ints().begin(), a.ints().end());
    return std::nullopt;
  }
  std::optional<Dims> inputInts(const onnx::NodeProto &node, int i) const {
    if (node.input_size() <= i || node.input(i).empty())
      return std::nullopt;
    return literal(node.input(i));
  }
  static int64_t normalize(int64_t axis, size_t rank) { return axis < 0 ? axis + int64_t(rank) : axis; }
};

void Sharder::collectShapes() {
  auto record = [&](const onnx::ValueInfoProto &v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
      return;
    Dims dims;
    for (const auto &d : v.type().tensor_type().shape().dim())
      dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    shapes[v.name()] = dims;
  };
  for (const auto &v : graph.input())
    record(v);
  for (const auto &v : graph.value_info())
    record(v);
  for (const auto &v : graph.output())
    record(v);
  for (const auto &t : graph.initializer()) {
    shapes[t.name()] = Dims(t.dims().begin(), t.dims().end());
    literals[t.name()] = &t;
  }
  for (auto &node : *graph.mutable_node()) {
    for (const auto &out : node.output())
      producers[out] = &node;
    if (node.op_type() != "Constant" || node.output_size() != 1)
      continue;
    for (const auto &a : node.attribute()) {
      const onnx::TensorProto *t = a.name() == "value" && a.has_t() ? &a.t() : nullptr;
      if (a.name() == "value_ints") {
        onnx::TensorProto &ints = owned.emplace_back();
        ints.set_data_type(onnx::TensorProto::INT64);
        ints.add_dims(a.ints_size());
        for (int64_t v : a.ints())
          ints.add_int64_data(v);
        t = &ints;
      }
      if (t) {
        literals[node.output(0)] = t;
        shapes[node.output(0)] = Dims(t->dims().begin(), t->dims().end());
      }
    }
  }
}

llvm::Error Sharder::run() {
  collectShapes();
  // A demand found late restarts the analysis, so every user of the value
  // sees it hold the batch; each round adds one, so this ends.
  for (size_t round = 0; round <= size_t(graph.node_size()) + 1; ++round) {
    states.clear();
    rewrites.clear();
    restart = false;
    for (const auto &name : batchInputs)
      states[name] = Batch::at(0);
    for (auto &node : *graph.mutable_node()) {
      if (auto err = visit(node))
        return err;
      if (restart)
        break;
    }
    if (!restart) {
      apply();
      fixOutputs();
      return llvm::Error::success();
    }
  }
  return fail(displayName, "--parallel: the batch-dimension analysis did not settle");
}

llvm::Error Sharder::visit(onnx::NodeProto &node) {
  std::vector<Batch> in;
  bool free = true;
  for (const auto &name : node.input()) {
    in.push_back(name.empty() ? Batch{} : state(name));
    free = free && in.back().kind == Batch::None;
  }
  for (const auto &a : node.attribute())
    free = free && !a.has_g() && a.graphs_size() == 0;
  Batch result;
  if (free) {
    // Computed from constants alone, unless a broadcast found it spanning the batch.
    auto it = node.output_size() ? demanded.find(node.output(0)) : demanded.end();
    if (it == demanded.end())
      return llvm::Error::success();
    auto got = demandedOutput(node, it->second);
    if (!got)
      return got.takeError();
    result = *got;
  } else {
    const Dims *out = node.output_size() ? shapeOf(node.output(0)) : nullptr;
    auto got = rule(node, in, out);
    if (!got)
      return got.takeError();
    result = *got;
  }
  for (const auto &name : node.output()) {
    if (name.empty())
      continue;
    Batch b = result;
    const Dims *shape = shapeOf(name);
    if (b.kind == Batch::Axis && (!shape || b.axis >= int64_t(shape->size()) || (*shape)[b.axis] % batch))
      b = Batch::unknown(where(node));
    states[name] = b;
  }
  return llvm::Error::success();
}

llvm::Expected<Batch> Sharder::rule(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims *out) {
  llvm::StringRef op = node.op_type();
  std::string here = where(node);
  bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
  // The constant shapes of these ops would need rewriting; an unknown batch
  // axis cannot say how.
  bool shaped = defaultDomain && oneOf(op, {"Reshape", "Expand", "Tile"});
  bool literalShape = shaped && node.input_size() > 1 && literals.count(node.input(1));
  for (const auto &a : node.attribute())
    if (a.has_g() || a.graphs_size())
      return Batch::unknown(here);  // its subgraphs may read the batch inputs without naming them
  // A computed shape operand of a reshaping op is recomputed at the shard's
  // batch; only its data's batch matters.
  for (const Batch &b : shaped ? llvm::ArrayRef<Batch>(in).take_front(1) : llvm::ArrayRef<Batch>(in))
    if (b.kind == Batch::Unknown) {
      if (literalShape) {
        auto values = literal(node.input(1));
        bool agnostic = op == "Reshape" && values && intAttr(node, "allowzero", 0) == 0 &&
                        llvm::all_of(*values, [](int64_t v) { return v == 0 || v == -1; });
        if (!agnostic)
          return refuse(node, "cannot tell which dimension of its input holds the batch (it passed through " + b.why +
                                  ", which the batch-dimension analysis has no rule for), so its constant " +
                                  (op == "Tile" ? "repeats" : "shape") + " cannot be rewritten for the shard");
      }
      return Batch::unknown(b.why);
    }
  if (!defaultDomain || !out)
    return Batch::unknown(here);
  if (shaped && in[0].kind == Batch::None)
    return Batch::unknown(here);  // a constant reshaped by a shape computed from the batch
  const Batch &x = in[0];
  auto firstOnly = [&]() { return llvm::all_of(llvm::drop_begin(in), [](const Batch &b) { return b.kind == Batch::None; }); };

  if (isElementwise(op))
    return elementwise(node, in, *out);
  if (op == "MatMul" || op == "Gemm")
    return matmul(node, in, *out);
  if (op == "Reshape")
    return reshape(node, in, *out);
  if (op == "Expand")
    return expand(node, in, *out);
  if (isImageOp(op))
    return x.kind == Batch::Axis && x.axis == 0 && firstOnly() ? Batch::at(0) : Batch::unknown(here);
  if (!firstOnly() && op != "Concat" && op != "Gather")
    return Batch::unknown(here);
  const Dims *inShape = shapeOf(node.input(0));
  if (op == "Concat") {
    int64_t axis = -1;
    for (const Batch &b : in)
      if (b.kind == Batch::Axis) {
        if (axis >= 0 && axis != b.axis)
          return Batch::unknown(here);
        axis = b.axis;
      }
    if (axis < 0 || normalize(intAttr(node, "axis", 0), out->size()) == axis)
      return Batch::unknown(here);
    for (auto [i, b] : llvm::enumerate(in))
      if (b.kind == Batch::None)
        if (auto err = demand(node, node.input(i), axis, (*out)[axis]))
          return std::move(err);
    return Batch::at(axis);
  }
  if (op == "Gather") {
    const Dims *indices = node.input_size() > 1 ? shapeOf(node.input(1)) : nullptr;
    if (!inShape || !indices)
      return Batch::unknown(here);
    int64_t axis = normalize(intAttr(node, "axis", 0), inShape->size());
    if (in.size() < 2)
      return Batch::unknown(here);
    if (x.kind == Batch::Axis && in[1].kind == Batch::None && x.axis != axis)
      return Batch::at(x.axis < axis ? x.axis : x.axis + int64_t(indices->size()) - 1);
    if (x.kind == Batch::None && in[1].kind == Batch::Axis)  // an embedding lookup
      return Batch::at(axis + in[1].axis);
    return Batch::unknown(here);
  }
  if (x.kind != Batch::Axis || !inShape)
    return Batch::unknown(here);
  int64_t a = x.axis;
  if (op == "Transpose") {
    Dims perm = intsAttr(node, "perm").value_or(Dims());
    if (perm.empty())
      for (size_t i = inShape->size(); i-- > 0;)
        perm.push_back(int64_t(i));
    auto it = llvm::find(perm, a);
    return it == perm.end() ? Batch::unknown(here) : Batch::at(it - perm.begin());
  }
  if (oneOf(op, {"Flatten", "Squeeze", "Unsqueeze"})) {
    // Pure reshapes: the batch is where the product of the dimensions before
    // it is the same as before it in the input.
    int64_t before = product(*inShape, 0, a), running = 1;
    for (auto [j, d] : llvm::enumerate(*out)) {
      if (running == before && d % batch == 0 && d != 0)
        return Batch::at(int64_t(j));
      running *= d;
    }
    return Batch::unknown(here);
  }
  if (oneOf(op, {"Softmax", "LogSoftmax", "Hardmax"})) {
    int64_t axis = normalize(intAttr(node, "axis", opsetVersion >= 13 ? -1 : 1), inShape->size());
    bool mixes = opsetVersion >= 13 ? axis == a : a >= axis;
    return mixes ? Batch::unknown(here) : Batch::at(a);
  }
  if (oneOf(op, {"LayerNormalization", "LpNormalization", "TopK", "CumSum"})) {
    int64_t axis = op == "CumSum" ? (inputInts(node, 1) ? (*inputInts(node, 1))[0] : a) : intAttr(node, "axis", -1);
    axis = normalize(axis, inShape->size());
    bool mixes = op == "LayerNormalization" ? a >= axis : a == axis;
    return mixes ? Batch::unknown(here) : Batch::at(a);
  }
  if (isReduction(op)) {
    std::optional<Dims> axes;
    if (op == "ArgMax" || op == "ArgMin")
      axes = Dims{intAttr(node, "axis", 0)};
    else
      axes = node.input_size() > 1 ? inputInts(node, 1) : intsAttr(node, "axes");
    if (node.input_size() > 1 && !axes)
      return Batch::unknown(here);
    if (!axes || axes->empty()) {
      if (intAttr(node, "noop_with_empty_axes", 0))
        return Batch::at(a);
      return Batch::unknown(here);
    }
    int64_t dropped = 0;
    for (int64_t axis : *axes) {
      axis = normalize(axis, inShape->size());
      if (axis == a)
        return Batch::unknown(here);
      dropped += axis < a;
    }
    return Batch::at(intAttr(node, "keepdims", 1) ? a : a - dropped);
  }
  if (op == "Split")
    return normalize(intAttr(node, "axis", 0), inShape->size()) == a ? Batch::unknown(here) : Batch::at(a);
  if (op == "Tile") {
    auto repeats = inputInts(node, 1);
    if (!repeats || int64_t(repeats->size()) <= a || (*repeats)[a] != 1)
      return refuse(node, "repeats the batch dimension " + std::to_string(a) +
                              " of its input (or its repeats are not a constant): the shard's samples would mix");
    return Batch::at(a);
  }
  if (op == "Pad") {
    auto pads = node.input_size() > 1 ? inputInts(node, 1) : intsAttr(node, "pads");
    auto axes = inputInts(node, 3);
    if (!pads || axes)
      return Batch::unknown(here);
    size_t rank = inShape->size();
    return pads->size() == 2 * rank && (*pads)[a] == 0 && (*pads)[a + rank] == 0 ? Batch::at(a)
                                                                                   : Batch::unknown(here);
  }
  if (op == "Slice") {
    auto starts = inputInts(node, 1), ends = inputInts(node, 2);
    auto axes = node.input_size() > 3 && !node.input(3).empty() ? inputInts(node, 3) : std::optional<Dims>();
    auto steps = node.input_size() > 4 && !node.input(4).empty() ? inputInts(node, 4) : std::optional<Dims>();
    if (!starts || !ends || (node.input_size() > 3 && !node.input(3).empty() && !axes) ||
        (node.input_size() > 4 && !node.input(4).empty() && !steps))
      return Batch::unknown(here);
    for (size_t i = 0; i < starts->size(); ++i) {
      int64_t axis = axes ? normalize((*axes)[i], inShape->size()) : int64_t(i);
      if (axis != a)
        continue;
      bool whole = (*starts)[i] == 0 && (*ends)[i] >= (*inShape)[a] && (!steps || (*steps)[i] == 1);
      if (!whole)
        return Batch::unknown(here);
    }
    return Batch::at(a);
  }
  return Batch::unknown(here);
}

llvm::Expected<Batch> Sharder::elementwise(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims &out) {
  int64_t rank = int64_t(out.size()), axis = -1;
  for (auto [i, b] : llvm::enumerate(in)) {
    if (b.kind != Batch::Axis)
      continue;
    const Dims *shape = shapeOf(node.input(i));
    if (!shape)
      return Batch::unknown(where(node));
    int64_t j = rank - int64_t(shape->size()) + b.axis;
    if (axis >= 0 && axis != j)
      return Batch::unknown(where(node));
    axis = j;
  }
  if (axis < 0)
    return Batch::unknown(where(node));
  // A batch-free operand broadcasts along the batch axis, or spans it.
  for (auto [i, b] : llvm::enumerate(in)) {
    if (b.kind != Batch::None || node.input(i).empty())
      continue;
    const Dims *shape = shapeOf(node.input(i));
    int64_t k = shape ? axis - (rank - int64_t(shape->size())) : -1;
    if (shape && k >= 0 && (*shape)[k] != 1)
      if (auto err = demand(node, node.input(i), k, out[axis]))
        return std::move(err);
  }
  return Batch::at(axis);
}

llvm::Expected<Batch> Sharder::matmul(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims &out) {
  std::string here = where(node);
  bool gemm = node.op_type() == "Gemm";
  int64_t rank = int64_t(out.size()), axis = -1;
  for (int i = 0; i < 2 && i < int(in.size()); ++i) {
    if (in[i].kind != Batch::Axis)
      continue;
    const Dims *shape = shapeOf(node.input(i));
    if (!shape || shape->size() < 2)
      return Batch::unknown(here);
    int64_t r = int64_t(shape->size()), a = in[i].axis;
    bool transposed = gemm && intAttr(node, i == 0 ? "transA" : "transB", 0);
    // Rows of A and columns of B go to the result; the contracted dimension
    // would sum over the samples.
    int64_t rowsOrCols = i == 0 ? (transposed ? r - 1 : r - 2) : (transposed ? r - 2 : r - 1);
    int64_t j;
    if (a == rowsOrCols)
      j = i == 0 ? rank - 2 : rank - 1;
    else if (a < r - 2)
      j = rank - r + a;
    else
      return Batch::unknown(here);
    if (axis >= 0 && axis != j)
      return Batch::unknown(here);
    axis = j;
  }
  if (gemm && in.size() > 2 && in[2].kind == Batch::Axis) {
    const Dims *shape = shapeOf(node.input(2));
    int64_t j = shape ? rank - int64_t(shape->size()) + in[2].axis : -1;
    if (axis >= 0 && axis != j)
      return Batch::unknown(here);
    axis = j;
  }
  if (axis < 0)
    return Batch::unknown(here);
  if (gemm && in.size() > 2 && in[2].kind == Batch::None && !node.input(2).empty()) {
    const Dims *shape = shapeOf(node.input(2));
    int64_t k = shape ? axis - (rank - int64_t(shape->size())) : -1;
    if (shape && k >= 0 && (*shape)[k] != 1)
      if (auto err = demand(node, node.input(2), k, out[axis]))
        return std::move(err);
  }
  return Batch::at(axis);
}

llvm::Expected<Batch> Sharder::reshape(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims &out) {
  const Dims *inShape = shapeOf(node.input(0));
  if (in[0].kind != Batch::Axis || !inShape)
    return Batch::unknown(where(node));
  // The batch is where the product of the dimensions before it is the same
  // as before it in the input.
  int64_t a = in[0].axis, before = product(*inShape, 0, a), running = 1, j = -1;
  for (auto [k, d] : llvm::enumerate(out)) {
    if (running == before && d != 0 && d % batch == 0) {
      j = int64_t(k);
      break;
    }
    running *= d;
  }
  if (j < 0)
    return refuse(node, "reshapes " + render(*inShape) + " (the batch in dimension " + std::to_string(a) +
                            ") to " + render(out) + ", which splits the batch or merges it into an inner dimension");
  auto values = literal(node.input(1));
  if (!values) {
    // A computed shape: shape inference recomputes it from the shard's shapes,
    // unless it was computed from constants alone.
    if (state(node.input(1)).kind == Batch::None)
      return refuse(node, "its shape " + render(out) + " holds the batch in dimension " + std::to_string(j) +
                              " but is computed from constants alone, so it cannot be rewritten for the shard");
    return Batch::at(j);
  }
  bool allowZero = intAttr(node, "allowzero", 0) != 0;
  Dims shard = *values;
  if (j < int64_t(shard.size()) && shard[j] > 0)
    shard[j] /= ranks;
  Dims shardIn = *inShape, shardOut = out;
  shardIn[a] /= ranks;
  shardOut[j] /= ranks;
  if (reshapeResult(shardIn, shard, allowZero) != shardOut)
    return refuse(node, "its constant shape " + render(*values) + " cannot be rewritten for the shard's batch: " +
                            "the input " + render(*inShape) + " holds the batch in dimension " + std::to_string(a) +
                            " and the result " + render(out) + " in dimension " + std::to_string(j));
  if (shard != *values)
    rewrites.push_back({&node, 1, shard});
  return Batch::at(j);
}

llvm::Expected<Batch> Sharder::expand(onnx::NodeProto &node, const std::vector<Batch> &in, const Dims &out) {
  const Dims *inShape = shapeOf(node.input(0));
  if (in[0].kind != Batch::Axis || !inShape)
    return Batch::unknown(where(node));
  int64_t j = int64_t(out.size()) - int64_t(inShape->size()) + in[0].axis;
  auto values = literal(node.input(1));
  if (!values)
    return Batch::at(j);
  Dims shard = *values, shardIn = *inShape, shardOut = out;
  int64_t k = j - (int64_t(out.size()) - int64_t(shard.size()));
  if (k >= 0 && shard[k] != 1)
    shard[k] /= ranks;
  shardIn[in[0].axis] /= ranks;
  shardOut[j] /= ranks;
  if (broadcastResult(shardIn, shard) != shardOut)
    return refuse(node, "its constant shape " + render(*values) + " cannot be rewritten for the shard's batch");
  if (shard != *values)
    rewrites.push_back({&node, 1, shard});
  return Batch::at(j);
}

llvm::Error Sharder::demand(onnx::NodeProto &consumer, const std::string &value, int64_t axis, int64_t extent) {
  onnx::NodeProto *producer = producers.count(value) ? producers[value] : nullptr;
  bool shapedByConstant = producer && (producer->op_type() == "ConstantOfShape" || producer->op_type() == "Expand") &&
                          producer->input_size() >= 1 &&
                          literals.count(producer->input(producer->op_type() == "Expand" ? 1 : 0));
  if (!shapedByConstant || demanded.count(value))
    return refuse(consumer, "its operand '" + value + "' spans the batch (extent " + std::to_string(extent) +
                                " along the batch dimension) but is computed without the batch inputs" +
                                (producer ? " by " + where(*producer) : std::string(" (a weight or constant)")) +
                                ": data parallelism cannot give each rank its part of it");
  demanded[value] = axis;
  restart = true;
  return llvm::Error::success();
}

llvm::Expected<Batch> Sharder::demandedOutput(onnx::NodeProto &node, int64_t axis) {
  const Dims *out = shapeOf(node.output(0));
  bool expand = node.op_type() == "Expand";
  auto values = literal(node.input(expand ? 1 : 0));
  if (!out || !values || axis >= int64_t(out->size()) || (*out)[axis] % ranks)
    return refuse(node, "its result spans the batch but its shape cannot be rewritten for the shard");
  Dims shard = *values, shardOut = *out;
  shardOut[axis] /= ranks;
  int64_t k = axis - (int64_t(out->size()) - int64_t(shard.size()));
  if (k >= 0 && shard[k] != 1)
    shard[k] /= ranks;
  std::optional<Dims> got = shard;
  if (expand) {
    const Dims *inShape = shapeOf(node.input(0));
    got = inShape ? broadcastResult(*inShape, shard) : std::nullopt;
  }
  if (got != shardOut)
    return refuse(node, "its result spans the batch but its constant shape " + render(*values) +
                            " cannot be rewritten for the shard");
  rewrites.push_back({&node, expand ? 1 : 0, shard});
  return Batch::at(axis);
}

void Sharder::apply() {
  std::map<std::string, int> uses;
  std::function<void(const onnx::GraphProto &)> count = [&](const onnx::GraphProto &g) {
    for (const auto &node : g.node()) {
      for (const auto &name : node.input())
        ++uses[name];
      for (const auto &a : node.attribute()) {
        if (a.has_g())
          count(a.g());
        for (const auto &sub : a.graphs())
          count(sub);
      }
    }
  };
  count(graph);
  for (const auto &o : graph.output())
    ++uses[o.name()];
  llvm::StringSet<> names;
  for (const auto &t : graph.initializer())
    names.insert(t.name());
  for (const auto &node : graph.node())
    for (const auto &o : node.output())
      names.insert(o);
  for (Rewrite &r : rewrites) {
    const std::string name = r.node->input(r.input);
    onnx::TensorProto value;
    value.set_data_type(onnx::TensorProto::INT64);
    value.add_dims(int64_t(r.values.size()));
    for (int64_t v : r.values)
      value.add_int64_data(v);
    if (uses[name] == 1) {
      // The constant's only user: rewritten where it is, keeping its name.
      for (auto &t : *graph.mutable_initializer())
        if (t.name() == name) {
          value.set_name(name);
          t = value;
        }
      if (onnx::NodeProto *constant = producers.count(name) ? producers[name] : nullptr) {
        constant->clear_attribute();
        auto *a = constant->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        *a->mutable_t() = value;
      }
      continue;
    }
    std::string fresh = name + ".dp" + std::to_string(ranks);
    for (int i = 1; names.count(fresh); ++i)
      fresh = name + ".dp" + std::to_string(ranks) + "." + std::to_string(i);
    names.insert(fresh);
    value.set_name(fresh);
    *graph.add_initializer() = value;
    --uses[name];
    r.node->set_input(r.input, fresh);
  }
}

void Sharder::fixOutputs() {
  // Shape inference recomputes them at the shard's batch; the global batch's
  // would contradict it.
  graph.clear_value_info();
  for (auto &output : *graph.mutable_output()) {
    auto *type = output.mutable_type();
    if (!type->has_tensor_type() || !type->tensor_type().has_shape())
      continue;
    const Batch &b = state(output.name());
    auto *dims = type->mutable_tensor_type()->mutable_shape()->mutable_dim();
    for (int i = 0; i < dims->size(); ++i)
      if (b.kind == Batch::Unknown || (b.kind == Batch::Axis && i == b.axis))
        (*dims)[i].clear_dim_value();
  }
}

} // namespace

llvm::Error shardBatchConstants(onnx::ModelProto &model, const std::set<std::string> &batchInputs, int64_t batch,
                                int64_t ranks, llvm::StringRef displayName) {
  return Sharder(model, batchInputs, batch, ranks, displayName).run();
}

} // namespace nncc::import
