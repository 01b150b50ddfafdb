#!/usr/bin/env bash
# Tests of bench/gpu-check's own logic, none of which needs a GPU: the
# command line, the choice of packages, unpacking (with dpkg-deb and with ar
# and tar), the check that CMake took the prefix's packages, the parsing of
# CTest's and the benchmarks' output, and the runner's limits, skips and
# failures. Run by CTest as bench/gpu_check.
set -uo pipefail

repo=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/gpu/packages.sh
source "$repo/bench/gpu/packages.sh"
# shellcheck source=bench/gpu/prefix.sh
source "$repo/bench/gpu/prefix.sh"
# shellcheck source=bench/gpu/stages.sh
source "$repo/bench/gpu/stages.sh"
# shellcheck source=bench/gpu/runner.sh
source "$repo/bench/gpu/runner.sh"

passed=0 failed=0
check() {
  local what=$1 expected=$2 actual=$3
  if [[ $actual == "$expected" ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    printf 'FAILED: %s\n  expected: %s\n  actual:   %s\n' "$what" "$expected" "$actual"
  fi
}

# ---- the command line ---------------------------------------------------------
usage_error() { "$repo/bench/gpu-check" "$@" 2>&1 >/dev/null | head -n 1; }
check "--jobs 0" "gpu-check: --jobs expects a whole number > 0, got '0'" "$(usage_error --jobs 0)"
check "--device tpu" "gpu-check: --device expects cpu or cuda:N, got 'tpu'" "$(usage_error --device tpu)"
check "a missing value" "gpu-check: --budget needs a value" "$(usage_error --budget)"
check "an unknown argument" "gpu-check: unknown argument '--fast'" "$(usage_error --fast)"
check "KILN_GPU_CHECK_JOBS" "gpu-check: KILN_GPU_CHECK_JOBS expects a whole number > 0, got 'all'" \
  "$(KILN_GPU_CHECK_JOBS=all usage_error --dry-run)"
"$repo/bench/gpu-check" --jobs 0 >/dev/null 2>&1
check "a usage error's exit status" 2 $?

# ---- which dependencies are downloaded ------------------------------------------
printf '%s\n' libc6 zlib1g libstdc++6 >"$work/base"
has_candidate() { [[ $1 == ocl-icd-libopencl1 || $1 == libreadline-dev ]]; }
check "a dependency the machine has" "" "$(resolve_group "libc6 (>= 2.34)" "$work/base")"
check "an exact version, though the machine has one" zlib1g \
  "$(resolve_group "zlib1g (= 1:1.2.13.dfsg-1)" "$work/base")"
check "the first installable alternative" ocl-icd-libopencl1 \
  "$(resolve_group "libopencl1|ocl-icd-libopencl1 (>= 1.0)" "$work/base")"
check "an alternative the machine has" "" "$(resolve_group "libopencl1|libstdc++6" "$work/base")"
check "nothing installable" "gpu-check: no installable package for the dependency 'libfoo|libbar'" \
  "$(resolve_group "libfoo|libbar" "$work/base" 2>&1)"

# ---- unpacking -----------------------------------------------------------------
check "no .debs" "gpu-check: no .deb in $work/none: run bench/gpu-check --prepare first" \
  "$(unpack_debs "$work/none" "$work/prefix" 2>&1)"
if command -v dpkg-deb >/dev/null && command -v ar >/dev/null; then
  # A -dev package whose .so link is absolute, as zlib1g-dev's is.
  package=$work/package
  mkdir -p "$package/DEBIAN" "$package/lib/x86_64-linux-gnu" "$package/usr/lib/x86_64-linux-gnu" "$work/debs"
  printf 'Package: libexample-dev\nVersion: 1.0\nArchitecture: all\nMaintainer: kiln\nDescription: test\n' \
    >"$package/DEBIAN/control"
  echo library >"$package/lib/x86_64-linux-gnu/libexample.so.1"
  ln -s /lib/x86_64-linux-gnu/libexample.so.1 "$package/usr/lib/x86_64-linux-gnu/libexample.so"
  dpkg-deb -Zxz -b "$package" "$work/debs/libexample-dev.deb" >/dev/null
  # Without dpkg: a dpkg-deb that fails, as a missing one would.
  mkdir -p "$work/no-dpkg"
  printf '#!/bin/sh\nexit 127\n' >"$work/no-dpkg/dpkg-deb"
  chmod +x "$work/no-dpkg/dpkg-deb"
  for unpacker in dpkg-deb ar; do
    prefix=$work/prefix-$unpacker
    if [[ $unpacker == ar ]]; then
      summary=$(PATH=$work/no-dpkg:$PATH unpack_debs "$work/debs" "$prefix" | tail -n 1)
    else
      summary=$(unpack_debs "$work/debs" "$prefix" | tail -n 1)
    fi
    check "unpacked with $unpacker" library "$(cat "$prefix/usr/lib/x86_64-linux-gnu/libexample.so")"
    check "an absolute link points into the prefix ($unpacker)" "$prefix/lib/x86_64-linux-gnu/libexample.so.1" \
      "$(readlink "$prefix/usr/lib/x86_64-linux-gnu/libexample.so")"
    check "the summary ($unpacker)" "1 packages, $(du -sh "$prefix" | cut -f1) in $prefix" "$summary"
  done
  check "a prefix already unpacked from the same .debs is kept" "" \
    "$(unpack_debs "$work/debs" "$work/prefix-ar" | grep unpacking)"
else
  echo "skipped the unpacking checks: dpkg-deb or ar is missing"
fi

# ---- what CMake found -------------------------------------------------------------
mkdir -p "$work/build"
cat >"$work/build/CMakeCache.txt" <<EOF
dnnl_DIR:PATH=$work/prefix/usr/lib/x86_64-linux-gnu/cmake/dnnl
KILN_LUA_INCLUDE_DIR:PATH=$work/prefix/usr/include/lua5.4
KILN_LUA_LIBRARY:FILEPATH=/usr/lib/x86_64-linux-gnu/liblua5.4-c++.so
EOF
check "a dependency from outside the prefix" "found outside the prefix: KILN_LUA_LIBRARY" \
  "$(check_found_in_prefix "$work/build" "$work/prefix" | tail -n 1)"
check_found_in_prefix "$work/build" "$work/prefix" >/dev/null
check "its exit status" 1 $?
sed -i '/KILN_LUA_LIBRARY/d' "$work/build/CMakeCache.txt"
check_found_in_prefix "$work/build" "$work/prefix" >/dev/null
check "all from the prefix" 0 $?

# ---- a stage's output ----------------------------------------------------------------
export GPU_CHECK_STATE=$work/state
GPU_CHECK_STAGE=example GPU_CHECK_DEVICE=cuda:0
mkdir -p "$GPU_CHECK_STATE"
cat >"$(stage_log)" <<'EOF'
      Start  1: unit/a
1/5 Test  #1: unit/a ...........................   Passed    0.01 sec
2/5 Test  #2: unit/b ...........................***Failed    0.01 sec
3/5 Test  #3: gpu/c ............................***Skipped   0.00 sec
4/5 Test  #4: unit/d ...........................***Timeout 120.01 sec
EOF
check "a CTest run stopped midway" "ran 4 of 5 tests: 1 passed, 2 failed (unit/b, unit/d), 1 skipped" \
  "$(ctest_summary)"
echo "5/5 Test  #5: unit/e ...........................   Passed    0.02 sec" >>"$(stage_log)"
check "a whole CTest run" "5 tests: 2 passed, 2 failed (unit/b, unit/d), 1 skipped" "$(ctest_summary)"

echo "kiln 0.1.0 on cuda:0: train 1234.5 samples/s (median of 5 windows of 50 steps, batch 64)" >"$(stage_log)"
bench_result 64 0
check "a benchmark's exit status" 0 $?
check "a benchmark's result" "1234.5 samples/s at batch 64 on cuda:0" "$(cat "$work/state/example.result")"
check "a benchmark's number" 1234.5 "$(cat "$work/state/example.value")"
echo "kiln 0.1.0 on cuda:0: train 99.0 samples/s (median of 5 windows of 50 steps, batch 512; min 98.0," \
  "max 99.5); input wait per step: host 0.125 ms, device 0.010 ms" >"$(stage_log)"
bench_result 512 0
check "a benchmark's result with its input wait" \
  "99.0 samples/s at batch 512 on cuda:0 (input wait per step: host 0.125 ms, device 0.010 ms)" \
  "$(cat "$work/state/example.result")"
printf '%s\n' "kiln run: kiln_loader_create: device cuda:0 is not available" "stack traceback:" \
  "	[C]: in field 'loader'" >"$(stage_log)"
bench_result 64 1
check "a failed benchmark's exit status" 1 $?
check "what made a benchmark fail" "kiln run: kiln_loader_create: device cuda:0 is not available" \
  "$(cat "$work/state/example.result")"

# ---- the runner ----------------------------------------------------------------
# A stand-in for bench/gpu-check --stage: each stage is one behaviour.
cat >"$work/stage" <<'EOF'
#!/usr/bin/env bash
result() { printf '%s\n' "$*" >"$GPU_CHECK_STATE/$GPU_CHECK_STAGE.result"; }
case $2 in
  pass) result "all good" ;;
  fail) echo "it broke"; exit 3 ;;
  skip) result "not here"; exit 77 ;;
  hang) result "halfway"; sleep 60 ;;
