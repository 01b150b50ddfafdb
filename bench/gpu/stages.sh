# Sourced by bench/gpu-check: the stages, each run in a process of its own
# (`gpu-check --stage FUNCTION ARGS...`) under a time limit by the runner
# (runner.sh), which sends the stage's output to its log file (stage_log).
# A stage writes its one-line result with `result` as soon as it knows it,
# so that a stage stopped at its limit still says how far it got; it exits
# 0 when it passed, GPU_CHECK_SKIPPED when it could not run here, anything
# else when it failed.
#
# The runner sets: GPU_CHECK_REPO, GPU_CHECK_BUILD, GPU_CHECK_PREFIX,
# GPU_CHECK_STATE (a folder for results), GPU_CHECK_STAGE (this stage's
# name), GPU_CHECK_STAGE_END (when its time is up, in seconds since the
# epoch), GPU_CHECK_JOBS, GPU_CHECK_DEVICE, GPU_CHECK_EPOCHS,
# GPU_CHECK_ORIGINAL_LD_LIBRARY_PATH.

readonly GPU_CHECK_SKIPPED=77
# The benchmark's batch sizes and windows: the median samples/s of 5
# windows of 50 steps.
readonly GPU_CHECK_BENCH_BATCHES=(64 512) GPU_CHECK_BENCH_STEPS=50 GPU_CHECK_BENCH_WINDOWS=5

# Their output goes to a file: stdbuf makes kiln's line-buffered, so that a
# program stopped at its limit has shown how far it got.
GPU_CHECK_LINE_BUFFERED=()
command -v stdbuf >/dev/null && GPU_CHECK_LINE_BUFFERED=(stdbuf -oL)

stage_log() { echo "$GPU_CHECK_STATE/$GPU_CHECK_STAGE.log"; }
result() { printf '%s\n' "$*" >"$GPU_CHECK_STATE/$GPU_CHECK_STAGE.result"; }
# A number for the benchmark table.
value() { printf '%s\n' "$1" >"$GPU_CHECK_STATE/$GPU_CHECK_STAGE.value"; }
skip() {
  result "$*"
  exit "$GPU_CHECK_SKIPPED"
}

# Runs a command without the prefix's libraries (PyTorch brings its own,
# and Debian's older ones must not shadow the machine's).
without_prefix_libs() {
  local original=$GPU_CHECK_ORIGINAL_LD_LIBRARY_PATH
  env -u LD_LIBRARY_PATH ${original:+"LD_LIBRARY_PATH=$original"} "$@"
}

# join_by SEPARATOR WORDS...
join_by() {
  local separator=$1 joined=$2 word
  shift 2
  for word in "$@"; do joined+=$separator$word; done
  printf '%s' "$joined"
}

fashion_mnist_folder() { echo "$GPU_CHECK_PREFIX/usr/share/datasets/fashion-mnist"; }

# The seconds a program started now inside this stage may run: what is
# left of the stage's time, less 5 s to report on it.
inner_limit() {
  local left=$((GPU_CHECK_STAGE_END - $(date +%s) - 5))
  echo $((left > 1 ? left : 1))
}

# The last line of the stage's output, which says what went wrong when a
# program failed.
last_output_line() { grep -v '^[[:space:]]*$' "$(stage_log)" | tail -n 1 | cut -c1-200; }

# What went wrong when `kiln run` failed: its message (a Lua traceback
# follows it), else the last line.
kiln_failure() {
  local message
  message=$(grep -m 1 '^kiln run: ' "$(stage_log)" | cut -c1-200)
  echo "${message:-$(last_output_line)}"
}

