/// `--cpu`: which x86-64 CPU host code is compiled for, and which ISA
/// features the module therefore needs at load.
#include "lib/Target/CpuTarget.h"
#include "lib/Support/Error.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include "nncc/cpu_features.h"

namespace nncc {
namespace {

const llvm::Target *hostTarget(std::string &triple, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  triple = llvm::sys::getDefaultTargetTriple();
  return llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
}

} // namespace

llvm::Expected<CpuTarget> resolveCpuTarget(llvm::StringRef cpu) {
  CpuTarget result;
  if (cpu == "native") {
    result.name = llvm::sys::getHostCPUName().str();
    // The host's exact features, also those its CPU model would not imply
    // (a hypervisor may hide AVX-512 from a CPU that has it).
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    for (const auto &feature : host)
      result.llvmFeatures += (result.llvmFeatures.empty() ? "" : ",") +
                             std::string(feature.second ? "+" : "-") + feature.first().str();
  } else if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) != llvm::X86::CK_None) {
    result.name = cpu.str();
  } else {
    return fail("--cpu: '" + cpu +
                "' is not an x86-64 CPU (expected native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 "
                "or an LLVM CPU name such as znver3 or sapphirerapids)");
  }
  std::string triple, error;
  const llvm::Target *target = hostTarget(triple, error);
  if (!target)
    return fail("no LLVM target for " + triple + ": " + error);
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(llvm::Triple(triple), result.name, result.llvmFeatures));
  // Exactly what the code generator may use, implied features included.
#define NNCC_RECORD_FEATURE(name, leaf, subleaf, reg, bit, xcr0)                                   \
  if (subtarget->checkFeatures("+" name))                                                          \
    result.requiredFeatures.push_back(name);
  NNCC_X86_FEATURES(NNCC_RECORD_FEATURE)
#undef NNCC_RECORD_FEATURE
  bool avx512 = subtarget->checkFeatures("+avx512f");
  result.vectorBits = avx512 ? 512 : subtarget->checkFeatures("+avx") ? 256 : 128;
  result.vectorRegisters = avx512 ? 32 : 16;
  result.hasOwnSgemm = avx512 || (subtarget->checkFeatures("+avx2") && subtarget->checkFeatures("+fma"));
  return result;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostTargetMachine(const CpuTarget &cpu) {
  std::string triple, error;
  const llvm::Target *target = hostTarget(triple, error);
  if (!target)
    return fail("no LLVM target for " + triple + ": " + error);
  llvm::TargetOptions options;
  // Strided stores as scalar stores, not AVX-512 scatters, on every CPU
  // level: a scatter is microcoded on AMD's Zen cores and no faster than the
  // stores on Intel's, and a module runs on whichever machine of its level
  // it meets. The transpose kernels after transposed GEMMs scattered each
  // element: MobileNet's at batch 1 took 78 us, 56 without (docs/
  // performance.md). Gathers stay: without them Resize and col2im ran 20%
  // slower. A tuning feature: nothing the CPU must have.
  std::string features = cpu.llvmFeatures;
  features += std::string(features.empty() ? "" : ",") + "+prefer-no-scatter";
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      llvm::Triple(triple), cpu.name, features, options, llvm::Reloc::PIC_));
  if (!machine)
    return fail("LLVM cannot create a target machine for CPU '" + cpu.name + "'");
  return machine;
}

} // namespace nncc
