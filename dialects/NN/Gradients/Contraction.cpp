//===- Contraction.cpp - gradients of MatMul, Gemm, Conv, attention -------===//
//
// The backward of a contraction is made of contractions again (MatMul, Gemm,
// Conv, ConvTranspose), so it becomes library calls like the forward.
//
//===----------------------------------------------------------------------===//
#include "dialects/NN/Gradients/GradientBuilder.h"

using namespace mlir;
using namespace nncc::nn;
using namespace nncc::nn::grad;

namespace {

using Grads = SmallVectorImpl<Value>;

/// y = a @ c with numpy's 1-d promotion and batch broadcasting:
/// da = dy @ cᵀ, dc = aᵀ @ dy, summed over broadcast batch dims.
LogicalResult matmulRule(MatMulOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value a = op.getLhs(), c = op.getRhs(), dy = dys[0];
  if (!isFloatTensor(a) || !isFloatTensor(c)) {
    dxs.append(2, Value());
    return success();
  }
  auto sa = g.shape(a), sc = g.shape(c);
  Value a2 = sa.size() == 1 ? g.reshape(a, {1, sa[0]}) : a;
  Value c2 = sc.size() == 1 ? g.reshape(c, {sc[0], 1}) : c;
  auto s2a = g.shape(a2), s2c = g.shape(c2);
  auto batch = broadcastShapes({s2a.drop_back(2), s2c.drop_back(2)});
  if (!batch)
    return op.emitOpError("batch dims do not broadcast");
  SmallVector<int64_t> dyShape(*batch);
  dyShape.append({s2a[s2a.size() - 2], s2c.back()});
  Value dy2 = g.reshape(dy, dyShape);
  Value da = g.sumToShape(g.matmul(dy2, g.transposeLast2(c2)), s2a);
  Value dc = g.sumToShape(g.matmul(g.transposeLast2(a2), dy2), s2c);
  dxs.push_back(g.reshape(da, sa));
  dxs.push_back(g.reshape(dc, sc));
  return success();
}

Value gemm(GradBuilder &g, Value a, Value c, double alpha, bool transA, bool transB) {
  auto sa = g.shape(a), sc = g.shape(c);
  int64_t m = sa[transA ? 1 : 0], n = sc[transB ? 0 : 1];
  return GemmOp::create(g.b, g.loc, g.type(a).clone({m, n}), a, c, Value(), g.b.getF64FloatAttr(alpha),
                        g.b.getF64FloatAttr(0.0), g.b.getBoolAttr(transA), g.b.getBoolAttr(transB));
}

/// y = alpha op(A) op(B) + beta C. With A' = op(A), B' = op(B):
/// dA' = alpha dy B'ᵀ, dB' = alpha A'ᵀ dy, dC = beta dy (summed to C's shape);
/// each is one Gemm whose transposition flags absorb op().
LogicalResult gemmRule(GemmOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value a = op.getA(), c = op.getB(), dy = dys[0];
  if (!isFloatTensor(a) || !isFloatTensor(c)) {
    dxs.append(op->getNumOperands(), Value());
    return success();
  }
  double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
  bool ta = op.getTransA(), tb = op.getTransB();
  dxs.push_back(ta ? gemm(g, c, dy, alpha, tb, true) : gemm(g, dy, c, alpha, false, !tb));
  dxs.push_back(tb ? gemm(g, dy, a, alpha, true, ta) : gemm(g, a, dy, alpha, !ta, false));
  if (op.getC())
    dxs.push_back(g.sumTo(g.mul(dy, beta), op.getC()));
  return success();
}

SmallVector<int64_t> iota(int64_t from, int64_t to) { return llvm::to_vector(llvm::seq<int64_t>(from, to)); }

/// The weight cotangent of a convolution `out = conv(x, w)` given `dOut`: a
/// convolution of the input by dOut with batch and channels swapped, strides
/// and dilations exchanged, one group per forward group, cut to the kernel.
/// Xr[c, gi*N + n, ...] = x[n, gi*cg + c, ...], Wr[m, n, ...] = dOut[n, m, ...].
Value convWeightGrad(GradBuilder &g, Value x, Value dOut, ArrayRef<int64_t> weightShape, ArrayRef<int64_t> strides,
                     ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations, int64_t group) {
  auto sx = g.shape(x), sy = g.shape(dOut);
  int64_t n = (int64_t)sx.size() - 2, batch = sx[0], cg = weightShape[1];
  SmallVector<int64_t> grouped{batch, group, cg};
  grouped.append(sx.begin() + 2, sx.end());
  SmallVector<int64_t> perm{2, 1, 0};
  llvm::append_range(perm, iota(3, 3 + n));
  Value xr = g.transpose(g.reshape(x, grouped), perm);
  SmallVector<int64_t> xrShape{cg, group * batch};
  xrShape.append(sx.begin() + 2, sx.end());
  xr = g.reshape(xr, xrShape);
  SmallVector<int64_t> swap{1, 0};
  llvm::append_range(swap, iota(2, 2 + n));
  Value wr = g.transpose(dOut, swap);
  SmallVector<int64_t> dwShape{cg, weightShape[0]}, kernel{cg, weightShape[0]};
  for (int64_t i = 0; i < n; ++i) {
    int64_t span = strides[i] * (sy[2 + i] - 1) + 1;
    dwShape.push_back((sx[2 + i] + pads[i] + pads[n + i] - span) / dilations[i] + 1);
    kernel.push_back(weightShape[2 + i]);
  }
  Value dw = ConvOp::create(g.b, g.loc, g.type(x).clone(dwShape), xr, wr, Value(),
                            g.b.getDenseI64ArrayAttr(dilations), g.b.getDenseI64ArrayAttr(pads),
                            g.b.getDenseI64ArrayAttr(strides), g.b.getI64IntegerAttr(group));
  if (ArrayRef<int64_t>(dwShape) != ArrayRef<int64_t>(kernel))
    dw = g.slice(dw, SmallVector<int64_t>(2 + n, 0), kernel, SmallVector<int64_t>(2 + n, 1));
  return g.transpose(dw, swap);
}

/// Sum of `dy` over all axes but the channels: a bias's cotangent.
Value biasGrad(GradBuilder &g, Value dy) {
  SmallVector<int64_t> axes{0};
  llvm::append_range(axes, iota(2, g.type(dy).getRank()));
  return g.reduceSum(dy, axes, /*keepdims=*/false);
}

/// dX is the transposed convolution of dy by the same weights (output
/// padding makes up for the rows the forward's stride skipped), dW the
/// convolution of convWeightGrad, db the sum of dy.
LogicalResult convRule(ConvOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), w = op.getWeight(), dy = dys[0];
  auto sx = g.shape(x), sw = g.shape(w), sy = g.shape(dy);
  int64_t n = (int64_t)sx.size() - 2;
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(), dilations = op.getDilations();
  SmallVector<int64_t> outputPadding;
  for (int64_t i = 0; i < n; ++i) {
    int64_t span = dilations[i] * (sw[2 + i] - 1) + 1;
    outputPadding.push_back(sx[2 + i] + pads[i] + pads[n + i] - span - (sy[2 + i] - 1) * strides[i]);
  }
  dxs.push_back(ConvTransposeOp::create(g.b, g.loc, g.type(x), dy, w, Value(), op.getStridesAttr(),
                                        op.getPadsAttr(), op.getDilationsAttr(),
                                        g.b.getDenseI64ArrayAttr(outputPadding), op.getGroupAttr()));
  dxs.push_back(convWeightGrad(g, x, dy, sw, strides, pads, dilations, (int64_t)op.getGroup()));
  if (op.getBias())
    dxs.push_back(biasGrad(g, dy));
  return success();
}

