#ifndef NNCC_LIB_CONVERSION_NNTOEXEC_PHASESPLITCOPY_H
#define NNCC_LIB_CONVERSION_NNTOEXEC_PHASESPLITCOPY_H

#include "mlir/IR/Builders.h"

namespace nncc {

/// The padded copy of `x` [N, C, H, W] a convolution of column stride `s`
/// reads, split into column phases: copy[n, c, y, phase, j] = x[n, c, y -
/// top, j*s + phase - left], zero outside x, into `init` [N, C, top + H +
/// bottom, s, columns], in one pass over the copy. With s = 2 (the
/// strided convolutions there are) one scf.forall over the copy's rows
/// splits each input row by vector loads and shuffles into its two phases
/// (`lanes` f32 lanes a vector); other strides copy each phase by a
/// strided linalg.generic.
mlir::Value buildPhaseSplitCopy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value init,
                                int64_t top, int64_t left, int64_t lanes);

} // namespace nncc

#endif // NNCC_LIB_CONVERSION_NNTOEXEC_PHASESPLITCOPY_H
