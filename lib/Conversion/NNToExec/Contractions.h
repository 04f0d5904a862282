#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_CONTRACTIONS_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_CONTRACTIONS_H

#include "dialects/Exec/ExecOps.h"
#include "dialects/NN/NNOps.h"

#include "mlir/IR/SymbolTable.h"

namespace nncc {

/// True when `v` is a tensor of f32.
bool isF32(mlir::Value v);

/// True when `mm` runs as a GEMM library call (f32/f16/bf16, batch dims the
/// call can stride through).
bool isLibraryMatMul(nn::MatMulOp mm);

/// True when `op` becomes a GEMM library call (nncc-lower-contractions):
/// MatMul, Gemm and ungrouped Conv and ConvTranspose (GEMM + col2im) with
/// f32/f16/bf16 operands; the others become loop kernels.
bool isLibraryContraction(mlir::Operation *op);

/// True when a convolution's GEMM reads its input as it lies (1x1, stride
/// 1, no padding): no im2col.
bool readsInputAsColumns(nn::ConvOp conv);

/// True when a convolution's GEMM runs once over the im2col columns of the
/// whole batch instead of once per image.
bool gemmOverWholeBatch(nn::ConvOp conv);

/// True when a convolution runs faster as the transposed product
/// [n·P, M] = colᵀ Wᵀ, its weights as the GEMM's B (which the CPU runtime's
/// own SGEMM packs once per session): f32 throughout, weights that are a
/// constant (a module weight), and by what each form moves beyond what both
/// do: always for one GEMM over a batch's columns, never for one GEMM per
/// image of a batch, and for one small image (P <= 64) when P < K
/// (docs/compiler.md).
bool weightsAsPackedB(nn::ConvOp conv);

/// True when `v` holds one value per column of `result` (shape [.., 1, N]).
bool isColumnVector(mlir::Value v, mlir::RankedTensorType result);

struct ConvEpilogue;

/// An ungrouped convolution (isLibraryContraction) as GEMM calls and the
/// kernels around them (im2col, transpose, bias), in the form its shape and
/// the target pick (`cpuOnly`: the CPU plan; `packedWeights`: the target CPU
/// has the runtime's own SGEMM). With `epilogue` (the CPU plan), its bias,
/// clamp and, where the GEMM writes the output's layout, residual ride on
/// the GEMM step; `conv` (and the epilogue's ops) are replaced.
mlir::LogicalResult lowerConvToGemm(nn::ConvOp conv, mlir::SymbolTable &symbols, bool cpuOnly,
                                    bool packedWeights, const ConvEpilogue *epilogue);

/// A kernel of `conv` writing the rank-3 `x` with its axes permuted: result
/// axis i is x's axis perm[i].
mlir::FailureOr<exec::LaunchOp> transposeKernel(nn::ConvOp conv, mlir::SymbolTable &symbols, mlir::Value x,
                                                llvm::ArrayRef<int64_t> perm);

/// Replaces conv(x, w, b) by add(conv(x, w), b viewed as [M, 1, ...]) and
/// returns the add.
nn::AddOp splitConvBias(nn::ConvOp conv);

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_CONTRACTIONS_H