/// ConvTranspose is the adjoint of the convolution with the same weights
/// and window: <dy, convT(x, w)> = <conv(dy, w), x>. So dX = conv(dy, w)
/// and dW is the weight cotangent of that convolution with dy as its input
/// and x as its output's cotangent.
LogicalResult convTransposeRule(ConvTransposeOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value x = op.getInput(), w = op.getWeight(), dy = dys[0];
  int64_t group = (int64_t)op.getGroup();
  dxs.push_back(ConvOp::create(g.b, g.loc, g.type(x), dy, w, Value(), op.getStridesAttr(), op.getPadsAttr(),
                               op.getDilationsAttr(), op.getGroupAttr()));
  dxs.push_back(convWeightGrad(g, dy, x, g.shape(w), op.getStrides(), op.getPads(), op.getDilations(), group));
  if (op.getBias())
    dxs.push_back(biasGrad(g, dy));
  return success();
}

/// Einsum (explicit form, as imported): the cotangent of input k is the
/// einsum of dy with the other inputs into k's term, "O,T_j...->T_k". Letters
/// only k has (summed in the forward by k alone) are left out and dy's
/// contribution broadcast along them; a letter of size 1 in k that others
/// broadcast is summed back. A letter repeated in one term (a diagonal) has
/// no rule.
LogicalResult einsumRule(EinsumOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  StringRef eq = op.getEquation();
  size_t arrow = eq.find("->");
  StringRef outTerm = eq.substr(arrow + 2);
  SmallVector<StringRef> terms;
  eq.substr(0, arrow).split(terms, ',');
  ValueRange inputs = op.getInputs();
  llvm::DenseMap<char, int64_t> sizes;
  auto note = [&](StringRef term, ArrayRef<int64_t> shape) {
    for (auto [c, d] : llvm::zip(term, shape))
      sizes[c] = std::max(sizes.lookup(c), d);
  };
  for (auto [term, x] : llvm::zip(terms, inputs))
    note(term, g.shape(x));
  note(outTerm, g.shape(dys[0]));
  for (auto [k, term] : llvm::enumerate(terms)) {
    Value x = inputs[k];
    if (!isFloatTensor(x)) {
      dxs.push_back(Value());
      continue;
    }
    if (llvm::any_of(term, [&](char c) { return term.count(c) > 1; }))
      return op.emitOpError("gradient: a letter repeated in '") << term << "' (a diagonal) has no rule";
    std::string others = outTerm.str();
    SmallVector<Value> operands{dys[0]};
    for (auto [j, other] : llvm::enumerate(terms))
      if (j != k) {
        others += other.str();
        operands.push_back(inputs[j]);
      }
    std::string kept;
    SmallVector<int64_t> keptShape, withOnes;
    for (char c : term) {
      bool shared = others.find(c) != std::string::npos;
      if (shared) {
        kept += c;
        keptShape.push_back(sizes[c]);
      }
      withOnes.push_back(shared ? sizes[c] : 1);
    }
    std::string equation;
    equation += outTerm.str();
    for (auto [j, other] : llvm::enumerate(terms))
      if (j != k)
        equation += "," + other.str();
    equation += "->" + kept;
    Value dx = EinsumOp::create(g.b, g.loc, g.type(x).clone(keptShape), operands, g.b.getStringAttr(equation));
    SmallVector<int64_t> full;
    for (char c : term)
      full.push_back(sizes[c]);
    dx = g.expand(g.reshape(dx, withOnes), full);
    dxs.push_back(g.sumToShape(dx, g.shape(x)));
  }
  return success();
}

