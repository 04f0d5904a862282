//===- nncc-run.cpp - run, check and time a compiled module ---------------===//
//
//   nncc-run model.so [--device cpu|cuda:N] [--entry NAME] --input-dir D
//            [--output-dir O] [--compare D [--rtol R] [--atol A]] [--bench N]
//            [--threads T] [--profile trace.json] [--set-state NAME=FILE.pb]...
//            [--state-out DIR]
//   nncc-run model.so --train --data DIR [--steps N | --epochs E] [--lr F]
//            [--seed S] [--shuffle] [--loss-file F] [--set-state ...] [--state-out DIR]
//            [--load-checkpoint F] [--save-checkpoint F]
//
// Inputs and outputs are ONNX TensorProto files in the backend-test layout:
// input_K.pb is the K-th input of the entry in signature order, output_K.pb
// the K-th output. Links only the runtime (no protobuf, ONNX or LLVM), so it
// works on a machine that has nothing but the runtime and a driver.
//
//===----------------------------------------------------------------------===//
#include "Compare.h"
#include "TensorProto.h"
#include "Train.h"
#include "nncc/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

using nncc::tools::HostTensor;

namespace {

const char kUsage[] =
    "usage: nncc-run model.so [--device cpu|cuda:N] [--entry NAME] --input-dir D\n"
    "                [--output-dir O] [--compare D] [--rtol R] [--atol A]\n"
    "                [--bench N] [--threads T] [--profile trace.json]\n"
    "                [--set-state NAME=FILE.pb]... [--state-out DIR]\n"
    "       nncc-run model.so --train --data DIR [--steps N | --epochs E] [--lr F]\n"
    "                [--seed S] [--shuffle] [--loss-file F] [--state-out DIR]\n"
    "                [--devices cuda:0,cuda:1,...]\n"
    "\n"
    "  --info          prints what the module holds (entries, CPU level and features, GPU\n"
    "                  code, parallel layout) and exits; no inputs needed\n"
    "  --device D      device to run on (default cpu); under mpirun, 'cuda' is the GPU\n"
    "                  of the rank's local index (collectives then run over NCCL)\n"
    "  --entry NAME    entry point (default: the only one, or 'forward')\n"
    "  --input-dir D   reads D/input_K.pb, the K-th input of the entry\n"
    "  --output-dir O  writes O/output_K.pb\n"
    "  --compare D     compares with D/output_K.pb: |got-exp| <= atol + rtol*|exp|\n"
    "  --rtol R        relative tolerance (default 1e-3)\n"
    "  --atol A        absolute tolerance (default 1e-5)\n"
    "  --bench N       times N runs after warm-up; prints the median\n"
    "  --threads T     CPU threads (default 0 = all cores)\n"
    "  --profile F     writes a Chrome trace (Perfetto, chrome://tracing) of the run, or of\n"
    "                  the --bench runs, to F and prints the ten slowest steps\n"
    "                  (NNCC_PROFILE=F does the same)\n"
    "  --set-state NAME=FILE.pb\n"
    "                  sets module state NAME (nncc --mutable-weights) before the runs\n"
    "  --state-out DIR writes DIR/state_K.pb, the K-th module state, after the runs\n"
    "  --load-checkpoint F, --save-checkpoint F\n"
    "                  sets every module state from checkpoint F before the runs (before\n"
    "                  --set-state), or writes them to F after the runs\n"
    "  --export-onnx OUT --onnx-model IN\n"
    "                  writes IN (the model the module was compiled from) to OUT with the\n"
    "                  module state (trained weights) as its initializers, after the runs\n"
    "  --train         runs train_step (nncc --train) over DIR/<input>.npy (one file per\n"
    "                  input and the labels, samples along the first axis): --steps N, or\n"
    "                  --epochs E (default 1), --lr F (default 0.01), --shuffle with --seed S,\n"
    "                  --loss-file F (one loss per line)\n"
    "  --devices LIST  --train on several local GPUs in this process, one rank each (a\n"
    "                  module compiled with --parallel=dp:D,tp:T for D*T devices; tp needs\n"
    "                  NCCL 2.18+ when D > 1), collectives over NCCL; rank 0 prints and\n"
    "                  writes the files\n"
    "  under mpirun    world rank w is data-parallel rank w / T (its data shard) and\n"
    "                  tensor-parallel rank w % T; rank 0 prints and writes the files\n";

struct Options {
  std::string model, device = "cpu", entry, inputDir, outputDir, compareDir, profile, stateOut,
      loadCheckpoint, saveCheckpoint, exportOnnx, onnxModel;
  std::vector<std::pair<std::string, std::string>> setStates; // name, file
  std::vector<int32_t> devices; // --devices: CUDA indices, one rank each
  bool train = false;
  nncc::tools::TrainOptions training;
  double rtol = 1e-3, atol = 1e-5;
  long bench = 0;
  int threads = 0;
  bool info = false;
};

[[noreturn]] void usageError(const std::string &msg) {
  throw nncc::Error(NNCC_ERROR_INVALID_ARGUMENT, msg + " (see --help)");
}

double parseDouble(const std::string &flag, const std::string &v) {
  char *end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(d >= 0))
    usageError(flag + " needs a non-negative number, got '" + v + "'");
  return d;
}

