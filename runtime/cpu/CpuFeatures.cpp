#include "CpuFeatures.h"

#include "nncc/cpu_features.h"

#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace nncc::rt {
namespace {

struct FeatureInfo {
  const char *name;
  unsigned leaf, subleaf, reg, bit, xcr0;
};

constexpr FeatureInfo kFeatures[] = {
#define NNCC_FEATURE_INFO(name, leaf, subleaf, reg, bit, xcr0) {name, leaf, subleaf, reg, bit, xcr0},
    NNCC_X86_FEATURES(NNCC_FEATURE_INFO)
#undef NNCC_FEATURE_INFO
};

std::vector<std::string> splitList(const char *text) {
  std::vector<std::string> items;
  std::stringstream in(text ? text : "");
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty())
      items.push_back(item);
  return items;
}

/// Whether the CPU reports `f` and the OS saves the registers it needs.
bool hasFeature(const FeatureInfo &f) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned regs[4] = {0, 0, 0, 0};
  unsigned maxLeaf = __get_cpuid_max(f.leaf & 0x80000000u, nullptr);
  if (maxLeaf < f.leaf)
    return false;
  __cpuid_count(f.leaf, f.subleaf, regs[0], regs[1], regs[2], regs[3]);
  if (!(regs[f.reg] >> f.bit & 1u))
    return false;
  if (f.xcr0 == 0)
    return true;
  unsigned a, b, c, d;
  __cpuid(1, a, b, c, d);
  if (!(c >> 27 & 1u)) // OSXSAVE: XGETBV is usable
    return false;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & f.xcr0) == f.xcr0;
#else
  (void)f;
  return false;
#endif
}

} // namespace

std::vector<std::string> missingCpuFeatures(const std::string &features) {
  std::vector<std::string> hidden = splitList(std::getenv("NNCC_CPU_HIDE_FEATURES"));
  std::set<std::string> hide(hidden.begin(), hidden.end());
  std::vector<std::string> missing;
  for (const std::string &name : splitList(features.c_str())) {
    const FeatureInfo *info = nullptr;
    for (const FeatureInfo &f : kFeatures)
      if (name == f.name)
        info = &f;
    if (!info || hide.count(name) || !hasFeature(*info))
      missing.push_back(name);
  }
  return missing;
}

Status checkHostCpu(const nncc_module &module) {
  std::vector<std::string> missing = missingCpuFeatures(module.cpu_features ? module.cpu_features : "");
  if (missing.empty())
    return Status::ok();
  std::string list;
  for (const std::string &name : missing)
    list += (list.empty() ? "" : ", ") + name;
  return error(NNCC_ERROR_UNAVAILABLE,
               format("its host code was compiled for CPU '%s' and needs features this machine "
                      "lacks: %s; recompile with a lower --cpu (x86-64-v3, x86-64-v2) or "
                      "--cpu=native on this machine",
                      module.cpu_name ? module.cpu_name : "", list.c_str()));
}

} // namespace nncc::rt
