/// Run-time range checks of gather indices, as extra `nncc.check` results.
#include "passes/Passes.h"

#include "dialects/NN/NNOps.h"
#include "dialects/NN/NNUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

namespace nncc {
#define GEN_PASS_DEF_INSERTINDEXCHECKSPASS
#include "passes/Passes.h.inc"
} // namespace nncc

using namespace mlir;
using namespace nncc;

namespace {

/// i32 scalar: 1 when an element of `indices` lies outside [-n, n), else 0.
Value outOfRangeFlag(OpBuilder &b, Location loc, Value indices, int64_t n) {
  auto type = cast<RankedTensorType>(indices.getType());
  auto scalar = RankedTensorType::get({}, type.getElementType());
  auto bound = [&](int64_t v) {
    return nn::ConstantOp::create(b, loc, scalar,
                                  DenseElementsAttr::get(scalar, b.getIntegerAttr(type.getElementType(), v)));
  };
  auto flags = RankedTensorType::get(type.getShape(), b.getI1Type());
  Value below = nn::LessOp::create(b, loc, flags, indices, bound(-n));
  Value above = nn::GreaterEqualOp::create(b, loc, flags, indices, bound(n));
  Value bad = nn::OrOp::create(b, loc, flags, below, above);
  Value bad32 = nn::CastOp::create(b, loc, RankedTensorType::get(type.getShape(), b.getI32Type()), bad);
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    axes.push_back(d);
  return nn::ReduceMaxOp::create(b, loc, RankedTensorType::get({}, b.getI32Type()), bad32, Value(),
                                 b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false), b.getBoolAttr(false));
}

struct InsertIndexChecksPass : nncc::impl::InsertIndexChecksPassBase<InsertIndexChecksPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      SmallVector<std::pair<Value, std::string>> checks;
      OpBuilder b(func.getContext());
      bool outOfRange = false;
      func.walk([&](Operation *op) {
        Value data, indices;
        int64_t axis = 0;
        if (auto g = dyn_cast<nn::GatherOp>(op)) {
          data = g.getInput(), indices = g.getIndices(), axis = g.getAxis();
        } else if (auto g = dyn_cast<nn::GatherElementsOp>(op)) {
          data = g.getInput(), indices = g.getIndices(), axis = g.getAxis();
        } else {
          return;
        }
        auto dataType = cast<RankedTensorType>(data.getType());
        int64_t n = dataType.getShape()[axis];
        std::string type = isa<nn::GatherOp>(op) ? "Gather" : "GatherElements";
        std::string nodes = nn::nodeNames(op->getLoc());
        std::string what = "node '" + (nodes.empty() ? "?" : nodes) + "' (" + type + "): an index is outside [" +
                           std::to_string(-n) + ", " + std::to_string(n) + ") of axis " + std::to_string(axis);
        // Indices that folding made constant (a Range, a Shape computation)
        // are checked now: the importer sees only those written as constants.
        DenseIntElementsAttr constant;
        if (matchPattern(indices, m_Constant(&constant))) {
          for (const APInt &index : constant.getValues<APInt>())
            if (index.getSExtValue() < -n || index.getSExtValue() >= n) {
              op->emitError(what + " (" + std::to_string(index.getSExtValue()) + ")");
              outOfRange = true;
              return;
            }
          return;
        }
        b.setInsertionPointAfter(op);
        checks.push_back({outOfRangeFlag(b, op->getLoc(), indices, n), what});
      });
      if (outOfRange)
        return signalPassFailure();
      if (checks.empty())
        continue;
      auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
      for (auto &[flag, message] : checks) {
        unsigned index = func.getNumResults();
        auto attrs = b.getDictionaryAttr(b.getNamedAttr("nncc.check", b.getStringAttr(message)));
        if (failed(func.insertResult(index, flag.getType(), attrs)))
          return signalPassFailure();
        ret->insertOperands(ret.getNumOperands(), flag);
      }
    }
  }
};

} // namespace