long parseInt(const std::string &flag, const std::string &v, long min, long max) {
  char *end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < min || n > max)
    usageError(flag + " needs an integer in [" + std::to_string(min) + ", " +
               std::to_string(max) + "], got '" + v + "'");
  return n;
}

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "--info") {
      o.info = true;
      continue;
    }
    if (arg == "--train" || arg == "--shuffle") {
      (arg == "--train" ? o.train : o.training.shuffle) = true;
      continue;
    }
    if (arg.compare(0, 2, "--") != 0) {
      if (!o.model.empty())
        usageError("more than one module given ('" + o.model + "', '" + arg + "')");
      o.model = arg;
      continue;
    }
    std::string flag = arg, value;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else {
      if (i + 1 >= argc)
        usageError(flag + " needs a value");
      value = argv[++i];
    }
    if (flag == "--device")
      o.device = value;
    else if (flag == "--entry")
      o.entry = value;
    else if (flag == "--input-dir")
      o.inputDir = value;
    else if (flag == "--output-dir")
      o.outputDir = value;
    else if (flag == "--compare")
      o.compareDir = value;
    else if (flag == "--rtol")
      o.rtol = parseDouble(flag, value);
    else if (flag == "--atol")
      o.atol = parseDouble(flag, value);
    else if (flag == "--bench")
      o.bench = parseInt(flag, value, 1, 100000000);
    else if (flag == "--threads")
      o.threads = static_cast<int>(parseInt(flag, value, 0, 4096));
    else if (flag == "--set-state") {
      size_t split = value.rfind('=');
      if (split == std::string::npos || split == 0 || split + 1 == value.size())
        usageError("--set-state needs NAME=FILE.pb, got '" + value + "'");
      o.setStates.emplace_back(value.substr(0, split), value.substr(split + 1));
    } else if (flag == "--state-out")
      o.stateOut = value;
    else if (flag == "--load-checkpoint")
      o.loadCheckpoint = value;
    else if (flag == "--save-checkpoint")
      o.saveCheckpoint = value;
    else if (flag == "--export-onnx")
      o.exportOnnx = value;
    else if (flag == "--onnx-model")
      o.onnxModel = value;
    else if (flag == "--data")
      o.training.dataDir = value;
    else if (flag == "--steps")
      o.training.steps = parseInt(flag, value, 1, 1000000000);
    else if (flag == "--epochs")
      o.training.epochs = parseInt(flag, value, 1, 1000000);
    else if (flag == "--lr")
      o.training.lr = parseDouble(flag, value);
    else if (flag == "--seed")
      o.training.seed = static_cast<uint64_t>(parseInt(flag, value, 0, 2147483647));
    else if (flag == "--loss-file")
      o.training.lossFile = value;
    else if (flag == "--devices") {
      for (size_t at = 0; at <= value.size();) {
        size_t comma = std::min(value.find(',', at), value.size());
        std::string d = value.substr(at, comma - at);
        if (d.compare(0, 5, "cuda:") != 0)
          usageError("--devices takes CUDA devices (cuda:0,cuda:1,...), got '" + d + "'");
        o.devices.push_back(static_cast<int32_t>(parseInt("--devices", d.substr(5), 0, 1023)));
        at = comma + 1;
      }
    }
    else if (flag == "--profile") {
      if (value.empty())
        usageError("--profile needs a file name");
      o.profile = value;
    }
    else
      usageError("unknown option '" + flag + "'");
  }
  if (o.model.empty())
    usageError("no module given");
  if (o.exportOnnx.empty() != o.onnxModel.empty())
    usageError("--export-onnx OUT needs --onnx-model IN (the model the module was compiled from)");
  if (o.train && o.training.dataDir.empty())
    usageError("--train needs --data DIR");
  if (o.train && o.training.steps > 0 && o.training.epochs > 0)
    usageError("--steps and --epochs exclude each other");
  if (!o.devices.empty() && !o.train)
    usageError("--devices runs --train (one session per GPU); run other entries with --device");
  if (o.inputDir.empty() && !o.info && !o.train)
    usageError("--input-dir is required");
  return o;
}

