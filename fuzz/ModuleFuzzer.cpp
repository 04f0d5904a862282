/// libFuzzer entry point for the module loader's checks: the bounds-checked
/// walk of runtime/PlanChecksum.cpp, then (when every table lies inside the
/// module) runtime/ModuleVerifier.cpp's verifyPlan, over modules in memory.
///
/// A valid module using every part of the ABI (the table below) is flattened
/// once into an image: its tables back to back, each pointer stored as an
/// offset into the image plus a relocation; so is a pipeline-parallel
/// variant (below). An input is a byte choosing the module (even: the base,
/// odd: the pipeline variant), then a list of byte edits (u16 offset, u8
/// value) applied to a copy of its image; the relocations are
/// then applied, so an edited pointer points elsewhere in the image (or, for
/// an edited NULL, anywhere). The checksum is not compared: the verifier must
/// be safe on tables that pass the walk whatever their checksum, which is how
/// it can be fuzzed at all. Findings are crashes, sanitizer reports, leaks
/// and timeouts.
#include "ModuleVerifier.h"
#include "PlanChecksum.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

void kernel(void **, int64_t, int64_t) {}

// The base module: a CPU and a CUDA plan of two entries each (kernels, a
// GEMM with bias, a copy, a run-time check), two kernels with GPU launches,
// a GPU image with PTX and a cubin, embedded weights, a CPU level, a
// tensor-parallel layout with a collective step and a sharded state.
const int64_t xDims[] = {4, 8}, yDims[] = {4, 4}, vDims[] = {16};
const nncc_tensor_desc fwdIn[] = {{"x", NNCC_DTYPE_F32, 2, xDims}};
const nncc_tensor_desc fwdOut[] = {{"y", NNCC_DTYPE_F32, 2, yDims},
                                   {"y_copy", NNCC_DTYPE_F32, 2, yDims}};
const nncc_buffer_ref kernelArgs[] = {{NNCC_BUFFER_INPUT, 0, 0, 128},
                                      {NNCC_BUFFER_WEIGHT, 0, 0, 128},
                                      {NNCC_BUFFER_ARENA, 0, 0, 128},
                                      {NNCC_BUFFER_ARENA, 0, 256, 4}};
const nncc_buffer_ref gemmArgs[] = {{NNCC_BUFFER_ARENA, 0, 0, 128},
                                    {NNCC_BUFFER_WEIGHT, 1, 0, 128},
                                    {NNCC_BUFFER_OUTPUT, 0, 0, 64},
                                    {NNCC_BUFFER_WEIGHT, 1, 128, 16}};
const int64_t gemmI[] = {1, 4, 4, 8, 0, 0, 8, 4, 4, 0, 0, 0, NNCC_DTYPE_F32, NNCC_DTYPE_F32,
                         NNCC_DTYPE_F32, 0, 1};
const double gemmF[] = {1.0, 0.0};
const nncc_buffer_ref copyArgs[] = {{NNCC_BUFFER_OUTPUT, 0, 0, 64}, {NNCC_BUFFER_OUTPUT, 1, 0, 64}};
const nncc_step fwdSteps[] = {
    {NNCC_STEP_KERNEL, 0, 4, kernelArgs, 0, nullptr, 0, nullptr, 4, "Add_0"},
    {NNCC_STEP_GEMM, 0, 4, gemmArgs, 17, gemmI, 2, gemmF, 0, "Gemm_1"},
    {NNCC_STEP_COPY, 0, 2, copyArgs, 0, nullptr, 0, nullptr, 0, "Identity_2"}};
