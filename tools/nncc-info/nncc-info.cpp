//===- nncc-info.cpp - what this machine offers nncc ----------------------===//
//
//   nncc-info [--json]
//   nncc-info --bandwidth [--sizes 8,1M,64M] [--iters N] [--warmup N]
//
// The CUDA driver and libraries the runtime finds, every GPU (name, compute
// capability, SMs, memory, clocks), the links between GPUs, and the CPU
// target (cores, ISA extensions, BLAS). Links only the runtime, so it runs
// where models run. A machine without a GPU or driver is a normal answer:
// it is said plainly and the exit status is 0. --bandwidth measures the
// all-reduce bus bandwidth between the ranks of an mpirun job, or between
// the local GPUs with NCCL (Bandwidth.h).
//
//===----------------------------------------------------------------------===//
#include "Bandwidth.h"
#include "nncc/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sched.h>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Gpu {
  nncc_cuda_device_info info;
};

struct Machine {
  int32_t buildCuda = 0;
  std::string cudaError; // why there is no usable GPU, "" when there is
  int32_t driverVersion = 0;
  std::string driverLibrary;
  std::string cublasLt, cublasLtError;
  int64_t cublasLtVersion = 0;
  std::vector<Gpu> gpus;
  std::vector<std::vector<nncc_cuda_peer_info>> peers; // [from][to]
  std::string gpuError; // a device query that failed
  std::string cpuModel;
  unsigned cores = 0;
  int availableCores = 0;
  std::vector<std::string> isa;
  std::string blas, blasKernels, blasError;
};

std::string version(int32_t v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::vector<std::string> isaExtensions() {
  std::vector<std::string> out;
#if defined(__x86_64__)
  __builtin_cpu_init();
#define NNCC_ISA(name)                                                                             \
  if (__builtin_cpu_supports(name))                                                                \
    out.push_back(name);
  NNCC_ISA("sse4.2")
  NNCC_ISA("avx")
  NNCC_ISA("avx2")
  NNCC_ISA("fma")
  NNCC_ISA("avx512f")
  NNCC_ISA("avx512bw")
  NNCC_ISA("avx512vl")
  NNCC_ISA("avx512vnni")
  NNCC_ISA("avx512bf16")
#undef NNCC_ISA
#endif
  return out;
}

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(colon + 2);
    }
  return "";
}

Machine probe() {
  Machine m;
  m.buildCuda = nncc_cuda_build_version();
  const char *lib = nullptr;
  if (nncc_cuda_driver_info(&m.driverVersion, &lib) == NNCC_OK) {
    m.driverLibrary = lib;
    int32_t n = nncc_device_count("cuda");
    for (int32_t i = 0; i < n && m.gpuError.empty(); ++i) {
      Gpu g{};
      g.info.struct_size = sizeof(g.info);
      if (nncc_cuda_get_device_info(i, &g.info) != NNCC_OK)
        m.gpuError = nncc_last_error();
      else
        m.gpus.push_back(g);
    }
    m.peers.assign(m.gpus.size(), std::vector<nncc_cuda_peer_info>(m.gpus.size()));
    for (size_t a = 0; a < m.gpus.size() && m.gpuError.empty(); ++a)
      for (size_t b = 0; b < m.gpus.size(); ++b) {
        m.peers[a][b].struct_size = sizeof(nncc_cuda_peer_info);
        if (nncc_cuda_get_peer_info(int32_t(a), int32_t(b), &m.peers[a][b]) != NNCC_OK)
          m.gpuError = nncc_last_error();
      }
    if (nncc_cublaslt_info(&m.cublasLtVersion, &lib) == NNCC_OK)
      m.cublasLt = lib;
    else
      m.cublasLtError = nncc_last_error();
  } else {
    m.cudaError = nncc_last_error();
  }
  m.cpuModel = cpuModel();
  m.cores = std::thread::hardware_concurrency();
  cpu_set_t set;
  m.availableCores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
  m.isa = isaExtensions();
  if (nncc_cpu_blas_info(&lib) == NNCC_OK) {
    m.blas = lib;
    if (nncc_cpu_blas_kernels(&lib) == NNCC_OK)
      m.blasKernels = lib;
  } else
    m.blasError = nncc_last_error();
  return m;
}

