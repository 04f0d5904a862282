//===- ModuleVerifier.cpp - check a module's tables before running them ---===//
//
// The executor trusts the plan: every buffer reference is in bounds, every
// index valid, every GEMM's operands fit their buffers. This file establishes
// that once, at load, so a compiler bug or a corrupt module is a clear error
// naming the entry and step instead of a wild write at run time.
//
//===----------------------------------------------------------------------===//
#include "DType.h"
#include "Module.h"

#include <climits>
#include <cstring>
#include <set>

namespace nncc::rt {

namespace {

constexpr int32_t kMaxRank = 64;

bool validCount(int32_t n, const void *p) { return n >= 0 && (n == 0 || p != nullptr); }

Status invalid(const std::string &msg) { return error(NNCC_ERROR_INVALID_MODULE, msg); }

/// Verifies one signature tensor and returns its byte size.
Status verifyDesc(const std::string &where, const nncc_tensor_desc &d, int64_t *bytes) {
  if (!d.name)
    return invalid(where + " has no name");
  std::string w = where + " '" + d.name + "'";
  if (dtypeSize(d.dtype) == 0)
    return invalid(w + " has unknown dtype " + std::to_string(d.dtype));
  if (d.rank < 0 || d.rank > kMaxRank || (d.rank > 0 && !d.dims))
    return invalid(w + " has invalid rank " + std::to_string(d.rank));
  if (!byteSize(d.dtype, d.rank, d.dims, bytes))
    return invalid(w + " has an invalid shape " + typeString(d.dtype, d.rank, d.dims));
  return Status::ok();
}

Status verifyDescs(const std::string &where, int32_t n, const nncc_tensor_desc *descs,
                   std::vector<int64_t> *bytes) {
  std::set<std::string> names;
  bytes->resize(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    NNCC_RETURN_IF_ERROR(verifyDesc(where, descs[i], &(*bytes)[i]));
    if (!names.insert(descs[i].name).second)
      return invalid(where + " '" + descs[i].name + "' appears twice");
  }
  return Status::ok();
}

/// Elements a strided matrix operand spans: rows x cols with leading
/// dimension ld, `batch` times `stride` apart. False on overflow.
bool matrixSpan(int64_t batch, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                int64_t *out) {
  if (batch == 0 || rows == 0 || cols == 0) {
    *out = 0;
    return true;
  }
  int64_t a, b, c;
  if (__builtin_mul_overflow(batch - 1, stride, &a) || __builtin_mul_overflow(rows - 1, ld, &b) ||
      __builtin_add_overflow(a, b, &c) || __builtin_add_overflow(c, cols, out))
    return false;
  return true;
}

} // namespace

Status Module::verify() {
  const nncc_module &m = *abi_;
  if (!validCount(m.num_entries, m.entries) || !validCount(m.num_kernels, m.kernels) ||
      !validCount(m.num_weights, m.weights))
    return invalid("invalid entry, kernel or weight table");
  if (m.weights_bytes < 0)
    return invalid("negative weights_bytes");

  for (int32_t k = 0; k < m.num_kernels; ++k)
    if (!m.kernels[k].name)
      return invalid("kernel " + std::to_string(k) + " has no name");
  for (int32_t w = 0; w < m.num_weights; ++w) {
    const nncc_weight &wt = m.weights[w];
    std::string name = wt.name ? wt.name : "#" + std::to_string(w);
    if (wt.offset < 0 || wt.bytes < 0 || wt.offset > m.weights_bytes ||
        wt.bytes > m.weights_bytes - wt.offset)
      return invalid(format("weight '%s' (offset %lld, %lld bytes) lies outside the %lld-byte "
                            "weight blob",
                            name.c_str(), static_cast<long long>(wt.offset),
                            static_cast<long long>(wt.bytes),
                            static_cast<long long>(m.weights_bytes)));
  }

  std::set<std::string> entryNames;
  ioBytes_.resize(static_cast<size_t>(m.num_entries));
  for (int32_t e = 0; e < m.num_entries; ++e) {
    const nncc_entry &entry = m.entries[e];
    if (!entry.name)
      return invalid("entry " + std::to_string(e) + " has no name");
    std::string en = "entry '" + std::string(entry.name) + "'";
    if (!entryNames.insert(entry.name).second)
      return invalid(en + " appears twice");
    if (!validCount(entry.num_inputs, entry.inputs) ||
        !validCount(entry.num_outputs, entry.outputs) ||
        !validCount(entry.num_steps, entry.steps) || entry.arena_bytes < 0)
      return invalid(en + " has invalid tables or arena size");
    IOBytes &io = ioBytes_[e];
    NNCC_RETURN_IF_ERROR(verifyDescs(en + " input", entry.num_inputs, entry.inputs, &io.inputs));
    NNCC_RETURN_IF_ERROR(
        verifyDescs(en + " output", entry.num_outputs, entry.outputs, &io.outputs));
    if (entry.arena_bytes > maxArenaBytes_)
      maxArenaBytes_ = entry.arena_bytes;

    for (int32_t s = 0; s < entry.num_steps; ++s) {
      const nncc_step &st = entry.steps[s];
      std::string where = en + " step " + std::to_string(s);
      if (st.name)
        where += " ('" + std::string(st.name) + "')";
      where += ": ";
      if (!validCount(st.num_args, st.args) || !validCount(st.num_iparams, st.iparams) ||
          !validCount(st.num_fparams, st.fparams))
        return invalid(where + "invalid argument or parameter table");

      for (int32_t a = 0; a < st.num_args; ++a) {
        const nncc_buffer_ref &r = st.args[a];
        std::string wa = where + "arg " + std::to_string(a) + ": ";
        int64_t size;
        switch (r.kind) {
        case NNCC_BUFFER_ARENA:
          size = entry.arena_bytes;
          break;
        case NNCC_BUFFER_INPUT:
          if (r.index < 0 || r.index >= entry.num_inputs)
            return invalid(wa + format("input index %d out of range (entry has %d inputs)",
                                       r.index, entry.num_inputs));
          size = io.inputs[r.index];
          break;
        case NNCC_BUFFER_OUTPUT:
          if (r.index < 0 || r.index >= entry.num_outputs)
            return invalid(wa + format("output index %d out of range (entry has %d outputs)",
                                       r.index, entry.num_outputs));
          size = io.outputs[r.index];
          break;
        case NNCC_BUFFER_WEIGHT:
          if (r.index < 0 || r.index >= m.num_weights)
            return invalid(wa + format("weight index %d out of range (module has %d weights)",
                                       r.index, m.num_weights));
          size = m.weights[r.index].bytes;
          break;
        case NNCC_BUFFER_STATE:
          return error(NNCC_ERROR_UNSUPPORTED,
                       wa + "module state buffers are not supported by this runtime");
        default:
          return invalid(wa + "unknown buffer kind " + std::to_string(r.kind));
        }
        if (r.offset < 0 || r.bytes < 0 || r.offset > size || r.bytes > size - r.offset)
          return invalid(wa + format("region [%lld, %lld) lies outside its %lld-byte buffer",
                                     static_cast<long long>(r.offset),
                                     static_cast<long long>(r.offset) +
                                         static_cast<long long>(r.bytes),
                                     static_cast<long long>(size)));
      }

      // Operands a step writes must not be inputs (caller memory we promised
      // to only read) or weights (shared, possibly a read-only mapping).
      auto writable = [&](int32_t a) -> Status {
        int32_t kind = st.args[a].kind;
        if (kind == NNCC_BUFFER_INPUT || kind == NNCC_BUFFER_WEIGHT)
          return invalid(where + "arg " + std::to_string(a) +
                         " is written but refers to an input or a weight");
        return Status::ok();
      };

      switch (st.kind) {
      case NNCC_STEP_KERNEL:
        if (st.kernel < 0 || st.kernel >= m.num_kernels)
          return invalid(where + format("kernel index %d out of range (module has %d kernels)",
                                        st.kernel, m.num_kernels));
        if (st.parallel_extent < 0)
          return invalid(where + "negative parallel extent");
        break;
      case NNCC_STEP_GEMM: {
        if (st.num_args != 3 || st.num_iparams < 12 || st.num_fparams < 2)
          return invalid(where + "a GEMM needs 3 args, 12 integer and 2 float parameters");
        NNCC_RETURN_IF_ERROR(writable(2));
        const int64_t *p = st.iparams;
        int64_t batch = p[0], M = p[1], N = p[2], K = p[3], ta = p[4], tb = p[5];
        int64_t lda = p[6], ldb = p[7], ldc = p[8], sa = p[9], sb = p[10], sc = p[11];
        if (batch < 0 || M < 0 || N < 0 || K < 0 || M > INT_MAX || N > INT_MAX || K > INT_MAX)
          return invalid(where + "GEMM sizes out of range");
        if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
          return invalid(where + "GEMM transpose flags must be 0 or 1");
        if (sa < 0 || sb < 0 || sc < 0)
          return invalid(where + "negative GEMM stride");
        // Row-major: op(A) is MxK, stored MxK (ld >= K) or KxM (ld >= M).
        int64_t aRows = ta ? K : M, aCols = ta ? M : K;
        int64_t bRows = tb ? N : K, bCols = tb ? K : N;
        auto ldOk = [](int64_t ld, int64_t cols) {
          return ld >= (cols > 1 ? cols : 1) && ld <= INT_MAX;
        };
        if (!ldOk(lda, aCols) || !ldOk(ldb, bCols) || !ldOk(ldc, N))
          return invalid(where + format("GEMM leading dimensions lda=%lld ldb=%lld ldc=%lld too "
                                        "small for M=%lld N=%lld K=%lld",
                                        (long long)lda, (long long)ldb, (long long)ldc,
                                        (long long)M, (long long)N, (long long)K));
        const int64_t spans[3][5] = {{batch, aRows, aCols, lda, sa},
                                     {batch, bRows, bCols, ldb, sb},
                                     {batch, M, N, ldc, sc}};
        for (int a = 0; a < 3; ++a) {
          int64_t elems, bytes;
          if (!matrixSpan(spans[a][0], spans[a][1], spans[a][2], spans[a][3], spans[a][4],
                          &elems) ||
              __builtin_mul_overflow(elems, int64_t(4), &bytes) || bytes > st.args[a].bytes)
            return invalid(where + format("GEMM operand %c spans more than its %lld-byte region",
                                          "ABC"[a], static_cast<long long>(st.args[a].bytes)));
        }
        break;
      }
      case NNCC_STEP_COPY:
        if (st.num_args != 2)
          return invalid(where + "a copy needs 2 args");
        NNCC_RETURN_IF_ERROR(writable(1));
        if (st.args[0].bytes < st.args[1].bytes)
          return invalid(where + "copy source is smaller than its destination");
        break;
      case NNCC_STEP_COLLECTIVE:
        return error(NNCC_ERROR_UNSUPPORTED,
                     where + "collective steps are not supported by this runtime");
      default:
        return invalid(where + "unknown step kind " + std::to_string(st.kind));
      }
    }
  }
  return Status::ok();
}

} // namespace nncc::rt