stage_host() {
  local versions=() missing=() tool torch
  grep -h PRETTY_NAME /etc/os-release 2>/dev/null
  uname -a
  echo "cores: $(nproc)"
  free -g 2>/dev/null | head -n 2
  echo "PATH=$PATH"
  for tool in g++ cmake nvcc ninja python3; do echo "$tool: $(command -v "$tool" || echo missing)"; done
  # g++ and cmake build kiln; without nvcc the build is CPU-only.
  if command -v g++ >/dev/null; then versions+=("g++ $(g++ -dumpfullversion)"); else missing+=(g++); fi
  if command -v cmake >/dev/null; then
    versions+=("cmake $(cmake --version | awk 'NR == 1 { print $3 }')")
  else
    missing+=(cmake)
  fi
  if command -v nvcc >/dev/null; then
    versions+=("nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')")
  else
    versions+=("no nvcc: a build without CUDA")
  fi
  if command -v ninja >/dev/null; then
    versions+=("ninja $(ninja --version)")
  else
    versions+=("no ninja: the prefix's is used")
  fi
  torch=$(without_prefix_libs python3 -c \
    'import torch; print("torch", torch.__version__, "sees", torch.cuda.device_count(), "GPU(s)")' 2>/dev/null) ||
    torch="no PyTorch"
  versions+=("$torch")
  result "$(join_by "; " "$(nproc) cores" "${versions[@]}" ${missing[*]:+"missing: ${missing[*]}"})"
  ((${#missing[@]} == 0))
}

stage_unpack() {
  unpack_debs "$GPU_CHECK_REPO/.deps/debs" "$GPU_CHECK_PREFIX"
  local rc=$?
  result "$(last_output_line)"
  return "$rc"
}

# CMake's first error with the two lines after it, on one line.
first_cmake_error() {
  awk '/CMake Error/ { found = 1 } found && NF { printf "%s%s", (n++ ? " " : ""), $0 } n == 3 { exit }' \
    "$(stage_log)" | tr -s ' ' | cut -c1-200
}

cmake_configure() {
  local -a options
  mapfile -t options < <(prefix_cmake_options "$GPU_CHECK_PREFIX")
  cmake -S "$GPU_CHECK_REPO" -B "$GPU_CHECK_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 "${options[@]}" "$@"
}

# The folder of PyTorch's cuDNN (the nvidia-cudnn wheel: include/ and
# lib/), or nothing.
pytorch_cudnn_dir() {
  without_prefix_libs python3 -c 'import nvidia.cudnn as c; print(list(c.__path__)[0])' 2>/dev/null
}

# The CMake options that take cuDNN from PyTorch's wheel, which has the
# library only as libcudnn.so.9, a name find_library does not look for.
pytorch_cudnn_options() {
  local dir library
  dir=$(pytorch_cudnn_dir)
  library=$(find "$dir/lib" -maxdepth 1 -name 'libcudnn.so*' 2>/dev/null | sort | head -n 1)
  [[ -n $dir && -f $dir/include/cudnn.h && -n $library ]] || return 1
  echo "-DCUDNN_INCLUDE_DIR=$dir/include"
  echo "-DCUDNN_LIBRARY=$library"
}

stage_configure() {
  local -a cudnn=()
  local found in_prefix cuda
  if ! cmake_configure; then
    # A GPU machine may have cuDNN only inside PyTorch.
    grep -q 'Could NOT find CUDNN' "$(stage_log)" && mapfile -t cudnn < <(pytorch_cudnn_options)
    if ((${#cudnn[@]} == 0)); then
      result "$(first_cmake_error)"
      return 1
    fi
    echo "no cuDNN on the machine: PyTorch's (${cudnn[*]})"
    cmake_configure "${cudnn[@]}" || { result "$(first_cmake_error)"; return 1; }
  fi
  echo "what CMake found:"
  found=$(check_found_in_prefix "$GPU_CHECK_BUILD" "$GPU_CHECK_PREFIX")
  in_prefix=$?
  echo "$found"
  echo "from the machine:"
  cache_values "$GPU_CHECK_BUILD" CMAKE_CXX_COMPILER CMAKE_CUDA_COMPILER CUDA_cublasLt_LIBRARY CUDNN_INCLUDE_DIR \
    CUDNN_LIBRARY
  cuda=$(cache_value "$GPU_CHECK_BUILD" KILN_WITH_CUDA)
  if ((in_prefix != 0)); then
    result "CUDA $cuda; $(tail -n 1 <<<"$found")"
    return 1
  fi
  ((${#cudnn[@]})) && cuda+=" (cuDNN from PyTorch)"
  result "CUDA $cuda; dnnl, OpenCL, Catch2, Boost, Lua and zlib from the prefix"
}

# The kiln executable with its libraries and plugins first (the training
# and benchmark stages need no more), then the device tests, then
# everything else, going on past errors so that one broken test does not
# keep the rest from being built, and so that a build stopped at its limit
# has built what matters most on a GPU machine.
stage_build() {
  local kiln="kiln did not build"
  if cmake --build "$GPU_CHECK_BUILD" -j "$GPU_CHECK_JOBS" --target kiln_cli; then
    touch "$GPU_CHECK_STATE/kiln-built"
    kiln="kiln built"
  fi
  cmake --build "$GPU_CHECK_BUILD" -j "$GPU_CHECK_JOBS" --target kiln_gpu_tests kiln_gpu_trainer_precision -- -k 0
  if ! cmake --build "$GPU_CHECK_BUILD" -j "$GPU_CHECK_JOBS" -- -k 0; then
    result "$kiln; $(grep -m 1 -E 'error|Error' "$(stage_log)" | cut -c1-200)"
    return 1
  fi
  result "-j $GPU_CHECK_JOBS"
}

stage_nvidia_smi() {
  nvidia-smi || { result "nvidia-smi failed"; return 1; }
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1 >"$GPU_CHECK_STATE/memory-at-start"
  result "$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n 1)"
}

stage_kiln_info() {
  "$GPU_CHECK_BUILD/bin/kiln" info || { result "$(last_output_line)"; return 1; }
  # "build: Release, GCC 13.3.0, CUDA on, NCCL off" and the line of the cuda devices.
  result "$(sed -n 's/^build: //p' "$(stage_log)"); $(sed -n 's/^ *cuda  */cuda devices: /p' "$(stage_log)" |
    cut -c1-200 | sed 's/ *$//')"
}

# "57 tests: 50 passed, 2 failed (a, b), 5 skipped", from CTest's lines
# for each test (so that it also counts a run stopped midway).
ctest_summary() {
  awk '
    / Test +#[0-9]+: / {
      split($1, of, "/"); total = of[2]
      name = $0; sub(/.*Test +#[0-9]+: /, "", name); sub(/ .*/, "", name)
      if ($0 ~ /\*\*\*Skipped|Not Run \(Disabled\)/) skipped++
      else if ($0 ~ / Passed /) passed++
      else { failed++; names = names (failed > 1 ? ", " : "") name }
    }
    END {
      ran = passed + failed + skipped
      printf "%s%d tests: %d passed, %d failed%s, %d skipped", (ran < total ? "ran " ran " of " : ""),
        (ran < total ? total : ran), passed, failed, (failed ? " (" names ")" : ""), skipped
    }' "$(stage_log)" | cut -c1-300
}

# Runs CTest with these arguments on the build's tests; passes when none
# failed. The results are counted as the tests finish, in case the stage's
# limit stops the run.
run_ctest() {
  local line
  ctest --test-dir "$GPU_CHECK_BUILD" "$@" -j "$GPU_CHECK_JOBS" --timeout 120 --output-on-failure 2>&1 |
    while IFS= read -r line; do
      printf '%s\n' "$line"
      [[ $line == *" Test "*"#"* ]] && result "$(ctest_summary)"
    done
  local rc=${PIPESTATUS[0]}
  result "$(ctest_summary)"
  return "$rc"
}

stage_gpu_tests() { run_ctest -R '^gpu/'; }

stage_all_tests() { run_ctest -E '^gpu/'; }

# NCCL between the GPUs, one rank per GPU (kiln launch --nproc-per-node
# gpu): all-reduce bandwidth from 1 KB to 256 MB; reports the largest.
stage_nccl_allreduce() {
  timeout "$(inner_limit)" "$GPU_CHECK_BUILD/bin/kiln" launch --nproc-per-node gpu --no-lua \
    "$GPU_CHECK_BUILD/bench/kiln_allreduce_bench" nccl || { result "$(last_output_line)"; return 1; }
  result "$(sed -n 's/^\[rank 0\] *268435456 *\([0-9.]*\) *\([0-9.]*\)$/256 MB all-reduce: \1 us, bus \2 GB\/s/p' \
    "$(stage_log)")"
}

# Trains examples/fashion_mnist.lua on the device for the epochs the stage's
# time allows, and reports the last test accuracy; the log keeps the
# training report (the step split, timed with events on the GPU's stream).
stage_train() {
  local limit epochs=$GPU_CHECK_EPOCHS finished=0 accuracy="" rate="" line
  limit=$(inner_limit)
  timeout "$limit" "${GPU_CHECK_LINE_BUFFERED[@]}" "$GPU_CHECK_BUILD/bin/kiln" run --threads "$GPU_CHECK_JOBS" --report \
    "$GPU_CHECK_REPO/examples/fashion_mnist.lua" "$epochs" "$(fashion_mnist_folder)" "$GPU_CHECK_DEVICE" 2>&1 |
    while IFS= read -r line; do
      printf '%s\n' "$line"
      if [[ $line =~ ^epoch\ ([0-9]+):\ test\ accuracy\ ([0-9.]+) ]]; then
        finished=${BASH_REMATCH[1]} accuracy=${BASH_REMATCH[2]}
      elif [[ $line =~ ([0-9.]+)\ samples/s\ in\ training ]]; then
        rate=${BASH_REMATCH[1]}
      else
        continue
      fi
      result "test accuracy $accuracy after $finished of $epochs epochs on $GPU_CHECK_DEVICE${rate:+, $rate samples/s}"
    done
  local rc=${PIPESTATUS[0]}
  ((rc == 0)) && return 0
  if ((rc == 124)); then
    if grep -q '^epoch [0-9]*: test accuracy' "$(stage_log)"; then
      result "$(cat "$GPU_CHECK_STATE/$GPU_CHECK_STAGE.result"); stopped there by the $limit s limit"
      return 0
    fi
    # The trainer's last progress line ("epoch 1/10 step 200/938 ...") says how far it got.
    result "no epoch finished on $GPU_CHECK_DEVICE within $limit s;" \
      "$(grep -E '^epoch [0-9]+/[0-9]+ step' "$(stage_log)" | tail -n 1 | cut -c1-120)"
  else
    result "$(kiln_failure)"
  fi
  return 1
}

# The samples/s a benchmark printed ("train N samples/s") at batch $1;
# $2 is the benchmark's exit status.
bench_result() {
  local rate
  rate=$(sed -n 's/.*train \([0-9.]*\) samples\/s.*/\1/p' "$(stage_log)" | tail -n 1)
  if [[ -z $rate ]]; then
    result "$(kiln_failure)"
    (($2 != 0)) && return "$2"
    return 1
  fi
  value "$rate"
  if (($2 != 0)); then
    result "$rate samples/s at batch $1 on $GPU_CHECK_DEVICE, then exit status $2"
    return "$2"
  fi
  local wait
  wait=$(sed -n 's/.*input wait per step: \(host [0-9.]* ms, device [0-9.]* ms\).*/\1/p' "$(stage_log)" | tail -n 1)
  result "$rate samples/s at batch $1 on $GPU_CHECK_DEVICE${wait:+ (input wait per step: $wait)}"
}

stage_bench_kiln() {
  local batch=$1
  timeout "$(inner_limit)" "${GPU_CHECK_LINE_BUFFERED[@]}" "$GPU_CHECK_BUILD/bin/kiln" run \
    --threads "$GPU_CHECK_JOBS" "$GPU_CHECK_REPO/bench/fashion_mnist_train.lua" "$GPU_CHECK_BENCH_STEPS" \
    "$GPU_CHECK_BENCH_WINDOWS" "$batch" "$GPU_CHECK_DEVICE" "$(fashion_mnist_folder)"
  bench_result "$batch" $?
}

stage_bench_torch() {
  local batch=$1 cuda
  cuda=$(without_prefix_libs python3 -c 'import torch; print(torch.cuda.is_available())' 2>/dev/null) ||
    skip "no PyTorch for python3"
  if [[ $GPU_CHECK_DEVICE == cuda* && $cuda != True ]]; then
    result "PyTorch sees no GPU"
    return 1
  fi
  # OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE slow PyTorch down (bench/README.md).
  without_prefix_libs timeout "$(inner_limit)" env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONUNBUFFERED=1 \
    python3 "$GPU_CHECK_REPO/bench/torch_fashion_mnist.py" --threads "$GPU_CHECK_JOBS" --batch "$batch" \
    --steps "$GPU_CHECK_BENCH_STEPS" --windows "$GPU_CHECK_BENCH_WINDOWS" --device "$GPU_CHECK_DEVICE" \
    --data "$(fashion_mnist_folder)"
  bench_result "$batch" $?
}

# The GPU's memory once every stage's programs have exited, against the
# start: what a process still holds, or memory that was not given back.
stage_gpu_memory() {
  nvidia-smi --query-gpu=memory.used,memory.free,memory.total --format=csv || { result "nvidia-smi failed"; return 1; }
  local used start apps
  used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1)
  start=$(cat "$GPU_CHECK_STATE/memory-at-start" 2>/dev/null || echo "?")
  apps=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader)
  echo "processes on the GPU: ${apps:-none}"
  result "$used MiB used at exit, $start MiB at start; processes on the GPU: ${apps:-none}"
  [[ -z $apps && $start =~ ^[0-9]+$ ]] && ((used <= start + 64))
}