/// A peer matrix cell: whether the GPUs reach each other's memory, the P2P
/// performance rank and whether they have native atomics over the link
/// (CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED; it does not name the
/// link: NVLink, PCIe and C2C may each have them or not).
std::string peerCell(const nncc_cuda_peer_info &p) {
  return std::string(p.can_access ? "p2p" : "none") + " r" + std::to_string(p.performance_rank) +
         " atomics:" + (p.native_atomics ? "yes" : "no");
}

double gib(int64_t bytes) { return double(bytes) / (1024.0 * 1024 * 1024); }

void printText(const Machine &m) {
  std::printf("nncc-info: runtime %s, module ABI %u, CUDA support %s\n", nncc_runtime_version(),
              nncc_runtime_module_abi_version(),
              m.buildCuda ? ("built with CUDA " + version(m.buildCuda) + " headers").c_str()
                          : "not built in");
  std::printf("\nCUDA\n");
  if (!m.cudaError.empty()) {
    std::printf("  not available: %s\n", m.cudaError.c_str());
  } else {
    std::printf("  driver: %s, CUDA %s\n", m.driverLibrary.c_str(), version(m.driverVersion).c_str());
    if (m.cublasLt.empty())
      std::printf("  cuBLASLt: %s\n", m.cublasLtError.c_str());
    else
      std::printf("  cuBLASLt: %s, version %lld.%lld.%lld\n", m.cublasLt.c_str(),
                  (long long)(m.cublasLtVersion / 10000), (long long)(m.cublasLtVersion / 100 % 100),
                  (long long)(m.cublasLtVersion % 100));
    std::printf("  %zu GPU%s\n", m.gpus.size(), m.gpus.size() == 1 ? "" : "s");
    for (size_t i = 0; i < m.gpus.size(); ++i) {
      const nncc_cuda_device_info &g = m.gpus[i].info;
      std::printf("  cuda:%zu  %s  sm_%d%d  %d SMs  %.1f GiB (%.1f GiB free)  SM clock %d MHz, "
                  "memory %d MHz x %d bits, L2 %d MiB, PCI %04x:%02x:%02x\n",
                  i, g.name, g.compute_major, g.compute_minor, g.multiprocessors,
                  gib(g.memory_total), gib(g.memory_free), g.clock_khz / 1000,
                  g.memory_clock_khz / 1000, g.memory_bus_bits, g.l2_bytes >> 20, g.pci_domain,
                  g.pci_bus, g.pci_device);
    }
    if (!m.gpuError.empty())
      std::printf("  error: %s\n", m.gpuError.c_str());
    if (m.gpus.size() > 1) {
      std::printf("  peer access (p2p or none, P2P performance rank, native atomics: yes/no):"
                  "\n        ");
      for (size_t b = 0; b < m.gpus.size(); ++b)
        std::printf("  %-20s", ("cuda:" + std::to_string(b)).c_str());
      std::printf("\n");
      for (size_t a = 0; a < m.gpus.size(); ++a) {
        std::printf("  cuda:%-2zu", a);
        for (size_t b = 0; b < m.gpus.size(); ++b) {
          const nncc_cuda_peer_info &p = m.peers[a][b];
          std::string cell = a == b ? "-" : peerCell(p);
          std::printf("  %-20s", cell.c_str());
        }
        std::printf("\n");
      }
    }
  }
  std::printf("\nCPU\n  %s\n  cores: %u (%d available to this process)\n  ISA:",
              m.cpuModel.empty() ? "unknown model" : m.cpuModel.c_str(), m.cores,
              m.availableCores);
  for (const std::string &f : m.isa)
    std::printf(" %s", f.c_str());
  std::printf("%s\n  BLAS: %s%s%s\n", m.isa.empty() ? " (none detected)" : "",
              m.blas.empty() ? m.blasError.c_str() : m.blas.c_str(),
              m.blasKernels.empty() ? "" : ", kernels ", m.blasKernels.c_str());
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += char(c);
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else
      out += char(c);
  }
  return out + "\"";
}

