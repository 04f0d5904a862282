#ifndef NNCC_DIALECTS_NN_NNDIALECT_H
#define NNCC_DIALECTS_NN_NNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/NN/NNDialect.h.inc"

#endif // NNCC_DIALECTS_NN_NNDIALECT_H