bool fileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string signature(const std::vector<nncc::TensorInfo> &ts) {
  std::string s;
  for (const nncc::TensorInfo &t : ts)
    s += (s.empty() ? "" : ", ") + t.name + " " + t.typeString();
  return s.empty() ? "none" : s;
}

nncc::EntryInfo pickEntry(const nncc::Module &module, const std::string &wanted) {
  if (!wanted.empty())
    return module.entry(wanted);
  std::vector<nncc::EntryInfo> entries = module.entries();
  if (entries.size() == 1)
    return entries[0];
  for (const nncc::EntryInfo &e : entries)
    if (e.name == "forward")
      return e;
  std::string names;
  for (const nncc::EntryInfo &e : entries)
    names += (names.empty() ? "'" : ", '") + e.name + "'";
  throw nncc::Error(NNCC_ERROR_INVALID_ARGUMENT,
                    "the module has several entry points (" + (names.empty() ? "none" : names) +
                        "); choose one with --entry");
}

/// ONNX's older backend test data stores bfloat16 tensors as UINT16 (the same
/// bits); read them as the bf16 the signature asks for.
void retagBFloat16(HostTensor &h, int32_t wanted) {
  if (wanted == NNCC_DTYPE_BF16 && h.dtype == NNCC_DTYPE_U16)
    h.dtype = NNCC_DTYPE_BF16;
}

HostTensor readTensor(const std::string &path) {
  HostTensor t;
  std::string error;
  if (!nncc::tools::readTensorProtoFile(path, &t, &error))
    throw nncc::Error(NNCC_ERROR_INVALID_ARGUMENT, error);
  return t;
}

