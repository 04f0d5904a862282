/* The x86 ISA features a module's host code may need: LLVM's X86 feature
 * name and where CPUID reports it. The compiler records the ones its target
 * CPU enables (nncc_module.cpu_features); the runtime looks each up here and
 * refuses a module whose features the machine lacks, instead of dying of
 * SIGILL in the first kernel. A feature using wider registers also needs the
 * OS to save them: `xcr0` is the XGETBV(0) mask that must be set (AVX: YMM
 * state; AVX-512: opmask and ZMM state; AMX: tile state; APX: EGPR state).
 *
 * NNCC_X86_FEATURE(name, leaf, subleaf, reg, bit, xcr0), reg: 0 eax, 1 ebx,
 * 2 ecx, 3 edx. Part of the module ABI: a name a runtime does not know is
 * refused as unknown.
 */
#ifndef NNCC_CPU_FEATURES_H
#define NNCC_CPU_FEATURES_H

#define NNCC_XCR0_AVX 0x6u
#define NNCC_XCR0_AVX512 0xe6u
#define NNCC_XCR0_AMX 0x60000u
#define NNCC_XCR0_APX 0x80000u

#define NNCC_X86_FEATURES(X)                                                   \
  X("cx8", 1, 0, 3, 8, 0)                                                      \
  X("cmov", 1, 0, 3, 15, 0)                                                    \
  X("mmx", 1, 0, 3, 23, 0)                                                     \
  X("fxsr", 1, 0, 3, 24, 0)                                                    \
  X("sse", 1, 0, 3, 25, 0)                                                     \
  X("sse2", 1, 0, 3, 26, 0)                                                    \
  X("sse3", 1, 0, 2, 0, 0)                                                     \
  X("pclmul", 1, 0, 2, 1, 0)                                                   \
  X("ssse3", 1, 0, 2, 9, 0)                                                    \
  X("fma", 1, 0, 2, 12, NNCC_XCR0_AVX)                                         \
  X("cx16", 1, 0, 2, 13, 0)                                                    \
  X("sse4.1", 1, 0, 2, 19, 0)                                                  \
  X("sse4.2", 1, 0, 2, 20, 0)                                                  \
  X("movbe", 1, 0, 2, 22, 0)                                                   \
  X("popcnt", 1, 0, 2, 23, 0)                                                  \
  X("aes", 1, 0, 2, 25, 0)                                                     \
  X("xsave", 1, 0, 2, 26, 0)                                                   \
  X("avx", 1, 0, 2, 28, NNCC_XCR0_AVX)                                         \
  X("f16c", 1, 0, 2, 29, NNCC_XCR0_AVX)                                        \
  X("rdrnd", 1, 0, 2, 30, 0)                                                   \
  X("sahf", 0x80000001, 0, 2, 0, 0)                                            \
  X("lzcnt", 0x80000001, 0, 2, 5, 0)                                           \
  X("prfchw", 0x80000001, 0, 2, 8, 0)                                          \
  X("bmi", 7, 0, 1, 3, 0)                                                      \
  X("avx2", 7, 0, 1, 5, NNCC_XCR0_AVX)                                         \
  X("bmi2", 7, 0, 1, 8, 0)                                                     \
  X("avx512f", 7, 0, 1, 16, NNCC_XCR0_AVX512)                                  \
  X("avx512dq", 7, 0, 1, 17, NNCC_XCR0_AVX512)                                 \
  X("rdseed", 7, 0, 1, 18, 0)                                                  \
  X("adx", 7, 0, 1, 19, 0)                                                     \
  X("avx512ifma", 7, 0, 1, 21, NNCC_XCR0_AVX512)                               \
  X("avx512cd", 7, 0, 1, 28, NNCC_XCR0_AVX512)                                 \
  X("sha", 7, 0, 1, 29, 0)                                                     \
  X("avx512bw", 7, 0, 1, 30, NNCC_XCR0_AVX512)                                 \
  X("avx512vl", 7, 0, 1, 31, NNCC_XCR0_AVX512)                                 \
  X("avx512vbmi", 7, 0, 2, 1, NNCC_XCR0_AVX512)                                \
  X("avx512vbmi2", 7, 0, 2, 6, NNCC_XCR0_AVX512)                               \
  X("gfni", 7, 0, 2, 8, 0)                                                     \
  X("vaes", 7, 0, 2, 9, NNCC_XCR0_AVX)                                         \
  X("vpclmulqdq", 7, 0, 2, 10, NNCC_XCR0_AVX)                                  \
  X("avx512vnni", 7, 0, 2, 11, NNCC_XCR0_AVX512)                               \
  X("avx512bitalg", 7, 0, 2, 12, NNCC_XCR0_AVX512)                             \
  X("avx512vpopcntdq", 7, 0, 2, 14, NNCC_XCR0_AVX512)                          \
  X("amx-bf16", 7, 0, 3, 22, NNCC_XCR0_AMX)                                    \
  X("avx512fp16", 7, 0, 3, 23, NNCC_XCR0_AVX512)                               \
  X("amx-tile", 7, 0, 3, 24, NNCC_XCR0_AMX)                                    \
  X("amx-int8", 7, 0, 3, 25, NNCC_XCR0_AMX)                                    \
  X("avxvnni", 7, 1, 0, 4, NNCC_XCR0_AVX)                                      \
  X("avx512bf16", 7, 1, 0, 5, NNCC_XCR0_AVX512)                                \
  X("cmpccxadd", 7, 1, 0, 7, 0)                                                \
  X("amx-fp16", 7, 1, 0, 21, NNCC_XCR0_AMX)                                    \
  X("avxifma", 7, 1, 0, 23, NNCC_XCR0_AVX)                                     \
  X("avxvnniint8", 7, 1, 3, 4, NNCC_XCR0_AVX)                                  \
  X("avxneconvert", 7, 1, 3, 5, NNCC_XCR0_AVX)                                 \
  X("egpr", 7, 1, 3, 21, NNCC_XCR0_APX)

#endif /* NNCC_CPU_FEATURES_H */