const nncc_check fwdChecks[] = {{"Gather_0: index out of range", 256}};
const nncc_tensor_desc dblIn[] = {{"a", NNCC_DTYPE_I32, 1, vDims}};
const nncc_tensor_desc dblOut[] = {{"b", NNCC_DTYPE_I32, 1, vDims}};
const nncc_buffer_ref dblArgs[] = {{NNCC_BUFFER_INPUT, 0, 0, 64}, {NNCC_BUFFER_OUTPUT, 0, 0, 64}};
const nncc_step dblSteps[] = {{NNCC_STEP_KERNEL, 1, 2, dblArgs, 0, nullptr, 0, nullptr, 16, ""}};
// A tensor-parallel all-reduce (the layout is dp=1 x tp=2) reading the
// sharded state 0, then an all-gather of that state, a reduce-scatter of
// the gathered bytes and a broadcast of the part, in the arena.
const nncc_tensor_desc sumOut[] = {{"s", NNCC_DTYPE_F32, 2, yDims}};
const nncc_buffer_ref sumArgs[] = {{NNCC_BUFFER_STATE, 0, 0, 64}, {NNCC_BUFFER_OUTPUT, 0, 0, 64}};
const int64_t sumI[] = {NNCC_COLLECTIVE_ALL_REDUCE, NNCC_REDUCTION_SUM, NNCC_DTYPE_F32, 2, NNCC_GROUP_TENSOR, -1};
const nncc_buffer_ref gatherArgs[] = {{NNCC_BUFFER_STATE, 0, 0, 64}, {NNCC_BUFFER_ARENA, 0, 0, 128}};
const int64_t gatherI[] = {NNCC_COLLECTIVE_ALL_GATHER, 0, 0, 2, NNCC_GROUP_TENSOR, -1};
const nncc_buffer_ref scatterArgs[] = {{NNCC_BUFFER_ARENA, 0, 0, 128}, {NNCC_BUFFER_ARENA, 0, 128, 64}};
const int64_t scatterI[] = {NNCC_COLLECTIVE_REDUCE_SCATTER, NNCC_REDUCTION_MEAN, NNCC_DTYPE_F32, 2,
                            NNCC_GROUP_TENSOR, -1};
const nncc_buffer_ref broadcastArgs[] = {{NNCC_BUFFER_ARENA, 0, 128, 64}, {NNCC_BUFFER_ARENA, 0, 192, 64}};
const int64_t broadcastI[] = {NNCC_COLLECTIVE_BROADCAST, 0, 0, 2, NNCC_GROUP_TENSOR, 1};
const nncc_step sumSteps[] = {
    {NNCC_STEP_COLLECTIVE, 0, 2, sumArgs, 6, sumI, 0, nullptr, 0, "tensor_sum"},
    {NNCC_STEP_COLLECTIVE, 0, 2, gatherArgs, 6, gatherI, 0, nullptr, 0, "gather"},
    {NNCC_STEP_COLLECTIVE, 0, 2, scatterArgs, 6, scatterI, 0, nullptr, 0, "scatter"},
    {NNCC_STEP_COLLECTIVE, 0, 2, broadcastArgs, 6, broadcastI, 0, nullptr, 0, "broadcast"}};
const nncc_entry entries[] = {
    {"forward", 1, fwdIn, 2, fwdOut, 320, 3, fwdSteps, 1, fwdChecks, 0},
    {"double_it", 1, dblIn, 1, dblOut, 0, 1, dblSteps, 0, nullptr, 0},
    {"reduce", 0, nullptr, 1, sumOut, 256, 4, sumSteps, 0, nullptr, 0}};
const nncc_plan plans[] = {{NNCC_DEVICE_CPU, 3, entries}, {NNCC_DEVICE_CUDA, 3, entries}};
// State 0: f32[4, 4], one of 2 parts along axis 1 of weight "w" (f32[4, 8]);
// state 1: zero-filled.
const int64_t partDims[] = {4, 4};
const nncc_state states[] = {{"w_part", NNCC_DTYPE_F32, 2, partDims, 64, 0, 2, 1, 0, 0},
                             {"moment", NNCC_DTYPE_F32, 1, vDims, 64, -1, 0, 0, 0, 0}};
const nncc_gpu_launch launches0[] = {{"add", {4, 1, 1}, {32, 1, 1}, 0},
                                     {"flag", {1, 1, 1}, {1, 1, 1}, 0}};