std::string fmt(const char *f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

void printValues(const nncc::Tensor &t) {
  int64_t n = t.numel();
  int64_t shown = std::min<int64_t>(n, 8);
  for (int64_t i = 0; i < shown; ++i)
    std::printf(" %g", nncc::tools::elementAsDouble(static_cast<int32_t>(t.dtype()), t.data(), i));
  if (n > shown)
    std::printf(" ... (%lld values)", static_cast<long long>(n));
  std::printf("\n");
}

/// The ten steps of `entry` with the most total time over the profiled runs.
void printProfile(const nncc::Module &module, const nncc::Session &session,
                  const nncc::EntryInfo &entry) {
  // The steps of the plan the session ran: its device kind's ("cuda:1" -> "cuda").
  std::string device = session.device();
  std::vector<nncc::StepInfo> steps = module.steps(entry.name, device.substr(0, device.find(':')));
  nncc::ProfileStats runs = session.profileStats(entry.name);
  struct Row {
    size_t step;
    nncc::ProfileStats st;
  };
  std::vector<Row> rows;
  int64_t stepsNs = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    rows.push_back({i, session.profileStats(entry.name, static_cast<int32_t>(i))});
    stepsNs += rows.back().st.totalNs;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row &a, const Row &b) { return a.st.totalNs > b.st.totalNs; });
  double runMs = runs.totalNs / 1e6;
  std::printf("profile: %lld run%s of '%s', %zu steps: mean %.4g ms per run (min %.4g ms), "
              "steps %.1f%% of it\n",
              static_cast<long long>(runs.calls), runs.calls == 1 ? "" : "s", entry.name.c_str(),
              steps.size(), runs.calls ? runMs / runs.calls : 0.0, runs.minNs / 1e6,
              runs.totalNs ? 100.0 * stepsNs / runs.totalNs : 0.0);
  std::printf("top %zu steps by total time:\n", std::min<size_t>(10, rows.size()));
  std::printf("  %4s  %-40s %-6s %7s %10s %7s %10s %10s\n", "step", "name", "kind", "calls",
              "total ms", "% run", "mean us", "min us");
  for (size_t r = 0; r < rows.size() && r < 10; ++r) {
    const nncc::StepInfo &st = steps[rows[r].step];
    std::string name = !st.name.empty() ? st.name : !st.kernel.empty() ? st.kernel : st.kind;
    if (name.size() > 40)
      name = name.substr(0, 37) + "...";
    const nncc::ProfileStats &ps = rows[r].st;
    std::printf("  %4zu  %-40s %-6s %7lld %10.4f %6.1f%% %10.2f %10.2f\n", rows[r].step,
                name.c_str(), st.kind.c_str(), static_cast<long long>(ps.calls), ps.totalNs / 1e6,
                runs.totalNs ? 100.0 * ps.totalNs / runs.totalNs : 0.0,
                ps.calls ? ps.totalNs / 1e3 / ps.calls : 0.0, ps.minNs / 1e3);
  }
}

/// --info: the module's contents, one fact per line.
int printInfo(const nncc::Module &module, const std::string &path) {
  std::printf("module: %s (%s)\n", path.c_str(), module.producer().c_str());
  std::string cpu = module.cpuName();
  std::printf("cpu: %s%s%s%s\n", cpu.empty() ? "no host code" : cpu.c_str(),
              cpu.empty() ? "" : " (needs ", module.cpuFeatures().c_str(), cpu.empty() ? "" : ")");
  std::printf("runs on: cpu %s, cuda %s\n", module.runsOn("cpu") ? "yes" : "no",
              module.runsOn("cuda") ? "yes" : "no");
  nncc::Module::Parallel layout = module.parallel();
  for (const nncc::EntryInfo &e : module.entries()) {
    // Steps per plan: each device kind runs its own; with pipeline stages,
    // each stage its own variant (every entry has one per stage).
    std::string steps;
    for (const char *kind : {"cpu", "cuda"}) {
      std::string perStage;
      for (int32_t p = 0; p < layout.pipeline; ++p)
        if (int32_t n = nncc_module_stage_num_steps(module.handle(), kind, e.index, p); n >= 0)
          perStage += (perStage.empty() ? "" : "/") + std::to_string(n);
      if (!perStage.empty())
        steps += (steps.empty() ? "" : ", ") + perStage + " steps on " + kind;
    }
    if (layout.pipeline > 1)
      steps += " (stages 0.." + std::to_string(layout.pipeline - 1) + ")";
    std::printf("entry %s: (%s) -> (%s), %s\n", e.name.c_str(), signature(e.inputs).c_str(),
                signature(e.outputs).c_str(), steps.c_str());
  }
  std::vector<nncc::TensorInfo> states = module.states();
  if (!states.empty())
    std::printf("state: %s\n", signature(states).c_str());
  if (layout.worldSize() > 1) {
    std::string shape = "dp=" + std::to_string(layout.data) +
                        (layout.pipeline > 1 ? " x pp=" + std::to_string(layout.pipeline) : "") + " x tp=" +
                        std::to_string(layout.tensor);
    std::string gpus = ", or --devices with " + std::to_string(layout.worldSize()) + " GPUs";
    std::printf("parallel: %s (run it as %d ranks: mpirun -np %d%s; world rank w = (d*%d + p)*%d + t)\n",
                shape.c_str(), layout.worldSize(), layout.worldSize(), gpus.c_str(), layout.pipeline,
                layout.tensor);
  }
  return 0;
}

