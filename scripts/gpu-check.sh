#!/bin/bash
# The GPU machine check, in two halves.
#
#   scripts/gpu-check.sh pack [--build B] [--nncc NNCC] [--max-mib N] BUNDLE
#       here (the build machine): copies the runtime, nncc-run, nncc-info, the
#       GPU unit tests and every fixture they load into BUNDLE, and with --nncc
#       compiles the benchmark models (about 45 MiB) and the ONNX backend
#       tests of test/backend/cpu_passing.txt for cpu,cuda:sm_90 with their
#       inputs and expected outputs, smallest first, until the bundle reaches
#       --max-mib (default: 64 MiB, what travels to the GPU machine, less the
#       repository's tracked files, which travel too, and 2 MiB to spare).
#   scripts/gpu-check.sh run BUNDLE
#       there (one H200, the NVIDIA driver and CUDA 13, no Debian packages),
#       within $NNCC_GPU_CHECK_BUDGET_S seconds (default 540: one device
#       command may run 600 s), each step's timeout cut to what is left:
#       1. every binary's dependencies resolve (ldd: nothing "not found"),
#       2. nncc-info (text and --json); when the runtime finds no cuBLASLt,
#          the nvidia-cublas wheel next to torch (site-packages/nvidia/*/lib)
#          is used through NNCC_CUBLASLT_LIBRARY,
#       3. the GPU unit tests (runtime_cuda_tests: cuBLASLt GEMMs, PTX kernels,
#          graphs, device pointers, profiling on cuda:0), then the NCCL tests
#          (runtime_nccl_tests: collective steps of one session per GPU over
#          a one-process NCCL world, dp=2 on two GPUs, mean and sum, eager and
#          replayed from a CUDA Graph; pp=2 send/recv steps over NCCL on two
#          GPUs and dp=2 x pp=2 on four; with one GPU the two-rank tests skip,
#          saying so, and a world of one still runs ncclAllReduce); without
#          libnccl.so.2 on the linker path or in $CUDA_HOME, the nvidia-nccl
#          wheel next to torch is used through NNCC_NCCL_LIBRARY; with two
#          GPUs and a bundle packed with --nncc, the example MLP trained 20
#          steps by `nncc-run --train --devices cuda:0,cuda:1` (dp=2 over
#          NCCL) against one GPU on the global batch (losses within 1e-4),
#       4. every carried model on cuda:0 against its expected outputs,
#       5. the GPU benchmark (bench/gpu_bench.py: MLP, ResNet-style CNN and
#          encoder at batch 1 and 64, and the encoder in bf16, against PyTorch
#          eager and torch.compile), packed first when pack gets --nncc.
#       Results go to $OUT (default BUNDLE/results): summary.txt, info.txt,
#       info.json, gpu_tests.xml/.txt, models.txt (one line per model), logs/,
#       gpu_bench.md/.json.
#       Exit status 0 when everything passed.
#
# With the device tool: pack into build-rt/gpu-bundle, then
#   run(command="scripts/gpu-check.sh run build-rt/gpu-bundle", carry=["build-rt/gpu-bundle"])
set -u -o pipefail

die() { echo "gpu-check: error: $*" >&2; exit 1; }