/// Through the math attention stands for: S = q kᵀ scale + mask,
/// P = softmax(S), y = P v. dv = Pᵀ dy, dP = dy vᵀ, dS = P (dP - Σ dP P),
/// dq = dS k scale, dk = dSᵀ q scale, dmask = dS summed to the mask.
LogicalResult attentionRule(AttentionOp op, GradBuilder &g, ArrayRef<Value> dys, Grads &dxs) {
  Value q = op.getQ(), k = op.getK(), v = op.getV(), mask = op.getMask(), dy = dys[0];
  double scale = op.getScale().convertToDouble();
  Value s = g.mul(g.matmul(q, g.transposeLast2(k)), scale);
  if (mask)
    s = g.add(s, mask);
  int64_t last = g.type(s).getRank() - 1;
  Value p = SoftmaxOp::create(g.b, g.loc, s.getType(), s, g.b.getI64IntegerAttr(last));
  Value dp = g.matmul(dy, g.transposeLast2(v));
  Value ds = g.mul(p, g.sub(dp, g.reduceSum(g.mul(dp, p), {last}, /*keepdims=*/true)));
  dxs.push_back(g.mul(g.matmul(ds, k), scale));
  dxs.push_back(g.mul(g.matmul(g.transposeLast2(ds), q), scale));
  dxs.push_back(g.matmul(g.transposeLast2(p), dy));
  if (mask)
    dxs.push_back(g.sumTo(ds, mask));
  return success();
}

} // namespace

void grad::registerContraction(MLIRContext *context) {
  attach<MatMulOp, matmulRule>(context);
  attach<GemmOp, gemmRule>(context);
  attach<ConvOp, convRule>(context);
  attach<ConvTransposeOp, convTransposeRule>(context);
  attach<AttentionOp, attentionRule>(context);
  attach<EinsumOp, einsumRule>(context);
}