/// --state-out DIR: DIR/state_K.pb, the K-th module state (nothing without DIR).
void writeStates(const nncc::Module &module, nncc::Session &session, const std::string &dir) {
  if (dir.empty())
    return;
  std::vector<nncc::TensorInfo> states = module.states();
  for (size_t k = 0; k < states.size(); ++k) {
    nncc::Tensor t = session.state(states[k].name);
    HostTensor h;
    h.name = states[k].name;
    h.dtype = static_cast<int32_t>(t.dtype());
    h.dims = t.dims();
    const uint8_t *p = static_cast<const uint8_t *>(t.data());
    h.data.assign(p, p + t.bytes());
    std::string path = dir + "/state_" + std::to_string(k) + ".pb", error;
    if (!nncc::tools::writeTensorProtoFile(path, h, &error))
      throw nncc::Error(NNCC_ERROR_INVALID_ARGUMENT, error);
  }
  std::printf("wrote %zu state%s to %s\n", states.size(), states.size() == 1 ? "" : "s", dir.c_str());
}

/// --state-out, --save-checkpoint and --export-onnx after a run. Each reads
/// every state, in module order, and reading a state sharded over a tensor
/// group gathers it from the group's ranks: the ranks that write nothing
/// (`writer` false: all but rank 0) read the states as often, in the same
/// order, so every group's gathers meet.
void writeOutputs(const nncc::Module &module, nncc::Session &session, const Options &o, bool writer) {
  // A checkpoint reads every state but those the layout fixes (module_abi.h).
  auto joinReads = [&](bool checkpoint) {
    for (const nncc::TensorInfo &info : module.states())
      if (!checkpoint || info.name.rfind(NNCC_LAYOUT_STATE_PREFIX, 0) != 0)
        (void)session.state(info.name);
  };
  if (!o.stateOut.empty())
    writer ? writeStates(module, session, o.stateOut) : joinReads(false);
  if (!o.saveCheckpoint.empty())
    writer ? session.saveCheckpoint(o.saveCheckpoint) : joinReads(true);
  if (!o.exportOnnx.empty())
    writer ? session.exportOnnx(o.onnxModel, o.exportOnnx) : joinReads(false);
}

/// Whether mpirun started this process: Open MPI's OMPI_COMM_WORLD_SIZE, or
/// the PMI_SIZE of MPICH-style launchers.
bool launchedByMpi() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE"); }

/// Under mpirun: MPI's world, whose rank 0 alone prints and writes files.
std::optional<nncc::Distributed> world;

/// Under mpirun, `--device cuda` (no index) is the GPU of this rank's index
/// among the ranks of its machine (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK,
/// MPICH's MPI_LOCALRANKID, Slurm's SLURM_LOCALID), so one command line
/// gives every rank a GPU of its own; NCCL refuses two ranks on one GPU.
std::string rankDevice(const std::string &device) {
  if (!world || device != "cuda")
    return device;
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *local = std::getenv(var); local && *local)
      return "cuda:" + std::string(local);
  return "cuda:" + std::to_string(world->rank()); // one machine
}

/// Module state from a checkpoint, then the states the caller sets.
void setUpStates(const nncc::Module &module, nncc::Session &session, const Options &o) {
  if (!o.loadCheckpoint.empty())
    session.loadCheckpoint(o.loadCheckpoint);
  for (const auto &[name, file] : o.setStates) {
    HostTensor h = readTensor(file);
    try {
      for (const nncc::TensorInfo &info : module.states())
        if (info.name == name)
          retagBFloat16(h, static_cast<int32_t>(info.dtype));
      session.setState(name, nncc::Tensor::wrap(h.data.data(), static_cast<nncc::DType>(h.dtype), h.dims));
    } catch (const nncc::Error &e) {
      throw nncc::Error(e.status(), file + ": " + e.what());
    }
  }
}