esac
EOF
chmod +x "$work/stage"
GPU_CHECK_SELF=$work/stage GPU_CHECK_LOG=$work/log GPU_CHECK_TIME_SCALE=1 GPU_CHECK_RESERVE=0
GPU_CHECK_HAS_GPU=0 GPU_CHECK_DEVICE=cpu GPU_CHECK_DEADLINE=$(($(date +%s) + 100))
run_stage passes 10 - pass >/dev/null
run_stage fails 10 - fail >/dev/null
run_stage skips 10 - skip >/dev/null
run_stage hangs 5 - hang >/dev/null
run_stage after-a-failure 10 fails pass >/dev/null
run_stage needs-gpu 10 gpu pass >/dev/null
run_stage needs-kiln 10 kiln pass >/dev/null
run_stage on-the-cpu 10 device pass >/dev/null
GPU_CHECK_DEADLINE=$(($(date +%s) + 3))
run_stage too-late 10 - pass >/dev/null
check "rows" "passes	ok	all good
fails	FAILED	exit status 3
skips	skipped	not here
hangs	timed out	stopped at 5 s; halfway
after-a-failure	skipped	needs fails, which did not pass
needs-gpu	skipped	no GPU
needs-kiln	skipped	kiln did not build
on-the-cpu	ok	all good
too-late	skipped	out of time" "$(cut -f1,2,4 "$work/state/rows")"
check "a stage's output in the log" 1 "$(grep -c '^it broke$' "$work/log")"

echo "$passed passed, $failed failed"
((failed == 0))