void printJson(const Machine &m) {
  std::string j = "{\"runtime\":" + quote(nncc_runtime_version()) +
                  ",\"module_abi\":" + std::to_string(nncc_runtime_module_abi_version()) +
                  ",\"cuda\":{\"build_version\":" + std::to_string(m.buildCuda);
  if (!m.cudaError.empty()) {
    j += ",\"available\":false,\"error\":" + quote(m.cudaError);
  } else {
    j += ",\"available\":true,\"driver\":" + quote(m.driverLibrary) +
         ",\"driver_version\":" + std::to_string(m.driverVersion) + ",\"cublaslt\":" +
         (m.cublasLt.empty() ? "null,\"cublaslt_error\":" + quote(m.cublasLtError)
                             : quote(m.cublasLt) + ",\"cublaslt_version\":" +
                                   std::to_string(m.cublasLtVersion)) +
         ",\"devices\":[";
    for (size_t i = 0; i < m.gpus.size(); ++i) {
      const nncc_cuda_device_info &g = m.gpus[i].info;
      char pci[32];
      std::snprintf(pci, sizeof(pci), "%04x:%02x:%02x", g.pci_domain, g.pci_bus, g.pci_device);
      j += std::string(i ? "," : "") + "{\"device\":\"cuda:" + std::to_string(i) +
           "\",\"name\":" + quote(g.name) + ",\"arch\":\"sm_" + std::to_string(g.compute_major) +
           std::to_string(g.compute_minor) + "\",\"multiprocessors\":" +
           std::to_string(g.multiprocessors) + ",\"memory_total\":" +
           std::to_string(g.memory_total) + ",\"memory_free\":" + std::to_string(g.memory_free) +
           ",\"clock_khz\":" + std::to_string(g.clock_khz) + ",\"memory_clock_khz\":" +
           std::to_string(g.memory_clock_khz) + ",\"memory_bus_bits\":" +
           std::to_string(g.memory_bus_bits) + ",\"l2_bytes\":" + std::to_string(g.l2_bytes) +
           ",\"pci\":\"" + pci + "\",\"peers\":[";
      for (size_t b = 0; b < m.gpus.size(); ++b) {
        const nncc_cuda_peer_info &p = m.peers[i][b];
        j += std::string(b ? "," : "") + "{\"device\":\"cuda:" + std::to_string(b) +
             "\",\"can_access\":" + (p.can_access ? "true" : "false") +
             ",\"performance_rank\":" + std::to_string(p.performance_rank) +
             ",\"native_atomics\":" + (p.native_atomics ? "true" : "false") + "}";
      }
      j += "]}";
    }
    j += "]";
    if (!m.gpuError.empty())
      j += ",\"error\":" + quote(m.gpuError);
  }
  j += "},\"cpu\":{\"model\":" + quote(m.cpuModel) + ",\"cores\":" + std::to_string(m.cores) +
       ",\"available_cores\":" + std::to_string(m.availableCores) + ",\"isa\":[";
  for (size_t i = 0; i < m.isa.size(); ++i)
    j += std::string(i ? "," : "") + quote(m.isa[i]);
  j += "],\"blas\":" + (m.blas.empty() ? "null,\"blas_error\":" + quote(m.blasError) : quote(m.blas)) +
       ",\"blas_kernels\":" + quote(m.blasKernels) + "}}\n";
  std::fputs(j.c_str(), stdout);
}

/// Whether mpirun started this process (as nncc-run tells it).
bool launchedByMpi() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE"); }

const char *const kUsage =
    "usage: nncc-info [--json]\n"
    "       nncc-info --bandwidth [--sizes LIST] [--iters N] [--warmup N]\n"
    "  the CUDA driver, GPUs, links between them, and the CPU target this machine offers nncc;\n"
    "  --bandwidth: all-reduce time, algbw and busbw per message size, as nccl-tests prints\n"
    "  them, between the ranks of `mpirun -np N nncc-info --bandwidth` (rank 0 prints),\n"
    "  or else between the local GPUs with NCCL (at least 2);\n"
    "  defaults: --sizes 8,4K,64K,1M,16M,64M (K, M, G: powers of 1024) --iters 20 --warmup 5\n";

