//===- CpuFeatures.h - does this machine run a module's host code? --------===//
//
// A module records the x86 features its host code was compiled for
// (nncc_module.cpu_features, names from include/nncc/cpu_features.h). Running
// such code on a CPU without them dies of SIGILL in the first kernel; this
// check turns that into an error at load naming what is missing.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_RUNTIME_CPU_CPUFEATURES_H
#define NNCC_RUNTIME_CPU_CPUFEATURES_H

#include "../Status.h"

#include <string>
#include <vector>

namespace nncc::rt {

/// The names of `features` (comma separated) this machine lacks, in order.
/// A name the runtime does not know counts as missing. The environment
/// variable NNCC_CPU_HIDE_FEATURES (comma separated) makes features count as
/// missing too: how tests check the refusal on machines that have them.
std::vector<std::string> missingCpuFeatures(const std::string &features);

/// OK when this machine has every feature of `module`'s host code;
/// NNCC_ERROR_UNAVAILABLE naming the missing ones otherwise.
Status checkHostCpu(const nncc_module &module);

} // namespace nncc::rt

#endif // NNCC_RUNTIME_CPU_CPUFEATURES_H
