#include "Checkpoint.h"

#include "AtomicFile.h"
#include "DType.h"

#include "nncc/plan_hash.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace nncc::rt {
namespace {

constexpr char kMagic[8] = {'N', 'N', 'C', 'C', 'C', 'K', 'P', '1'};
constexpr uint32_t kVersion = 1;

uint64_t fnv(const uint8_t *p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

template <typename T> void put(std::vector<uint8_t> &out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T)); // x86-64 and aarch64 are little-endian
  out.insert(out.end(), b, b + sizeof(T));
}

/// A bounds-checked reader of the checkpoint's bytes.
struct Reader {
  const std::vector<uint8_t> &bytes;
  size_t at = 0;
  bool failed = false;
  template <typename T> T get() {
    T v{};
    if (failed || bytes.size() - at < sizeof(T)) {
      failed = true;
      return v;
    }
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  const uint8_t *take(uint64_t n) {
    if (failed || bytes.size() - at < n) {
      failed = true;
      return nullptr;
    }
    const uint8_t *p = bytes.data() + at;
    at += n;
    return p;
  }
};

/// A state the module's layout fixes (module_abi.h): no part of a checkpoint.
bool isLayoutState(const char *name) {
  return std::strncmp(name, NNCC_LAYOUT_STATE_PREFIX, sizeof(NNCC_LAYOUT_STATE_PREFIX) - 1) == 0;
}

} // namespace

Status saveCheckpoint(Session &session, const char *path) {
  if (!path)
    return error(NNCC_ERROR_INVALID_ARGUMENT, "checkpoint path must not be NULL");
  const nncc_module &m = session.module().abi();
  std::vector<uint8_t> out(kMagic, kMagic + 8);
  put<uint32_t>(out, kVersion);
  uint32_t saved = 0;
  for (int32_t i = 0; i < m.num_states; ++i)
    saved += !isLayoutState(m.states[i].name);
  put<uint32_t>(out, saved);
  // Whole tensors (a sharded state gathered from its tensor group), so the
  // file loads at any layout; every rank of a tensor group must call it.
  // States fixed by the layout are not the model's: left out.
  for (int32_t i = 0; i < m.num_states; ++i) {
    if (isLayoutState(m.states[i].name))
      continue;
    const nncc_tensor_desc &st = session.module().stateDesc(i);
    int64_t stBytes = session.module().stateBytes(i);
    put<uint32_t>(out, static_cast<uint32_t>(std::strlen(st.name)));
    out.insert(out.end(), st.name, st.name + std::strlen(st.name));
    put<int32_t>(out, st.dtype);
    put<int32_t>(out, st.rank);
    for (int32_t d = 0; d < st.rank; ++d)
      put<int64_t>(out, st.dims[d]);
    put<int64_t>(out, stBytes);
    size_t at = out.size();
    out.resize(at + static_cast<size_t>(stBytes));
    NNCC_RETURN_IF_ERROR(session.readState(st.name, out.data() + at, stBytes));
  }
  put<uint64_t>(out, fnv(out.data(), out.size()));
  return writeFileAtomically(path, out, "the checkpoint");
}

Status loadCheckpoint(Session &session, const char *path) {
  if (!path)
    return error(NNCC_ERROR_INVALID_ARGUMENT, "checkpoint path must not be NULL");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return error(NNCC_ERROR_NOT_FOUND, format("%s: cannot open the checkpoint", path));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto corrupt = [&](const std::string &why) {
    return error(NNCC_ERROR_INVALID_ARGUMENT, std::string(path) + ": not a valid nncc checkpoint: " + why);
  };
  if (bytes.size() < 24 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    return corrupt("no NNCCCKP1 magic");
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (fnv(bytes.data(), bytes.size() - 8) != stored)
    return corrupt("checksum mismatch (truncated or damaged)");
  Reader r{bytes, 8};
  uint32_t version = r.get<uint32_t>(), count = r.get<uint32_t>();
  if (version != kVersion)
    return corrupt(format("version %u (this runtime reads %u)", version, kVersion));
  const nncc_module &m = session.module().abi();
  struct Entry {
    std::string name;
    const uint8_t *data;
    int64_t bytes;
  };
  std::vector<Entry> entries;
  std::set<std::string> seen;
  for (uint32_t i = 0; i < count && !r.failed; ++i) {
    uint32_t length = r.get<uint32_t>();
    const uint8_t *name = r.take(length);
    int32_t dtype = r.get<int32_t>(), rank = r.get<int32_t>();
    if (r.failed || rank < 0 || rank > 64)
      return corrupt("bad state record");
    std::vector<int64_t> dims;
    for (int32_t d = 0; d < rank; ++d)
      dims.push_back(r.get<int64_t>());
    int64_t n = r.get<int64_t>();
    const uint8_t *data = n >= 0 ? r.take(static_cast<uint64_t>(n)) : nullptr;
    if (r.failed || !data)
      return corrupt("bad state record");
    std::string s(reinterpret_cast<const char *>(name), length);
    int32_t index = session.module().findState(s.c_str());
    std::string saved = typeString(dtype, rank, dims.data());
    if (index < 0)
      return error(NNCC_ERROR_INVALID_ARGUMENT,
                   format("%s: the checkpoint belongs to another model: it holds state '%s' (%s), which "
                          "module '%s' does not have (its states: %s)",
                          path, s.c_str(), saved.c_str(), session.module().path().c_str(),
                          session.module().stateNames().c_str()));
    const nncc_tensor_desc &st = session.module().stateDesc(index);
    std::string want = typeString(st.dtype, st.rank, st.dims);
    if (saved != want || n != session.module().stateBytes(index))
      return error(NNCC_ERROR_INVALID_ARGUMENT,
                   format("%s: the checkpoint belongs to another model: its state '%s' is %s, module "
                          "'%s' has %s",
                          path, s.c_str(), saved.c_str(), session.module().path().c_str(), want.c_str()));
    seen.insert(s);
    entries.push_back({s, data, n});
  }
  if (r.failed || r.at != bytes.size() - 8)
    return corrupt("bad state records");
  for (int32_t i = 0; i < m.num_states; ++i)
    if (!seen.count(m.states[i].name) && !isLayoutState(m.states[i].name))
      return error(NNCC_ERROR_INVALID_ARGUMENT,
                   format("%s: the checkpoint belongs to another model: it lacks state '%s' of module '%s'",
                          path, m.states[i].name, session.module().path().c_str()));
  for (const Entry &e : entries)
    NNCC_RETURN_IF_ERROR(session.writeState(e.name.c_str(), e.data, e.bytes));
  return Status::ok();
}

} // namespace nncc::rt
