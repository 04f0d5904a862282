#ifndef NNCC_LIB_TARGET_PACKAGE_H
#define NNCC_LIB_TARGET_PACKAGE_H

#include "lib/Target/CpuTarget.h"
#include "lib/Target/Plan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace nncc {

struct PackageOptions {
  /// Store the weights in `<output>.weights` (memory-mapped at load) instead
  /// of inside the shared library.
  bool weightsFile = false;
  /// Keep the intermediate files (plan.c, kernels.o ...) in this folder.
  std::string keepDir;
  /// The CPU the kernels' host code is compiled for.
  CpuTarget cpu;
};

/// Links `plan` and the kernels' host object into the shared library
/// `outputPath` with the system C compiler (`cc`, or $NNCC_CC): generated plan
/// C source + kernel object (when `llvmKernels`, the host target's kernels,
/// is not null) + weight blob + GPU images, exporting only nncc_module_get.
llvm::Error packageSharedLibrary(const ModulePlan &plan, mlir::ModuleOp llvmKernels,
                                 llvm::StringRef outputPath, const PackageOptions &options);

} // namespace nncc

#endif // NNCC_LIB_TARGET_PACKAGE_H