/// --train --devices: one session per GPU, rank r on the r-th device of a
/// one-process NCCL world, each on a thread of its own (its collectives
/// meet the others'). Rank 0 prints and writes the files. A rank that fails
/// ends the process: the others would wait for it in their next collective.
int trainOnDevices(const nncc::Module &module, Options o) {
  if (world)
    usageError("--devices drives the GPUs of one process; under mpirun give each rank --device cuda");
  nncc::Module::Parallel layout = module.parallel();
  // Each tensor group on the GPUs with the fastest links among them.
  if (layout.tensor > 1 && o.devices.size() % size_t(layout.tensor) == 0) {
    std::vector<int32_t> grouped = nncc::Distributed::groupGpusByLinks(o.devices, layout.tensor);
    if (grouped != o.devices) {
      std::string groups;
      for (size_t i = 0; i < grouped.size(); ++i)
        groups += (i == 0 ? "" : i % size_t(layout.tensor) == 0 ? " | " : ",") + ("cuda:" + std::to_string(grouped[i]));
      std::printf("tensor-parallel groups by GPU links (nncc-info's peer matrix): %s\n", groups.c_str());
      o.devices = grouped;
    }
  }
  std::vector<nncc::Distributed> comms = nncc::Distributed::localGpus(o.devices);
  int ranks = static_cast<int>(o.devices.size());
  std::vector<std::optional<nncc::Session>> sessions(static_cast<size_t>(ranks));
  // Each rank on a thread of its own from the start: opening a session of a
  // module laid out dp x tp splits the world into groups, a collective.
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        nncc::SessionOptions options{o.threads};
        options.distributed = comms[r];
        if (r != 0)
          options.profile = ""; // rank 0's trace only (--profile or NNCC_PROFILE)
        else if (!o.profile.empty())
          options.profile = o.profile;
        sessions[r].emplace(module, nncc::Device::cuda(o.devices[r]), options);
        setUpStates(module, *sessions[r], o);
        if (r == 0) {
          std::string names;
          for (int32_t d : o.devices)
            names += (names.empty() ? "cuda:" : ",cuda:") + std::to_string(d);
          std::printf("entry 'train_step' on %s (one process, %d ranks over NCCL)\n", names.c_str(), ranks);
        }
        // The ranks of a tensor group (r / T alike) read the same samples.
        nncc::tools::TrainOptions t = o.training;
        t.rank = layout.dataIndex(r);
        t.ranks = layout.data;
        t.report = r == 0;
        if (r != 0)
          t.lossFile.clear();
        nncc::tools::train(module, *sessions[r], t);
        writeOutputs(module, *sessions[r], o, r == 0);
      } catch (const std::exception &e) {
        std::fflush(stdout);
        std::fprintf(stderr, "nncc-run: error: rank %d of %d (cuda:%d): %s\n", r, ranks, o.devices[r], e.what());
        std::fflush(stderr);
        std::_Exit(1);
      }
    });
  for (std::thread &t : threads)
    t.join();
  return 0;
}

