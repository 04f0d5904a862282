// infer: loads a compiled model.so with the nncc runtime, prints its
// signature, runs one entry point on deterministic (or given) inputs, prints
// the first output values and the median latency of N runs.
//
//   infer MODEL.so [--entry NAME] [--input FILE.bin]... [--runs N]
//                  [--threads T] [--device cpu|cuda:N]
//
// --input FILE.bin: raw little-endian bytes of the K-th input (the K-th
// --input flag is the K-th input of the signature; its size must match).
// Inputs without a file get a fixed pattern, the same on every run.
#include "nncc/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string model;
  std::string entry;
  std::vector<std::string> inputFiles;
  int runs = 100;
  int threads = 0;
  std::string device = "cpu";
};

[[noreturn]] void usage(const char *argv0, const std::string &error = "") {
  if (!error.empty())
    std::cerr << argv0 << ": error: " << error << "\n";
  std::cerr << "usage: " << argv0
            << " MODEL.so [--entry NAME] [--input FILE.bin]... [--runs N] [--threads T]"
               " [--device cpu|cuda:N]\n";
  std::exit(2);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(argv[0], a + " needs a value");
      return argv[++i];
    };
    if (a == "--entry")
      o.entry = value();
    else if (a == "--input")
      o.inputFiles.push_back(value());
    else if (a == "--runs")
      o.runs = std::max(1, std::atoi(value().c_str()));
    else if (a == "--threads")
      o.threads = std::atoi(value().c_str());
    else if (a == "--device")
      o.device = value();
    else if (a == "-h" || a == "--help")
      usage(argv[0]);
    else if (!a.empty() && a[0] == '-')
      usage(argv[0], "unknown option " + a);
    else if (o.model.empty())
      o.model = a;
    else
      usage(argv[0], "more than one model given");
  }
  if (o.model.empty())
    usage(argv[0], "no model given");
  return o;
}

// A fixed pattern in [-1, 1) for floats, small integers otherwise.
void fillPattern(nncc::Tensor &t, int seed) {
  int64_t n = t.numel();
  auto value = [&](int64_t i) { return static_cast<int>((i * 7 + seed * 13) % 17) - 8; };
  switch (t.dtype()) {
  case nncc::DType::f32:
    for (int64_t i = 0; i < n; ++i)
      t.data<float>()[i] = value(i) / 8.0f;
    break;
  case nncc::DType::f64:
    for (int64_t i = 0; i < n; ++i)
      t.data<double>()[i] = value(i) / 8.0;
    break;
  case nncc::DType::i32:
    for (int64_t i = 0; i < n; ++i)
      t.data<int32_t>()[i] = (value(i) + 8) % 4;
    break;
  case nncc::DType::i64:
    for (int64_t i = 0; i < n; ++i)
      t.data<int64_t>()[i] = (value(i) + 8) % 4;
    break;
  default:
    break; // other types stay zero-filled
  }
}

void readFile(nncc::Tensor &t, const std::string &path, const std::string &name) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f)
    throw std::runtime_error("cannot open input file '" + path + "'");
  auto size = static_cast<size_t>(f.tellg());
  if (size != t.bytes())
    throw std::runtime_error("input '" + name + "' (" + t.typeString() + ") needs " +
                             std::to_string(t.bytes()) + " bytes, '" + path + "' has " +
                             std::to_string(size));
  f.seekg(0);
  f.read(static_cast<char *>(t.data()), static_cast<std::streamsize>(size));
}

double element(const nncc::Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case nncc::DType::f32: return t.data<float>()[i];
  case nncc::DType::f64: return t.data<double>()[i];
  case nncc::DType::i32: return t.data<int32_t>()[i];
  case nncc::DType::i64: return static_cast<double>(t.data<int64_t>()[i]);
  case nncc::DType::u8: return t.data<uint8_t>()[i];
  case nncc::DType::i8: return t.data<int8_t>()[i];
  case nncc::DType::boolean: return t.data<uint8_t>()[i];
  default: return NAN;
  }
}

} // namespace

int main(int argc, char **argv) {
  Options opt = parse(argc, argv);
  try {
    nncc::Module module = nncc::Module::load(opt.model);
    std::cout << "model " << opt.model << " (" << module.producer() << ")\n";
    for (const nncc::EntryInfo &e : module.entries()) {
      std::cout << "  entry " << e.name << "(";
      for (size_t i = 0; i < e.inputs.size(); ++i)
        std::cout << (i ? ", " : "") << e.inputs[i].name << ": " << e.inputs[i].typeString();
      std::cout << ") -> (";
      for (size_t i = 0; i < e.outputs.size(); ++i)
        std::cout << (i ? ", " : "") << e.outputs[i].name << ": " << e.outputs[i].typeString();
      std::cout << ")  arena " << e.arenaBytes << " bytes\n";
    }

    std::vector<nncc::EntryInfo> entries = module.entries();
    std::string entryName = opt.entry;
    if (entryName.empty())
      entryName = entries.size() == 1 ? entries[0].name : "forward";
    nncc::EntryInfo entry = module.entry(entryName);
    if (opt.inputFiles.size() > entry.inputs.size())
      throw std::runtime_error(std::to_string(opt.inputFiles.size()) + " input files for " +
                               std::to_string(entry.inputs.size()) + " inputs");

    // Inputs: owned tensors, filled once and read in place by every run.
    nncc::TensorMap inputs;
    for (size_t k = 0; k < entry.inputs.size(); ++k) {
      const nncc::TensorInfo &info = entry.inputs[k];
      nncc::Tensor t = nncc::Tensor::empty(info.dtype, info.dims);
      if (k < opt.inputFiles.size())
        readFile(t, opt.inputFiles[k], info.name);
      else
        fillPattern(t, static_cast<int>(k));
      inputs[info.name] = t;
    }
    // Outputs: allocated once here; each run writes into them.
    nncc::TensorMap outputs;
    for (const nncc::TensorInfo &info : entry.outputs)
      outputs[info.name] = nncc::Tensor::empty(info.dtype, info.dims);

    nncc::Session session(module, nncc::Device::parse(opt.device), {opt.threads});
    std::cout << "session on " << session.device() << ", " << session.threads()
              << " threads, " << session.allocatedBytes() << " bytes allocated\n";

    session.run(entryName, inputs, outputs);
    for (const nncc::TensorInfo &info : entry.outputs) {
      const nncc::Tensor &t = outputs.at(info.name);
      int64_t shown = std::min<int64_t>(t.numel(), 8);
      std::cout << "output " << info.name << " " << t.typeString() << ":";
      for (int64_t i = 0; i < shown; ++i)
        std::printf(" %.6g", element(t, i));
      std::cout << (shown < t.numel() ? " ..." : "") << "\n";
    }

    // Latency: a few warm-up runs, then opt.runs timed ones.
    for (int i = 0; i < 3; ++i)
      session.run(entryName, inputs, outputs);
    std::vector<double> ms;
    ms.reserve(static_cast<size_t>(opt.runs));
    for (int i = 0; i < opt.runs; ++i) {
      auto start = std::chrono::steady_clock::now();
      session.run(entryName, inputs, outputs);
      auto end = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2 ? ms[ms.size() / 2]
                                  : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
    std::printf("latency: median %.4g ms (min %.4g ms, max %.4g ms, %d runs)\n", median,
                ms.front(), ms.back(), opt.runs);
  } catch (const nncc::Error &e) {
    std::cerr << "infer: error: " << e.what() << " [" << nncc_status_name(e.status()) << "]\n";
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "infer: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
