//===- GpuImage.cpp -------------------------------------------------------===//
#include "GpuImage.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace nncc::rt {

namespace {

/// "sm_90" -> 90, "sm_90a" -> 90 with a suffix (code for exactly that
/// architecture); -1 when it is not of that form.
int archNumber(const char *arch, bool *suffixed) {
  if (!arch || std::strncmp(arch, "sm_", 3) != 0)
    return -1;
  char *end = nullptr;
  long n = std::strtol(arch + 3, &end, 10);
  if (end == arch + 3 || n <= 0 || n > 10000)
    return -1;
  *suffixed = *end != '\0';
  return static_cast<int>(n);
}

} // namespace

Status chooseGpuCode(const nncc_module &module, int major, int minor,
                     std::vector<GpuCodeChoice> *out) {
  out->clear();
  int device = major * 10 + minor;
  std::string have;
  struct Ptx {
    int arch;
    const nncc_gpu_image *image;
  };
  std::vector<Ptx> ptx;
  for (int32_t i = 0; i < module.num_gpu_images; ++i) {
    const nncc_gpu_image &img = module.gpu_images[i];
    have += (have.empty() ? "" : ", ") + std::string(img.arch ? img.arch : "?");
    bool suffixed = false;
    int arch = archNumber(img.arch, &suffixed);
    if (arch < 0)
      continue;
    if (arch == device && img.cubin)
      out->push_back({&img, true});
    // Arch-specific code ("sm_90a") runs on exactly that architecture.
    if (arch == device || (!suffixed && arch < device))
      ptx.push_back({arch, &img});
  }
  std::stable_sort(ptx.begin(), ptx.end(), [](const Ptx &a, const Ptx &b) { return a.arch > b.arch; });
  for (const Ptx &p : ptx)
    out->push_back({p.image, false});
  if (!out->empty())
    return Status::ok();
  if (module.num_gpu_images == 0)
    return error(NNCC_ERROR_UNAVAILABLE,
                 "the module has no GPU code (it was compiled without a cuda target; compile "
                 "it with --target=cuda:sm_" + std::to_string(device) + ")");
  return error(NNCC_ERROR_UNAVAILABLE,
               format("the module has no GPU code this device (sm_%d) can run: it has %s, and "
                      "code for a newer architecture does not run on an older one",
                      device, have.c_str()));
}

} // namespace nncc::rt