const nncc_gpu_launch launches1[] = {{"dbl", {1, 1, 1}, {16, 1, 1}, 0}};
const nncc_kernel kernels[] = {{"add", kernel, 2, launches0}, {"dbl", kernel, 1, launches1}};
const nncc_weight weights[] = {{"w", 0, 128}, {"g", 128, 144}};
alignas(64) const uint8_t blob[272] = {1, 2, 3};
const uint8_t cubin[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
const nncc_gpu_image images[] = {
    {"sm_90", ".version 8.0\n.target sm_90\n.entry add() { ret; }\n", cubin, sizeof(cubin)}};
const nncc_module base = {NNCC_MODULE_MAGIC, NNCC_MODULE_ABI_VERSION, sizeof(nncc_module),
                          "nncc fuzz", 2, plans, 2, kernels, 2, weights, blob, nullptr,
                          sizeof(blob), 0, 1, images, "x86-64-v3", "avx,avx2,fma", 0,
                          /*num_states=*/2, states, /*data_parallel=*/1, /*tensor_parallel=*/2,
                          /*pipeline_parallel=*/1};

// The pipeline variant: dp=1 x pp=2, entry "pipe" once per stage (stage 0
// sends the 64 bytes of the state every stage holds and receives an answer
// in the arena, stage 1 the other way round sending its own state, both
// copying it out), a state of stage 1 and one every stage updates. (A
// stage's plan may touch only its own states and every stage's.)
const nncc_tensor_desc pipeOut[] = {{"y", NNCC_DTYPE_F32, 1, vDims}};
const nncc_buffer_ref sendShared[] = {{NNCC_BUFFER_STATE, 1, 0, 64}};
const nncc_buffer_ref sendOwn[] = {{NNCC_BUFFER_STATE, 0, 0, 64}};
const nncc_buffer_ref recvArena[] = {{NNCC_BUFFER_ARENA, 0, 0, 64}};
const nncc_buffer_ref pipeCopy[] = {{NNCC_BUFFER_ARENA, 0, 0, 64}, {NNCC_BUFFER_OUTPUT, 0, 0, 64}};
const int64_t to1[] = {NNCC_COLLECTIVE_SEND, 0, 0, 2, NNCC_GROUP_PIPELINE, 1};
const int64_t from1[] = {NNCC_COLLECTIVE_RECV, 0, 0, 2, NNCC_GROUP_PIPELINE, 1};
const int64_t to0[] = {NNCC_COLLECTIVE_SEND, 0, 0, 2, NNCC_GROUP_PIPELINE, 0};
const int64_t from0[] = {NNCC_COLLECTIVE_RECV, 0, 0, 2, NNCC_GROUP_PIPELINE, 0};
const nncc_step stage0[] = {{NNCC_STEP_COLLECTIVE, 0, 1, sendShared, 6, to1, 0, nullptr, 0, "send"},
                            {NNCC_STEP_COLLECTIVE, 0, 1, recvArena, 6, from1, 0, nullptr, 0, "recv"},
                            {NNCC_STEP_COPY, 0, 2, pipeCopy, 0, nullptr, 0, nullptr, 0, "out"}};
const nncc_step stage1[] = {{NNCC_STEP_COLLECTIVE, 0, 1, recvArena, 6, from0, 0, nullptr, 0, "recv"},
                            {NNCC_STEP_COLLECTIVE, 0, 1, sendOwn, 6, to0, 0, nullptr, 0, "send"},
                            {NNCC_STEP_COPY, 0, 2, pipeCopy, 0, nullptr, 0, nullptr, 0, "out"}};
const nncc_entry pipeEntries[] = {{"pipe", 0, nullptr, 1, pipeOut, 64, 3, stage0, 0, nullptr, 0},
                                  {"pipe", 0, nullptr, 1, pipeOut, 64, 3, stage1, 0, nullptr, 1}};
const nncc_plan pipePlans[] = {{NNCC_DEVICE_CPU, 2, pipeEntries}};
const nncc_state pipeStates[] = {{"w", NNCC_DTYPE_F32, 1, vDims, 64, -1, 0, 0, 0, 1},
                                 {"step", NNCC_DTYPE_F32, 1, vDims, 64, -1, 0, 0, 0, -1}};
const nncc_module pipelined = {NNCC_MODULE_MAGIC, NNCC_MODULE_ABI_VERSION, sizeof(nncc_module),
                               "nncc fuzz pipeline", 1, pipePlans, 0, nullptr, 0, nullptr, nullptr, nullptr,
                               0, 0, 0, nullptr, "", "", 0,
                               /*num_states=*/2, pipeStates, /*data_parallel=*/1, /*tensor_parallel=*/1,
                               /*pipeline_parallel=*/2};

/// The flattened module: bytes, and the offsets of its pointer slots.
struct Image {
  std::vector<uint8_t> bytes;
  std::vector<size_t> relocs;

  size_t append(const void *p, size_t n) {
    bytes.resize((bytes.size() + 63) / 64 * 64);
    size_t at = bytes.size();
    bytes.insert(bytes.end(), static_cast<const uint8_t *>(p),
                 static_cast<const uint8_t *>(p) + n);
    return at;
  }
  /// Stores the image offset `target` in the pointer slot at `slot`.
  void point(size_t slot, size_t target) {
    uint64_t v = target;
    std::memcpy(&bytes[slot], &v, sizeof(v));
    relocs.push_back(slot);
  }
  /// Copies the table a pointer field points to and points the slot at it.
  template <typename T> size_t table(size_t slot, const T *p, size_t count) {
    if (!p)
      return 0;
    size_t at = append(p, count * sizeof(T));
    point(slot, at);
    return at;
  }
  void string(size_t slot, const char *s) {
    if (s)
      point(slot, append(s, std::strlen(s) + 1));
  }
};

#define SLOT(base, T, i, field) ((base) + (i) * sizeof(T) + offsetof(T, field))

void flattenDescs(Image &img, size_t slot, const nncc_tensor_desc *d, int32_t n) {
  size_t at = img.table(slot, d, static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    img.string(SLOT(at, nncc_tensor_desc, i, name), d[i].name);
    img.table(SLOT(at, nncc_tensor_desc, i, dims), d[i].dims, static_cast<size_t>(d[i].rank));
  }
}

/// Each plan gets its own copy of its entries, so mutations differ per plan.
void flattenEntries(Image &img, size_t slot, const nncc_plan &plan) {
  size_t es = img.table(slot, plan.entries, plan.num_entries);
  for (int32_t e = 0; e < plan.num_entries; ++e) {
    const nncc_entry &en = plan.entries[e];
    img.string(SLOT(es, nncc_entry, e, name), en.name);
    flattenDescs(img, SLOT(es, nncc_entry, e, inputs), en.inputs, en.num_inputs);
    flattenDescs(img, SLOT(es, nncc_entry, e, outputs), en.outputs, en.num_outputs);
    size_t ss = img.table(SLOT(es, nncc_entry, e, steps), en.steps, en.num_steps);
    for (int32_t s = 0; s < en.num_steps; ++s) {
      const nncc_step &st = en.steps[s];
      img.table(SLOT(ss, nncc_step, s, args), st.args, st.num_args);
      img.table(SLOT(ss, nncc_step, s, iparams), st.iparams, st.num_iparams);
      img.table(SLOT(ss, nncc_step, s, fparams), st.fparams, st.num_fparams);
      img.string(SLOT(ss, nncc_step, s, name), st.name);
    }
    size_t cs = img.table(SLOT(es, nncc_entry, e, checks), en.checks, en.num_checks);
    for (int32_t c = 0; c < en.num_checks; ++c)
      img.string(SLOT(cs, nncc_check, c, message), en.checks[c].message);
  }
}

Image flatten(const nncc_module &m) {
  Image img;
  img.append(&m, sizeof(m));
  img.string(offsetof(nncc_module, producer), m.producer);
  size_t ps = img.table(offsetof(nncc_module, plans), m.plans, m.num_plans);
  for (int32_t p = 0; p < m.num_plans; ++p)
    flattenEntries(img, SLOT(ps, nncc_plan, p, entries), m.plans[p]);
  size_t ks = img.table(offsetof(nncc_module, kernels), m.kernels, m.num_kernels);
  for (int32_t k = 0; k < m.num_kernels; ++k) {
    const nncc_kernel &kn = m.kernels[k];
    img.string(SLOT(ks, nncc_kernel, k, name), kn.name);
    if (kn.cpu)
      img.point(SLOT(ks, nncc_kernel, k, cpu), 0); // never called; the image counts as code
    size_t ls = img.table(SLOT(ks, nncc_kernel, k, gpu_launches), kn.gpu_launches,
                          kn.num_gpu_launches);
    for (int32_t l = 0; l < kn.num_gpu_launches; ++l)
      img.string(SLOT(ls, nncc_gpu_launch, l, function), kn.gpu_launches[l].function);
  }
  size_t ws = img.table(offsetof(nncc_module, weights), m.weights, m.num_weights);
  for (int32_t w = 0; w < m.num_weights; ++w)
    img.string(SLOT(ws, nncc_weight, w, name), m.weights[w].name);
  img.table(offsetof(nncc_module, weights_data), m.weights_data, m.weights_bytes);
  img.string(offsetof(nncc_module, weights_file), m.weights_file);
  size_t is = img.table(offsetof(nncc_module, gpu_images), m.gpu_images, m.num_gpu_images);
  for (int32_t i = 0; i < m.num_gpu_images; ++i) {
    img.string(SLOT(is, nncc_gpu_image, i, arch), m.gpu_images[i].arch);
    img.string(SLOT(is, nncc_gpu_image, i, ptx), m.gpu_images[i].ptx);
    img.table(SLOT(is, nncc_gpu_image, i, cubin), m.gpu_images[i].cubin,
              m.gpu_images[i].cubin_bytes);
  }
  img.string(offsetof(nncc_module, cpu_name), m.cpu_name);
  img.string(offsetof(nncc_module, cpu_features), m.cpu_features);
  size_t ss = img.table(offsetof(nncc_module, states), m.states, m.num_states);
  for (int32_t i = 0; i < m.num_states; ++i) {
    img.string(SLOT(ss, nncc_state, i, name), m.states[i].name);
    img.table(SLOT(ss, nncc_state, i, dims), m.states[i].dims, static_cast<size_t>(m.states[i].rank));
  }
  return img;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const Image images[] = {flatten(base), flatten(pipelined)};
  if (size == 0)
    return 0;
  const Image &image = images[data[0] & 1];
  ++data, --size;
  // Exactly the image's size, so that reads past it are ASan reports.
  std::vector<uint8_t> bytes(image.bytes);
  for (size_t i = 0; i + 3 <= size; i += 3)
    bytes[(data[i] | size_t(data[i + 1]) << 8) % bytes.size()] = data[i + 2];
  auto start = reinterpret_cast<uintptr_t>(bytes.data());
  for (size_t slot : image.relocs) {
    uint64_t v;
    std::memcpy(&v, &bytes[slot], sizeof(v));
    v += start;
    std::memcpy(&bytes[slot], &v, sizeof(v));
  }
  nncc::rt::ModuleMemory memory;
  memory.add(bytes.data(), bytes.size(), /*executable=*/true);
  const auto &m = *reinterpret_cast<const nncc_module *>(bytes.data());
  uint64_t sum = 0;
  nncc::rt::Status verified = nncc::rt::planChecksum(m, memory, &sum);
  nncc::rt::VerifiedPlan plan;
  if (verified.isOk())
    verified = nncc::rt::verifyPlan(m, &plan);
  // The unedited base must verify, or every input would only explore
  // rejections.
  if (size < 3 && !verified.isOk()) {
    std::fprintf(stderr, "the fuzzer's base module does not verify: %s\n", verified.message().c_str());
    std::abort();
  }
  return 0;
}