/// --bandwidth: over MPI under mpirun; otherwise over the local GPUs with
/// NCCL when there are two or more, or says why nothing is measured.
int measureBandwidth(const std::vector<int64_t> &sizes, int warmup, int iters) {
  if (!launchedByMpi()) {
    int32_t gpus = nncc_device_count("cuda");
    if (gpus < 2) {
      std::printf("nncc-info: bandwidth: skipped: not started by mpirun (run `mpirun -np N nncc-info "
                  "--bandwidth` to measure MPI), and %d local GPU%s (NCCL between local GPUs needs at "
                  "least 2)\n",
                  gpus, gpus == 1 ? "" : "s");
      return 0;
    }
    std::vector<nncc::info::BandwidthRow> rows;
    std::string error;
    bool unavailable = false;
    if (!nncc::info::measureLocalGpus(gpus, sizes, warmup, iters, &rows, &error, &unavailable)) {
      if (unavailable) {
        std::printf("nncc-info: bandwidth: skipped: %s\n", error.c_str());
        return 0;
      }
      std::fprintf(stderr, "nncc-info: error: bandwidth: %s\n", error.c_str());
      return 1;
    }
    std::fputs(nncc::info::formatTable(rows, "NCCL (device memory, " + std::to_string(gpus) + " local GPUs)",
                                       gpus, warmup, iters)
                   .c_str(),
               stdout);
    return 0;
  }
  nncc_communicator *comm = nullptr;
  if (nncc_communicator_create_mpi(&comm) != NNCC_OK) {
    std::fprintf(stderr, "nncc-info: error: bandwidth: %s\n", nncc_last_error());
    return 1;
  }
  std::vector<nncc::info::BandwidthRow> rows;
  std::string error;
  bool ok = nncc::info::measureAllReduce(comm, sizes, warmup, iters, &rows, &error);
  int rank = nncc_communicator_rank(comm), ranks = nncc_communicator_size(comm);
  if (!ok) {
    std::fprintf(stderr, "nncc-info: error: rank %d of %d: bandwidth: %s\n", rank, ranks, error.c_str());
    nncc_communicator_abort(comm, 1);
  } else if (rank == 0) {
    std::fputs(nncc::info::formatTable(rows, "MPI (host memory)",
                                       ranks, warmup, iters)
                   .c_str(),
               stdout);
  }
  nncc_communicator_release(comm);
  return ok ? 0 : 1;
}

/// A count option's value: an integer of at least `least`, or an error naming it.
bool count(const char *option, const char *text, int least, int *out) {
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*text == 0 || *end != 0 || v < least || v > 1000000) {
    std::fprintf(stderr, "nncc-info: error: %s '%s': expected an integer from %d to 1000000\n", option, text,
                 least);
    return false;
  }
  *out = int(v);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  bool json = false, bandwidth = false;
  std::vector<int64_t> sizes = {8, 4096, 65536, 1 << 20, 16 << 20, 64 << 20};
  int iters = 20, warmup = 5;
  for (int i = 1; i < argc; ++i) {
    bool hasValue = i + 1 < argc;
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--bandwidth") == 0) {
      bandwidth = true;
    } else if (std::strcmp(argv[i], "--sizes") == 0 && hasValue) {
      std::string error;
      if (!nncc::info::parseSizes(argv[++i], &sizes, &error)) {
        std::fprintf(stderr, "nncc-info: error: %s\n", error.c_str());
        return 1;
      }
    } else if (std::strcmp(argv[i], "--iters") == 0 && hasValue) {
      if (!count("--iters", argv[++i], 1, &iters))
        return 1;
    } else if (std::strcmp(argv[i], "--warmup") == 0 && hasValue) {
      if (!count("--warmup", argv[++i], 0, &warmup))
        return 1;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "nncc-info: error: unknown option or missing value '%s'\n%s", argv[i], kUsage);
      return 1;
    }
  }
  if (bandwidth)
    return measureBandwidth(sizes, warmup, iters);
  Machine m = probe();
  if (json)
    printJson(m);
  else
    printText(m);
  return 0;
}
