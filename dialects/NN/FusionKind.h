#ifndef NNCC_DIALECTS_NN_FUSIONKIND_H
#define NNCC_DIALECTS_NN_FUSIONKIND_H

#include "llvm/ADT/StringRef.h"

namespace nncc::nn {

/// Fusion classes, ordered from the most to the least fusable.
enum class FusionKind {
  Elementwise,
  Broadcast,
  Injective,
  Reduction,
  Contraction,
  Opaque,
};

/// Returns the lower-case name used in diagnostics and stats.
llvm::StringRef stringifyFusionKind(FusionKind kind);

} // namespace nncc::nn

#endif // NNCC_DIALECTS_NN_FUSIONKIND_H
