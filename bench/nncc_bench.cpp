// nncc side of the benchmark: one long-lived process per model, driven over stdin by
// bench/bench.py so that its blocks of runs interleave with onnxruntime's (bench/ort_bench.js
// speaks the same protocol).
//
//   nncc_bench model.so INPUT_DIR [--threads T]
//
// INPUT_DIR/input_K.bin: raw little-endian f32, the K-th input of the entry in signature order.
// Outputs are preallocated once (Tensor::empty) and written in place by every run.
//
// Protocol (one command per line; every reply is one line):
//   run N      -> "times t1 t2 ... tN"     (milliseconds, one Session::run each)
//   save DIR   -> "saved"                  (writes DIR/output_K.bin from the last run)
//   mem        -> "mem rss_kb=R hwm_kb=H"  (/proc/self/status VmRSS, VmHWM)
//   quit
// At start-up it prints "ready base_hwm_kb=B load_ms=L session_ms=S arena_bytes=A", where B is
// the peak RSS before the module is loaded (the harness's own footprint, inputs included).
#include "nncc/runtime.hpp"

#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

long statusKb(const char *key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  size_t n = std::strlen(key);
  while (std::getline(f, line))
    if (line.compare(0, n, key) == 0 && line.size() > n && line[n] == ':')
      return std::stol(line.substr(n + 1));
  return -1;
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<char> readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw std::runtime_error("cannot open " + path);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: nncc_bench model.so INPUT_DIR [--threads T]\n");
    return 2;
  }
  std::string modelPath = argv[1], inputDir = argv[2];
  int threads = 1;
  for (int i = 3; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--threads")
      threads = std::stoi(argv[++i]);
  try {
    // Inputs first, so that the baseline includes them (as it does for the Node harness).
    std::vector<std::vector<char>> inputData;
    for (int k = 0;; ++k) {
      std::string p = inputDir + "/input_" + std::to_string(k) + ".bin";
      if (!std::ifstream(p))
        break;
      inputData.push_back(readFile(p));
    }
    long baseHwm = statusKb("VmHWM");

    auto t0 = std::chrono::steady_clock::now();
    nncc::Module mod = nncc::Module::load(modelPath);
    double loadMs = msSince(t0);
    t0 = std::chrono::steady_clock::now();
    nncc::SessionOptions opts;
    opts.threads = threads;
    nncc::Session session(mod, nncc::Device::cpu(), opts);
    double sessionMs = msSince(t0);

    std::vector<nncc::EntryInfo> entries = mod.entries();
    const nncc::EntryInfo *entry = &entries.front();
    for (const nncc::EntryInfo &e : entries)
      if (e.name == "forward")
        entry = &e;
    if (entry->inputs.size() != inputData.size())
      throw std::runtime_error("entry '" + entry->name + "' has " +
                               std::to_string(entry->inputs.size()) + " inputs, found " +
                               std::to_string(inputData.size()) + " input_K.bin files");
    nncc::TensorMap inputs, outputs;
    for (size_t k = 0; k < entry->inputs.size(); ++k) {
      const nncc::TensorInfo &t = entry->inputs[k];
      size_t bytes = static_cast<size_t>(t.numel()) * nncc::dtypeSize(t.dtype);
      if (inputData[k].size() != bytes)
        throw std::runtime_error("input '" + t.name + "' (" + t.typeString() + ") needs " +
                                 std::to_string(bytes) + " bytes, file has " +
                                 std::to_string(inputData[k].size()));
      inputs[t.name] = nncc::Tensor::wrap(inputData[k].data(), t.dtype, t.dims);
    }
    for (const nncc::TensorInfo &t : entry->outputs)
      outputs[t.name] = nncc::Tensor::empty(t.dtype, t.dims);

    std::printf("ready base_hwm_kb=%ld load_ms=%.3f session_ms=%.3f arena_bytes=%lld\n", baseHwm,
                loadMs, sessionMs, static_cast<long long>(session.allocatedBytes()));
    std::fflush(stdout);

    std::string line;
    while (std::getline(std::cin, line)) {
      std::istringstream in(line);
      std::string cmd;
      in >> cmd;
      if (cmd == "run") {
        int n = 1;
        in >> n;
        std::vector<double> times;
        times.reserve(n);
        for (int i = 0; i < n; ++i) {
          auto s = std::chrono::steady_clock::now();
          session.run(entry->name, inputs, outputs);
          times.push_back(msSince(s));
        }
        std::printf("times");
        for (double t : times)
          std::printf(" %.6f", t);
        std::printf("\n");
      } else if (cmd == "save") {
        std::string dir;
        in >> dir;
        for (size_t k = 0; k < entry->outputs.size(); ++k) {
          const nncc::Tensor &t = outputs.at(entry->outputs[k].name);
          std::ofstream f(dir + "/output_" + std::to_string(k) + ".bin", std::ios::binary);
          f.write(static_cast<const char *>(t.data()), static_cast<std::streamsize>(t.bytes()));
        }
        std::printf("saved\n");
      } else if (cmd == "mem") {
        std::printf("mem rss_kb=%ld hwm_kb=%ld\n", statusKb("VmRSS"), statusKb("VmHWM"));
      } else if (cmd == "quit") {
        break;
      } else if (!cmd.empty()) {
        std::printf("error unknown command '%s'\n", cmd.c_str());
      }
      std::fflush(stdout);
    }
  } catch (const std::exception &e) {
    std::printf("error %s\n", e.what());
    std::fflush(stdout);
    std::fprintf(stderr, "nncc_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
