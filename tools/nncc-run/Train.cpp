#include "Train.h"

#include "Npy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace nncc::tools {
namespace {

[[noreturn]] void fail(const std::string &msg) { throw nncc::Error(NNCC_ERROR_INVALID_ARGUMENT, msg); }

/// One input of train_step and the samples its file holds.
struct Feed {
  nncc::TensorInfo info;
  std::string path;
  HostTensor samples;
  size_t sampleBytes = 0;
  std::vector<uint8_t> batch; ///< the current batch, passed in place
};

} // namespace

void train(const nncc::Module &module, nncc::Session &session, const TrainOptions &o) {
  nncc::EntryInfo entry;
  bool found = false;
  for (const nncc::EntryInfo &e : module.entries())
    if (e.name == "train_step") {
      entry = e;
      found = true;
    }
  if (!found)
    fail("--train: the module has no entry 'train_step' (compile it with nncc --train)");
  std::vector<Feed> feeds;
  int64_t samples = -1;
  std::string firstPath;
  for (const nncc::TensorInfo &info : entry.inputs) {
    if (info.name == "lr")
      continue;
    Feed f;
    f.info = info;
    f.path = o.dataDir + "/" + info.name + ".npy";
    std::string error;
    if (!readNpyFile(f.path, &f.samples, &error))
      fail(error + " (train_step's input '" + info.name + "' is " + info.typeString() + ")");
    if (info.dims.empty())
      fail("--train: input '" + info.name + "' is a scalar; data files need a batch axis");
    if (f.samples.dtype != static_cast<int32_t>(info.dtype))
      fail(f.path + ": holds " + f.samples.typeString() + ", input '" + info.name + "' is " + info.typeString());
    std::vector<int64_t> sample(info.dims.begin() + 1, info.dims.end());
    if (f.samples.dims.empty() || std::vector<int64_t>(f.samples.dims.begin() + 1, f.samples.dims.end()) != sample)
      fail(f.path + ": holds " + f.samples.typeString() + "; input '" + info.name + "' (" + info.typeString() +
           ") needs samples of shape [" + [&] {
             std::string s;
             for (size_t i = 0; i < sample.size(); ++i)
               s += (i ? "," : "") + std::to_string(sample[i]);
             return s;
           }() + "] along the first axis");
    int64_t n = f.samples.dims[0];
    if (samples >= 0 && n != samples)
      fail(f.path + ": holds " + std::to_string(n) + " samples, " + firstPath + " " + std::to_string(samples));
    if (samples < 0) {
      samples = n;
      firstPath = f.path;
    }
    if (n < info.dims[0] * o.ranks)
      fail(f.path + ": holds " + std::to_string(n) + " samples; one batch of input '" + info.name + "' needs " +
           std::to_string(info.dims[0] * o.ranks) +
           (o.ranks > 1 ? " (" + std::to_string(o.ranks) + " ranks of " + std::to_string(info.dims[0]) + ")" : ""));
    f.sampleBytes = f.samples.data.size() / static_cast<size_t>(n);
    f.batch.resize(f.sampleBytes * static_cast<size_t>(info.dims[0]));
    feeds.push_back(std::move(f));
  }
  if (feeds.empty())
    fail("--train: train_step has no data inputs");
  int64_t batch = feeds.front().info.dims[0];
  for (const Feed &f : feeds)
    if (f.info.dims[0] != batch)
      fail("--train: the inputs of train_step have different batch sizes");
  // The global batch: every rank's shard of it.
  int64_t global = batch * o.ranks;
  int64_t perEpoch = samples / global;
  long steps = o.steps > 0 ? o.steps : (o.epochs > 0 ? o.epochs : 1) * perEpoch;

  float lr = static_cast<float>(o.lr);
  nncc::TensorMap inputs, outputs;
  inputs["lr"] = nncc::Tensor::wrap(&lr, nncc::DType::f32, {});
  for (Feed &f : feeds)
    inputs[f.info.name] = nncc::Tensor::wrap(f.batch.data(), f.info.dtype, f.info.dims);
  for (const nncc::TensorInfo &t : entry.outputs)
    outputs[t.name] = nncc::Tensor::empty(t.dtype, t.dims);
  std::FILE *lossFile = nullptr;
  if (!o.lossFile.empty() && !(lossFile = std::fopen(o.lossFile.c_str(), "w")))
    fail(o.lossFile + ": cannot write");

  // A module with an optimizer counts its steps (state optimizer.step):
  // training resumed from a checkpoint continues at that step, in the same
  // batch of the same epoch's permutation.
  long first = 0;
  for (const nncc::TensorInfo &info : module.states())
    if (info.name == "optimizer.step")
      first = static_cast<long>(*session.state("optimizer.step").data<float>());
  std::vector<int64_t> order(static_cast<size_t>(samples));
  auto shuffleFor = [&](long epoch) {
    std::iota(order.begin(), order.end(), 0);
    if (o.shuffle) {
      std::mt19937_64 rng(o.seed * 1000003u + static_cast<uint64_t>(epoch));
      std::shuffle(order.begin(), order.end(), rng);
    }
  };
  shuffleFor(first / perEpoch);
  std::string ranks = o.ranks > 1 ? " (" + std::to_string(o.ranks) + " data-parallel ranks of " +
                                         std::to_string(batch) + ")"
                                   : std::string();
  if (o.report)
    std::printf("training: %ld steps of batch %lld%s (%lld samples, %lld batches per epoch), lr %g%s%s\n", steps,
                (long long)global, ranks.c_str(), (long long)samples, (long long)perEpoch, o.lr,
                o.shuffle ? ", shuffled" : "", first ? (", from step " + std::to_string(first + 1)).c_str() : "");
  auto start = std::chrono::steady_clock::now();
  long every = std::max(1L, steps / 10);
  for (long s = 0; s < steps; ++s) {
    int64_t k = (first + s) % perEpoch;
    if (k == 0 && s > 0)
      shuffleFor((first + s) / perEpoch);
    for (Feed &f : feeds)
      for (int64_t i = 0; i < batch; ++i)
        std::memcpy(f.batch.data() + i * f.sampleBytes,
                    f.samples.data.data() + order[k * global + o.rank * batch + i] * f.sampleBytes,
                    f.sampleBytes);
    try {
      session.run("train_step", inputs, outputs);
    } catch (const nncc::Error &e) {
      std::string msg = "step " + std::to_string(first + s + 1) + ": " + e.what();
      for (const Feed &f : feeds)
        if (msg.find("input '" + f.info.name + "'") != std::string::npos) {
          msg = f.path + ": " + msg;
          break;
        }
      if (lossFile)
        std::fclose(lossFile);
      throw nncc::Error(e.status(), msg);
    }
    float loss = *outputs.at(entry.outputs.front().name).data<float>();
    if (lossFile)
      std::fprintf(lossFile, "%.9g\n", loss);
    if (o.report && ((s + 1) % every == 0 || s + 1 == steps)) {
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("step %ld/%ld: loss %.6g (%.1f steps/s)\n", first + s + 1, first + steps, loss, (s + 1) / seconds);
      std::fflush(stdout);
    }
  }
  if (lossFile)
    std::fclose(lossFile);
}

} // namespace nncc::tools