pack() {
  local build=build-rt nncc="" max_mib="" bundle=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --build) build=$2; shift 2 ;;
      --nncc) nncc=$2; shift 2 ;;
      --max-mib) max_mib=$2; shift 2 ;;
      -*) die "unknown option '$1'" ;;
      *) bundle=$1; shift ;;
    esac
  done
  [ -n "$bundle" ] || die "pack needs a bundle folder"
  if [ -z "$max_mib" ]; then
    local tracked
    tracked=$(git -C "$(dirname "$0")/.." ls-files -z | (cd "$(dirname "$0")/.." && xargs -0 du -cb) | tail -1 | cut -f1)
    max_mib=$(( 64 - (tracked + 1048575) / 1048576 - 2 ))
  fi
  local fixtures=$build/test/unit/runtime/fixtures
  for f in "$build/lib/libnncc_runtime.so.0" "$build/bin/nncc-run" "$build/bin/nncc-info" \
           "$build/test/unit/runtime/runtime_cuda_tests" "$build/test/unit/runtime/runtime_nccl_tests" \
           "$fixtures/gpu_kernel_ok.so"; do
    [ -e "$f" ] || die "$f is missing: ninja -C $build nncc-run nncc-info runtime_cuda_tests runtime_nccl_tests"
  done
  rm -rf "$bundle"
  mkdir -p "$bundle/lib" "$bundle/bin" "$bundle/fixtures" "$bundle/models"
  cp -L "$build/lib/libnncc_runtime.so.0" "$bundle/lib/"
  cp "$build/bin/nncc-run" "$build/bin/nncc-info" "$build/test/unit/runtime/runtime_cuda_tests" \
     "$build/test/unit/runtime/runtime_nccl_tests" "$bundle/bin/"
  # Every fixture the GPU tests load (their paths are compiled in).
  local fixture
  for fixture in $(strings -a "$build/test/unit/runtime/runtime_cuda_tests" \
                              "$build/test/unit/runtime/runtime_nccl_tests" |
                   grep -oE '/fixtures/[A-Za-z0-9_]+\.so$' | sort -u); do
    cp "$fixtures/$(basename "$fixture")" "$bundle/fixtures/" ||
      die "fixture $fixture is missing: ninja -C $build runtime_cuda_tests"
  done
  cp "$0" "$bundle/gpu-check.sh"
  if [ -n "$nncc" ]; then
    # dp=2 over NCCL: the example MLP at a global batch of 16 for one GPU and
    # for two ranks, 320 random samples.
    local dp=$bundle/dp2
    mkdir -p "$dp/data"
    /usr/bin/python3 "$(dirname "$0")/../examples/models/make_models.py" "$dp" --batch 16 > /dev/null &&
      rm -f "$dp/cnn.onnx" "$dp/transformer.onnx" &&
      /usr/bin/python3 -c 'import sys, numpy as np
r = np.random.default_rng(5)
np.save(sys.argv[1] + "/x.npy", r.standard_normal((320, 64)).astype(np.float32))
np.save(sys.argv[1] + "/labels.npy", r.integers(0, 10, size=320).astype(np.int64))' "$dp/data" &&
      "$nncc" "$dp/mlp.onnx" --train --optimizer=momentum --target=cpu,cuda:sm_90 -o "$dp/mlp-dp1.so" &&
      "$nncc" "$dp/mlp.onnx" --train --optimizer=momentum --target=cpu,cuda:sm_90 --parallel=dp:2 \
        --bucket-bytes 16384 -o "$dp/mlp-dp2.so" && rm "$dp/mlp.onnx" || die "packing the dp=2 check failed"
    /usr/bin/python3 "$(dirname "$0")/../bench/gpu_bench.py" pack --nncc "$nncc" "$bundle/bench" \
      > /dev/null || die "packing the benchmark models failed"
    local used budget
    used=$(du -sb "$bundle" | cut -f1)
    budget=$(( max_mib * 1024 * 1024 - used ))
    /usr/bin/python3 "$(dirname "$0")/gpu_pack_models.py" --nncc "$nncc" \
      --pass-list "$(dirname "$0")/../test/backend/cpu_passing.txt" \
      --out "$bundle/models" --budget-bytes "$budget" || die "packing models failed"
  fi
  echo "gpu-check: bundle $bundle: $(du -sh "$bundle" | cut -f1) of $max_mib MiB," \
       "$(find "$bundle/models" -name model.so | wc -l) models"
}