int run(Options o) {
  if (launchedByMpi()) {
    world = nncc::Distributed::fromMpi();
    if (world->rank() != 0) {
      // Every rank computes the same losses and state: rank 0 reports them
      // (the others join its state reads: writeOutputs).
      if (!std::freopen("/dev/null", "w", stdout))
        throw nncc::Error(NNCC_ERROR_INTERNAL, "cannot silence the output of rank " + std::to_string(world->rank()));
      o.training.lossFile.clear();
      o.profile.clear();
      o.outputDir.clear();
    }
  }
  nncc::Module module = nncc::Module::load(o.model);
  if (o.info)
    return printInfo(module, o.model);
  if (world) {
    // World rank w is (d, p, t) = (w / (P*T), (w / T) % P, w % T): the
    // P*T ranks of a data-parallel index (every stage, every tensor part)
    // read its data shard.
    nncc::Module::Parallel layout = module.parallel();
    o.training.rank = layout.dataIndex(world->rank());
    o.training.ranks = layout.data;
  }
  bool writer = !world || world->rank() == 0;
  if (!o.devices.empty())
    return trainOnDevices(module, o);
  nncc::EntryInfo entry = pickEntry(module, o.train ? "train_step" : o.entry);
  nncc::SessionOptions sessionOptions{o.threads};
  if (!o.profile.empty())
    sessionOptions.profile = o.profile;
  sessionOptions.distributed = world;
  // In an optional so that it can be closed, which completes the trace file.
  std::optional<nncc::Session> open;
  open.emplace(module, nncc::Device::parse(rankDevice(o.device)), sessionOptions);
  nncc::Session &session = *open;
  // --profile FILE or NNCC_PROFILE: the run, or with --bench the timed runs.
  bool profiling = session.profiling();
  if (profiling && o.bench > 0)
    session.setProfiling(false);
  std::printf("entry '%s' on %s, %d thread%s\n", entry.name.c_str(), session.device().c_str(),
              session.threads(), session.threads() == 1 ? "" : "s");

  setUpStates(module, session, o);
  if (o.train) {
    nncc::tools::train(module, session, o.training);
    writeOutputs(module, session, o, writer);
    return 0;
  }

  // Inputs: read once, then used in place by every run.
  std::vector<HostTensor> hostInputs;
  nncc::TensorMap inputs;
  for (size_t k = 0; k < entry.inputs.size(); ++k) {
    std::string path = o.inputDir + "/input_" + std::to_string(k) + ".pb";
    if (!fileExists(path))
      throw nncc::Error(NNCC_ERROR_NOT_FOUND,
                        path + ": no such file (entry '" + entry.name + "' has " +
                            std::to_string(entry.inputs.size()) +
                            " inputs: " + signature(entry.inputs) + ")");
    hostInputs.push_back(readTensor(path));
  }
  std::string extra = o.inputDir + "/input_" + std::to_string(entry.inputs.size()) + ".pb";
  if (fileExists(extra))
    throw nncc::Error(NNCC_ERROR_INVALID_ARGUMENT,
                      extra + " exists, but entry '" + entry.name + "' has only " +
                          std::to_string(entry.inputs.size()) +
                          " inputs: " + signature(entry.inputs));
  // An expected output the entry does not produce would go unchecked: the
  // folder belongs to another model, or the entry lost an output.
  if (!o.compareDir.empty()) {
    std::string extraExpected =
        o.compareDir + "/output_" + std::to_string(entry.outputs.size()) + ".pb";
    if (fileExists(extraExpected))
      throw nncc::Error(NNCC_ERROR_INVALID_ARGUMENT,
                        extraExpected + " exists, but entry '" + entry.name + "' has only " +
                            std::to_string(entry.outputs.size()) +
                            " outputs: " + signature(entry.outputs));
  }
  for (size_t k = 0; k < entry.inputs.size(); ++k) {
    HostTensor &h = hostInputs[k];
    retagBFloat16(h, static_cast<int32_t>(entry.inputs[k].dtype));
    inputs[entry.inputs[k].name] =
        nncc::Tensor::wrap(h.data.data(), static_cast<nncc::DType>(h.dtype), h.dims);
  }

  // Outputs: allocated once, written by every run.
  nncc::TensorMap outputs;
  for (const nncc::TensorInfo &t : entry.outputs)
    outputs[t.name] = nncc::Tensor::empty(t.dtype, t.dims);

  try {
    session.run(entry.name, inputs, outputs);
  } catch (const nncc::Error &e) {
    // Name the files behind the runtime's input names.
    std::string msg = e.what();
    for (size_t k = 0; k < entry.inputs.size(); ++k)
      if (msg.find("input '" + entry.inputs[k].name + "'") != std::string::npos) {
        msg = o.inputDir + "/input_" + std::to_string(k) + ".pb: " + msg;
        break;
      }
    throw nncc::Error(e.status(), msg);
  }
  std::printf("allocated %lld bytes on %s (%lld of module state)\n", static_cast<long long>(session.allocatedBytes()),
              session.device().c_str(), static_cast<long long>(session.stateBytes()));

  if (!o.outputDir.empty()) {
    for (size_t k = 0; k < entry.outputs.size(); ++k) {
      const nncc::Tensor &t = outputs.at(entry.outputs[k].name);
      HostTensor h;
      h.name = entry.outputs[k].name;
      h.dtype = static_cast<int32_t>(t.dtype());
      h.dims = t.dims();
      const uint8_t *p = static_cast<const uint8_t *>(t.data());
      h.data.assign(p, p + t.bytes());
      std::string path = o.outputDir + "/output_" + std::to_string(k) + ".pb", error;
      if (!nncc::tools::writeTensorProtoFile(path, h, &error))
        throw nncc::Error(NNCC_ERROR_INVALID_ARGUMENT, error);
    }
    std::printf("wrote %zu output%s to %s\n", entry.outputs.size(),
                entry.outputs.size() == 1 ? "" : "s", o.outputDir.c_str());
  }

  int failures = 0;
  if (!o.compareDir.empty()) {
    for (size_t k = 0; k < entry.outputs.size(); ++k) {
      const nncc::TensorInfo &info = entry.outputs[k];
      const nncc::Tensor &t = outputs.at(info.name);
      HostTensor expected =
          readTensor(o.compareDir + "/output_" + std::to_string(k) + ".pb");
      retagBFloat16(expected, static_cast<int32_t>(info.dtype));
      nncc::tools::CompareResult r = nncc::tools::compareTensors(
          {static_cast<int32_t>(t.dtype()), t.dims(), t.data()},
          {expected.dtype, expected.dims, expected.data.data()}, o.rtol, o.atol);
      std::printf("output %zu '%s' %s: %s (max abs err %s, max rel err %s)%s%s\n", k,
                  info.name.c_str(), t.typeString().c_str(), r.ok ? "ok" : "MISMATCH",
                  fmt("%.3g", r.maxAbsError).c_str(), fmt("%.3g", r.maxRelError).c_str(),
                  r.ok ? "" : ": ", r.message.c_str());
      failures += !r.ok;
    }
  } else if (o.outputDir.empty()) {
    for (size_t k = 0; k < entry.outputs.size(); ++k) {
      const nncc::Tensor &t = outputs.at(entry.outputs[k].name);
      std::printf("output %zu '%s' %s:", k, entry.outputs[k].name.c_str(),
                  t.typeString().c_str());
      printValues(t);
    }
  }

  if (o.bench > 0) {
    using Clock = std::chrono::steady_clock;
    long warmup = std::max(1L, std::min(10L, o.bench / 10));
    for (long i = 0; i < warmup; ++i)
      session.run(entry.name, inputs, outputs);
    std::vector<double> ms;
    ms.reserve(static_cast<size_t>(o.bench));
    if (profiling)
      session.setProfiling(true);
    for (long i = 0; i < o.bench; ++i) {
      Clock::time_point start = Clock::now();
      session.run(entry.name, inputs, outputs);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    size_t n = sorted.size();
    double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    std::printf("median %.4g ms (min %.4g ms, max %.4g ms, %zu runs)\n", median, sorted.front(),
                sorted.back(), n);
  }
  writeOutputs(module, session, o, writer);
  if (profiling) {
    printProfile(module, session, entry);
    std::string path = session.profilePath();
    open.reset(); // writes the end of the trace
    std::printf("profile: wrote %s (open it in https://ui.perfetto.dev or chrome://tracing)\n",
                path.c_str());
  }
  std::fflush(stdout);

  if (failures) {
    std::fprintf(stderr, "nncc-run: error: %d of %zu outputs differ from %s\n", failures,
                 entry.outputs.size(), o.compareDir.c_str());
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(parseArgs(argc, argv));
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::string rank = world ? "rank " + std::to_string(world->rank()) + " of " + std::to_string(world->size()) + ": "
                             : std::string();
    std::fprintf(stderr, "nncc-run: error: %s%s\n", rank.c_str(), e.what());
    // The other ranks may be waiting for this one in a collective: end the job.
    if (world && world->size() > 1) {
      std::fflush(stderr);
      world->abort(1);
    }
    return 1;
  }
}
