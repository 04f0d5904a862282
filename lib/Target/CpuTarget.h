#ifndef NNCC_LIB_TARGET_CPUTARGET_H
#define NNCC_LIB_TARGET_CPUTARGET_H

#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace nncc {

/// The CPU host code is compiled for (`--cpu`). The module records `name`
/// and `requiredFeatures`; the runtime refuses it on a machine lacking one.
struct CpuTarget {
  /// What the module reports: the level or LLVM CPU name ("x86-64-v3"), or
  /// for `native` the build machine's CPU name.
  std::string name = "x86-64-v3";
  /// LLVM's subtarget feature string ("+avx2,-avx512f,..."): empty for a
  /// named CPU, the build machine's exact features for `native`.
  std::string llvmFeatures;
  /// The ISA features of include/nncc/cpu_features.h the code may use.
  std::vector<std::string> requiredFeatures;
  /// The vector unit generated kernels are blocked for: 512-bit vectors and
  /// 32 registers with AVX-512, 256 and 16 with AVX/AVX2, 128 and 16 below.
  int64_t vectorBits = 256;
  int64_t vectorRegisters = 16;
  /// The CPU runtime has its own SGEMM kernel for this CPU (AVX-512F, or
  /// AVX2 and FMA; runtime/cpu/Sgemm.cpp picks the same by CPUID): GEMM steps
  /// with a module weight as B run on it with B packed once per session.
  bool hasOwnSgemm = false;
};

/// Resolves `--cpu`: `native` (the build machine), `x86-64`, `x86-64-v2`,
/// `x86-64-v3`, `x86-64-v4`, or any x86-64 CPU name LLVM knows (`znver3`,
/// `sapphirerapids`...). An unknown name is an error listing the levels.
llvm::Expected<CpuTarget> resolveCpuTarget(llvm::StringRef cpu);

/// A target machine for `cpu` emitting position-independent code.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostTargetMachine(const CpuTarget &cpu);

} // namespace nncc

#endif // NNCC_LIB_TARGET_CPUTARGET_H