run() {
  local bundle=${1:-}
  [ -d "$bundle" ] || die "run needs the bundle folder made by 'pack'"
  bundle=$(cd "$bundle" && pwd)
  local out=${OUT:-$bundle/results}
  mkdir -p "$out/logs"
  export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local summary=$out/summary.txt status=0
  : > "$summary"
  note() { echo "$*" | tee -a "$summary"; }
  # Seconds left of the budget, less `reserve` for the steps after this one.
  local deadline=$(( SECONDS + ${NNCC_GPU_CHECK_BUDGET_S:-540} ))
  left() { local l=$(( deadline - SECONDS - ${1:-0} )); echo $(( l > 5 ? l : 5 )); }

  # 1. Dependencies: the runtime loads CUDA itself; nothing else may be missing.
  local missing=0
  for f in "$bundle"/lib/*.so* "$bundle"/bin/* "$bundle"/fixtures/*.so; do
    if ldd "$f" 2>&1 | grep -q "not found"; then
      note "ldd: $f: $(ldd "$f" | grep 'not found' | tr -s ' \t' ' ' | tr '\n' ';')"
      missing=1
    fi
  done
  [ $missing = 0 ] && note "ldd: every dependency resolves" || status=1

  # 2. What the runtime finds. Without cuBLASLt on the linker path or in
  # $CUDA_HOME, the one of the nvidia-cublas wheel torch uses will do.
  timeout 30 "$bundle/bin/nncc-info" > "$out/info.txt" 2>&1 || status=1
  if [ -z "${NNCC_CUBLASLT_LIBRARY:-}" ] && grep -q '^  cuBLASLt: no cuBLASLt found' "$out/info.txt"; then
    local wheel
    wheel=$(timeout 30 python3 -c 'import glob, os, nvidia
print("\n".join(sorted(f for p in nvidia.__path__ for f in glob.glob(os.path.join(p, "*", "lib", "libcublasLt.so*")))))' 2>/dev/null | head -1)
    if [ -n "$wheel" ]; then
      export NNCC_CUBLASLT_LIBRARY=$wheel
      note "cuBLASLt: none on the linker path or in \$CUDA_HOME; using $wheel"
      timeout 30 "$bundle/bin/nncc-info" > "$out/info.txt" 2>&1 || status=1
    fi
  fi
  timeout 30 "$bundle/bin/nncc-info" --json > "$out/info.json" 2>&1 || status=1
  note "nncc-info: $(grep -E '^  (driver|cuBLASLt|cuda:0|not available)' "$out/info.txt" | tr -s ' ' | tr '\n' ';')"

  # 3. GPU unit tests (seconds on a GPU), leaving the later steps 330 s.
  local limit
  limit=$(left 330); [ "$limit" -gt 120 ] && limit=120
  NNCC_TEST_FIXTURE_DIR="$bundle/fixtures" NNCC_TEST_TMP_DIR="$out/logs" \
    timeout "$limit" "$bundle/bin/runtime_cuda_tests" --gtest_output="xml:$out/gpu_tests.xml" \
    > "$out/gpu_tests.txt" 2>&1
  local rc=$?
  note "GPU unit tests (exit $rc): $(grep -E '^\[  (PASSED  |FAILED  |SKIPPED )\] [0-9]' "$out/gpu_tests.txt" | tr '\n' ' ')"
  [ $rc = 0 ] || status=1
  grep -q '^\[  SKIPPED \] [0-9]' "$out/gpu_tests.txt" && status=1 # a GPU machine skips nothing

  # 3b. NCCL: libnccl.so.2 from the linker path or $CUDA_HOME, else the
  # nvidia-nccl wheel torch uses. Two-rank tests need two GPUs: with one they
  # skip, and the summary says so (not a failure); dp=2 x tp=2 and dp=2 x pp=2
  # in one process (NcclTensorParallel, NcclPipeline: ncclCommSplit) need four
  # and skip with fewer.
  if [ -z "${NNCC_NCCL_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2' &&
     [ ! -e "${CUDA_HOME:-/usr/local/cuda}/lib64/libnccl.so.2" ]; then
    local nccl
    nccl=$(timeout 30 python3 -c 'import glob, os, nvidia
print("\n".join(sorted(f for p in nvidia.__path__ for f in glob.glob(os.path.join(p, "*", "lib", "libnccl.so*")))))' 2>/dev/null | head -1)
    if [ -n "$nccl" ]; then
      export NNCC_NCCL_LIBRARY=$nccl
      note "NCCL: none on the linker path or in \$CUDA_HOME; using $nccl"
    fi
  fi
  local gpus
  gpus=$(grep -cE '^  cuda:[0-9]+  .*sm_[0-9]' "$out/info.txt")
  limit=$(left 300); [ "$limit" -gt 60 ] && limit=60
  NNCC_TEST_FIXTURE_DIR="$bundle/fixtures" NNCC_TEST_TMP_DIR="$out/logs" \
  NNCC_TEST_NNCC_RUN="$bundle/bin/nncc-run" \
    timeout "$limit" "$bundle/bin/runtime_nccl_tests" --gtest_filter='Nccl.*:NcclTensorParallel.*:NcclPipeline.*' \
    --gtest_output="xml:$out/nccl_tests.xml" \
    > "$out/nccl_tests.txt" 2>&1
  rc=$?
  note "NCCL tests on $gpus GPU(s) (exit $rc): $(grep -E '^\[  (PASSED  |FAILED  |SKIPPED )\] [0-9]' "$out/nccl_tests.txt" | tr '\n' ' ')"
  [ $rc = 0 ] || status=1
  if [ "$gpus" -lt 2 ]; then
    note "NCCL: dp=2 over NCCL skipped: this machine has $gpus GPU (needs 2)"
  elif grep -q '^\[  SKIPPED \] Nccl\.' "$out/nccl_tests.txt"; then
    status=1 # two GPUs run every NCCL test (the failure cases need the host fixtures)
  fi
  # 3c. All-reduce bus bandwidth between the local GPUs (docs/distributed.md,
  # "Figures"): the scaling model's busbw and latency on this machine.
  if [ "$gpus" -ge 2 ]; then
    if timeout 60 "$bundle/bin/nncc-info" --bandwidth --sizes 8,64K,1M,16M,256M --iters 20 \
         > "$out/bandwidth.txt" 2>&1; then
      note "bandwidth: $(grep -E '^ +(8|268435456) ' "$out/bandwidth.txt" | tr -s ' ' | tr '\n' ';')"
    else
      note "bandwidth: nncc-info --bandwidth failed (see bandwidth.txt)"
      status=1
    fi
  fi
  if [ "$gpus" -ge 2 ] && [ -d "$bundle/dp2" ]; then
    local dp=$bundle/dp2 train="--train --data $bundle/dp2/data --steps 20 --lr 0.05"
    if timeout 60 "$bundle/bin/nncc-run" "$dp/mlp-dp1.so" --device cuda:0 $train \
         --loss-file "$out/dp1-losses.txt" > "$out/logs/dp1.txt" 2>&1 &&
       timeout 60 "$bundle/bin/nncc-run" "$dp/mlp-dp2.so" --devices cuda:0,cuda:1 $train \
         --loss-file "$out/dp2-losses.txt" > "$out/logs/dp2.txt" 2>&1; then
      local cmp
      cmp=$(python3 -c 'import sys
a = [float(l) for l in open(sys.argv[1])]; b = [float(l) for l in open(sys.argv[2])]
d = max(abs(x - y) / max(abs(x), 1e-30) for x, y in zip(a, b)) if len(a) == len(b) == 20 else float("inf")
print(f"{a[0]:.6f} -> {a[-1]:.6f}, worst relative difference {d:.2g}", "ok" if d < 1e-4 else "FAIL")' \
        "$out/dp1-losses.txt" "$out/dp2-losses.txt" 2>&1)
      note "NCCL: MLP dp=2 on cuda:0,cuda:1 against one GPU: $cmp"
      [ "${cmp##* }" = ok ] || status=1
    else
      note "NCCL: MLP dp=2 on cuda:0,cuda:1 FAILED: $(tail -1 "$out/logs/dp1.txt" "$out/logs/dp2.txt" | tr '\n' ' ')"
      status=1
    fi
  fi

  # 4. Compiled backend models on cuda:0, 8 at a time (one process each, 30 s
  # at most), leaving the benchmark 240 s; a model not run in time fails.
  local models
  models=$(find "$bundle/models" -mindepth 1 -maxdepth 1 -type d | sort)
  if [ -n "$models" ]; then
    limit=$(left 240); [ "$limit" -gt 150 ] && limit=150
    echo "$models" | timeout "$limit" xargs -P 8 -I{} sh -c '
      d={}; name=$(basename "$d")
      if timeout 30 "$0" "$d/model.so" --device cuda:0 --input-dir "$d/input" \
           --compare "$d/expected" > "$1/logs/$name.txt" 2>&1
      then echo "pass $name"; else echo "FAIL $name: $(tail -1 "$1/logs/$name.txt")"; fi
    ' "$bundle/bin/nncc-run" "$out" | sort -k2 > "$out/models.txt"
    local passed failed total
    passed=$(grep -c '^pass ' "$out/models.txt")
    failed=$(grep -c '^FAIL ' "$out/models.txt")
    total=$(echo "$models" | wc -l)
    note "models on cuda:0: $passed passed, $failed failed, $(( total - passed - failed )) not run in ${limit} s (models.txt, logs/)"
    [ "$failed" = 0 ] && [ $(( passed + failed )) = "$total" ] || status=1
  else
    note "models on cuda:0: none carried (pack with --nncc)"
  fi
  # 5. nncc against PyTorch on the zoo models (same graphs, weights, inputs).
  if [ -d "$bundle/bench" ]; then
    # gpu_bench.md and .json are rewritten as each row finishes: a timeout
    # keeps the rows done.
    timeout "$(left 10)" python3 "$(dirname "$0")/../bench/gpu_bench.py" run --bundle "$bundle/bench" \
      --nncc-run "$bundle/bin/nncc-run" --out "$out" > "$out/logs/gpu_bench.txt" 2>&1
    rc=$?
    note "GPU benchmark (exit $rc): gpu_bench.md"
    [ $rc = 0 ] || status=1
  fi
  note "gpu-check: $([ $status = 0 ] && echo PASSED || echo FAILED)"
  return $status
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 1 ;;
esac
