//===- Bandwidth.cpp - all-reduce bus bandwidth, as nccl-tests measures it ===//
#include "Bandwidth.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace nncc::info {

bool parseSizes(const std::string &text, std::vector<int64_t> *sizes, std::string *error) {
  sizes->clear();
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(begin, end - begin);
    char *rest = nullptr;
    long long value = item.empty() ? 0 : std::strtoll(item.c_str(), &rest, 10);
    int64_t scale = 1;
    std::string suffix = rest ? rest : "";
    if (suffix == "K" || suffix == "k")
      scale = int64_t(1) << 10;
    else if (suffix == "M" || suffix == "m")
      scale = int64_t(1) << 20;
    else if (suffix == "G" || suffix == "g")
      scale = int64_t(1) << 30;
    else if (!suffix.empty())
      value = 0;
    int64_t bytes = value * scale;
    if (value <= 0 || bytes % 4 != 0) {
      *error = "size '" + item + "' of --sizes '" + text +
               "': expected a positive number of bytes, a multiple of 4 (f32), with an optional "
               "K, M or G (powers of 1024)";
      return false;
    }
    sizes->push_back(bytes);
    begin = end + 1;
  }
  return true;
}

void bandwidthOf(int64_t bytes, double seconds, int ranks, double *algbw, double *busbw) {
  *algbw = seconds > 0 ? double(bytes) / seconds / 1e9 : 0;
  *busbw = *algbw * 2.0 * (ranks - 1) / ranks;
}

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool check(nncc_status s, const char *what, int64_t bytes, std::string *error) {
  if (s == NNCC_OK)
    return true;
  *error = std::string(what) + " of " + std::to_string(bytes) + " bytes failed: " + nncc_last_error();
  return false;
}

} // namespace

bool measureAllReduce(nncc_communicator *comm, const std::vector<int64_t> &sizes, int warmup,
                      int iters, std::vector<BandwidthRow> *rows, std::string *error) {
  int ranks = nncc_communicator_size(comm);
  rows->clear();
  for (int64_t bytes : sizes) {
    std::vector<float> data(size_t(bytes / 4), 1.0f);
    // A sum of ones stays exact far beyond any run's count, so the data
    // never turns into infinities or denormals that could slow a reduction.
    for (int i = 0; i < warmup; ++i)
      if (!check(nncc_communicator_all_reduce_f32(comm, data.data(), bytes / 4, 1), "warm-up all-reduce",
                 bytes, error))
        return false;
    if (!check(nncc_communicator_barrier(comm), "barrier before the all-reduces", bytes, error))
      return false;
    double start = now();
    for (int i = 0; i < iters; ++i)
      if (!check(nncc_communicator_all_reduce_f32(comm, data.data(), bytes / 4, 1), "all-reduce", bytes,
                 error))
        return false;
    // Every rank's own mean, averaged over the ranks: nccl-tests' time.
    float us = float((now() - start) / iters * 1e6);
    if (!check(nncc_communicator_all_reduce_f32(comm, &us, 1, 1), "averaging the times", bytes, error))
      return false;
    BandwidthRow row;
    row.bytes = bytes;
    row.us = us;
    bandwidthOf(bytes, us * 1e-6, ranks, &row.algbw, &row.busbw);
    rows->push_back(row);
  }
  return true;
}

bool measureLocalGpus(int gpus, const std::vector<int64_t> &sizes, int warmup, int iters,
                      std::vector<BandwidthRow> *rows, std::string *error, bool *unavailable) {
  rows->clear();
  *unavailable = false;
  std::vector<int32_t> devices(size_t(gpus), 0);
  for (int i = 0; i < gpus; ++i)
    devices[size_t(i)] = i;
  std::vector<nncc_communicator *> comms(size_t(gpus), nullptr);
  nncc_status created = nncc_communicator_create_nccl_local(devices.data(), gpus, comms.data());
  if (created != NNCC_OK) {
    *unavailable = created == NNCC_ERROR_UNAVAILABLE;
    *error = std::string("NCCL between ") + std::to_string(gpus) + " local GPUs: " + nncc_last_error();
    return false;
  }
  bool ok = true;
  for (int64_t bytes : sizes) {
    std::vector<double> seconds(size_t(gpus), 0);
    std::vector<std::string> errors(static_cast<size_t>(gpus));
    std::vector<std::thread> threads;
    // Every rank's all-reduces wait for the others': one thread each.
    for (int r = 0; r < gpus; ++r)
      threads.emplace_back([&, r] {
        if (nncc_communicator_time_all_reduce(comms[size_t(r)], bytes, warmup, iters, &seconds[size_t(r)]) !=
            NNCC_OK)
          errors[size_t(r)] = nncc_last_error();
      });
    for (std::thread &t : threads)
      t.join();
    double sum = 0;
    for (int r = 0; r < gpus && ok; ++r) {
      if (!errors[size_t(r)].empty()) {
        *error = "rank " + std::to_string(r) + ": all-reduce of " + std::to_string(bytes) +
                 " bytes failed: " + errors[size_t(r)];
        ok = false;
      }
      sum += seconds[size_t(r)];
    }
    if (!ok)
      break;
    BandwidthRow row;
    row.bytes = bytes;
    row.us = sum / gpus * 1e6;
    bandwidthOf(bytes, sum / gpus, gpus, &row.algbw, &row.busbw);
    rows->push_back(row);
  }
  for (nncc_communicator *c : comms)
    nncc_communicator_release(c);
  return ok;
}

std::string formatTable(const std::vector<BandwidthRow> &rows, const std::string &backend, int ranks,
                        int warmup, int iters) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "all-reduce (f32, sum, in place) over %s, %d ranks: %d warm-up and %d timed "
                "iterations per size, the mean time averaged over the ranks\n"
                "busbw = algbw * 2(n-1)/n = algbw * %.4g\n",
                backend.c_str(), ranks, warmup, iters, 2.0 * (ranks - 1) / ranks);
  std::string out = line;
  std::snprintf(line, sizeof(line), "%14s %12s %12s %12s %12s\n", "size(B)", "count", "time(us)",
                "algbw(GB/s)", "busbw(GB/s)");
  out += line;
  for (const BandwidthRow &r : rows) {
    std::snprintf(line, sizeof(line), "%14lld %12lld %12.1f %12.5g %12.5g\n", (long long)r.bytes,
                  (long long)(r.bytes / 4), r.us, r.algbw, r.busbw);
    out += line;
  }
  return out;
}

} // namespace nncc::info
