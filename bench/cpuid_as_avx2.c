// An AVX-512 CPU that says it has AVX2 only: preloaded (LD_PRELOAD) into every process of
// `bench/run.sh --as-avx2`, so that both engines choose the kernels an AVX2 machine (a Zen 3,
// say) gets, on the same cores, in the same run.
//
// Every engine picks its kernels by CPUID: onnxruntime's MLAS, OpenBLAS, nncc's runtime, and
// LLVM's `--cpu=native` in the nncc compiler. Linux can make the CPUID instruction fault
// (arch_prctl ARCH_SET_CPUID, on CPUs that list `cpuid_fault`); the SIGSEGV handler below
// executes it for the program with faulting off and clears the AVX-512 and AMX bits (and
// AVX-VNNI, which Zen 3 lacks) before returning. XGETBV still reports the ZMM state enabled,
// which every detector also needs the CPUID bits for. glibc's string functions chose their
// variants before this library loads; run.sh masks those through GLIBC_TUNABLES.
//
// The program's own SIGSEGV handlers (node installs one for WebAssembly traps) are kept in
// `programAction` and called for every fault that is not a CPUID. A tool for benchmarks, not a
// general one: sigaction and signal are interposed, not sigset, rt_sigaction or masks that block
// SIGSEGV, and `programAction` is set without a lock (the programs here set it once, at start).
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

typedef int (*SigactionFn)(int, const struct sigaction *, struct sigaction *);
static SigactionFn realSigaction;
static struct sigaction programAction;

static long setCpuidEnabled(int enabled) { return syscall(SYS_arch_prctl, ARCH_SET_CPUID, enabled); }

#define BIT(n) (1u << (n))

/// CPUID leaf 7 as an AVX2 machine shows it: AVX-512 F/DQ/IFMA/PF/ER/CD/BW/VL, VBMI, VBMI2,
/// VNNI, BITALG, VPOPCNTDQ, 4VNNIW, 4FMAPS, VP2INTERSECT, FP16, AMX, AVX-VNNI, BF16 and AVX10
/// cleared.
static void maskLeaf7(unsigned subleaf, unsigned *a, unsigned *b, unsigned *c, unsigned *d) {
  if (subleaf == 0) {
    *b &= ~(BIT(16) | BIT(17) | BIT(21) | BIT(26) | BIT(27) | BIT(28) | BIT(30) | BIT(31));
    *c &= ~(BIT(1) | BIT(6) | BIT(11) | BIT(12) | BIT(14));
    *d &= ~(BIT(2) | BIT(3) | BIT(8) | BIT(22) | BIT(23) | BIT(24) | BIT(25));
  } else if (subleaf == 1) {
    *a &= ~(BIT(4) | BIT(5));
    *d &= ~BIT(19); // AVX10, which implies AVX-512 on the cores that have it
  }
}

/// What the kernel would have done without this library: the default action
/// (terminate), raised here so that a SIGSEGV sent by kill() is not lost.
static void takeDefaultAction(int sig) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  realSigaction(sig, &dfl, NULL);
  raise(sig);
}

static void passToProgram(int sig, siginfo_t *info, void *context) {
  if (programAction.sa_flags & SA_SIGINFO)
    programAction.sa_sigaction(sig, info, context);
  else if (programAction.sa_handler == SIG_DFL)
    takeDefaultAction(sig);
  else if (programAction.sa_handler != SIG_IGN)
    programAction.sa_handler(sig);
  else if (info->si_code == SI_KERNEL || info->si_code > 0)
    takeDefaultAction(sig); // an ignored fault would run again forever; the kernel kills
}

static void onSegv(int sig, siginfo_t *info, void *context) {
  greg_t *regs = ((ucontext_t *)context)->uc_mcontext.gregs;
  const unsigned char *ip = (const unsigned char *)regs[REG_RIP];
  if (info->si_code != SI_KERNEL || ip[0] != 0x0F || ip[1] != 0xA2) {
    passToProgram(sig, info, context);
    return;
  }
  unsigned leaf = (unsigned)regs[REG_RAX], subleaf = (unsigned)regs[REG_RCX];
  unsigned a, b, c, d;
  int savedErrno = errno;
  setCpuidEnabled(1);
  __cpuid_count(leaf, subleaf, a, b, c, d);
  setCpuidEnabled(0);
  errno = savedErrno;
  if (leaf == 7)
    maskLeaf7(subleaf, &a, &b, &c, &d);
  regs[REG_RAX] = a;
  regs[REG_RBX] = b;
  regs[REG_RCX] = c;
  regs[REG_RDX] = d;
  regs[REG_RIP] += 2;
}

int sigaction(int sig, const struct sigaction *action, struct sigaction *old) {
  if (!realSigaction) // another library's constructor, before ours
    realSigaction = (SigactionFn)dlsym(RTLD_NEXT, "sigaction");
  if (sig != SIGSEGV)
    return realSigaction(sig, action, old);
  if (old)
    *old = programAction;
  if (action)
    programAction = *action;
  return 0;
}

sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction action, old;
  memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  if (sigaction(sig, &action, &old) != 0)
    return SIG_ERR;
  return old.sa_handler;
}

__attribute__((constructor)) static void maskAvx512(void) {
  if (!realSigaction)
    realSigaction = (SigactionFn)dlsym(RTLD_NEXT, "sigaction");
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = onSegv;
  action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  if (!realSigaction || realSigaction(SIGSEGV, &action, NULL) != 0 || setCpuidEnabled(0) != 0) {
    fprintf(stderr, "cpuid_as_avx2: this CPU or kernel cannot make CPUID fault (no cpuid_fault in "
                    "/proc/cpuinfo); --as-avx2 needs it\n");
    exit(3);
  }
}
