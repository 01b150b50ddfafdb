# Sourced by bench/gpu-check: runs each stage (stages.sh) in a process of
# its own under a time limit, so that a stage that fails, hangs or crashes
# stops only itself; logs everything; prints the table of results.
#
# Uses: GPU_CHECK_SELF, GPU_CHECK_STATE, GPU_CHECK_LOG, GPU_CHECK_DEADLINE,
# GPU_CHECK_TIME_SCALE, GPU_CHECK_RESERVE, GPU_CHECK_HAS_GPU,
# GPU_CHECK_DEVICE.

declare -A GPU_CHECK_STATUS=()
# A stage's output beyond this goes into the log as its head and tail.
readonly GPU_CHECK_LOG_CAP=$((1024 * 1024))

say() { printf '%s\n' "$*" | tee -a "$GPU_CHECK_LOG"; }

# Why a stage with these needs (comma-separated: a stage that must have
# passed, `kiln`: the kiln executable was built, `gpu`, or `device`: a GPU
# when --device is one) cannot run; nothing when it can.
why_not_run() {
  local need
  for need in ${1//,/ }; do
    case $need in
      -) ;;
      kiln) [[ -e $GPU_CHECK_STATE/kiln-built ]] || { echo "kiln did not build"; return; } ;;
      gpu) [[ $GPU_CHECK_HAS_GPU == 1 ]] || { echo "no GPU"; return; } ;;
      device) [[ $GPU_CHECK_DEVICE != cuda* || $GPU_CHECK_HAS_GPU == 1 ]] || { echo "no GPU"; return; } ;;
      *) [[ ${GPU_CHECK_STATUS[$need]-} == ok ]] || { echo "needs $need, which did not pass"; return; } ;;
    esac
  done
}

# record STAGE STATUS SECONDS TEXT: one row of the table.
record() {
  GPU_CHECK_STATUS[$1]=$2
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$GPU_CHECK_STATE/rows"
  say "== $1: $2 ($3 s)${4:+: $4}"
}

# A file, or its head and tail when it is over GPU_CHECK_LOG_CAP.
capped() {
  local file=$1 size
  size=$(stat -c %s "$file")
  if ((size > GPU_CHECK_LOG_CAP)); then
    head -c $((GPU_CHECK_LOG_CAP / 2)) "$file"
    printf '\n[... %d bytes left out ...]\n' $((size - GPU_CHECK_LOG_CAP))
    tail -c $((GPU_CHECK_LOG_CAP / 2)) "$file"
  else
    cat "$file"
  fi
}

# run_stage NAME CAP NEEDS FUNCTION [ARGS...]: runs stage_FUNCTION ARGS
# for at most CAP seconds (times GPU_CHECK_TIME_SCALE), less when the
# whole run's deadline (less GPU_CHECK_RESERVE for what comes last) is
# nearer.
run_stage() {
  local name=$1 cap=$2 needs=$3
  shift 3
  # The stage reads its own output back from there (stage_log).
  local output=$GPU_CHECK_STATE/$name.log why limit left start rc status text
  why=$(why_not_run "$needs")
  limit=$((cap * GPU_CHECK_TIME_SCALE))
  left=$((GPU_CHECK_DEADLINE - $(date +%s) - GPU_CHECK_RESERVE))
  ((left < limit)) && limit=$left
  [[ -z $why ]] && ((limit < 5)) && why="out of time"
  if [[ -n $why ]]; then
    record "$name" skipped 0 "$why"
    return
  fi
  say "== $name: started, at most $limit s"
  start=$(date +%s)
  GPU_CHECK_STAGE=$name GPU_CHECK_STAGE_END=$((start + limit)) timeout -k 10 "$limit" "$GPU_CHECK_SELF" \
    --stage "$@" >"$output" 2>&1 </dev/null
  rc=$?
  case $rc in
    0) status=ok ;;
    "$GPU_CHECK_SKIPPED") status=skipped ;;
    124 | 137) status="timed out" ;;
    *) status=FAILED ;;
  esac
  text=$(cat "$GPU_CHECK_STATE/$name.result" 2>/dev/null)
  [[ $status == "timed out" ]] && text="stopped at $limit s${text:+; $text}"
  [[ $status == FAILED && -z $text ]] && text="exit status $rc"
  {
    echo "==== $name: output"
    capped "$output"
  } >>"$GPU_CHECK_LOG"
  record "$name" "$status" $(($(date +%s) - start)) "$text"
  if [[ $status == FAILED || $status == "timed out" ]]; then
    tail -n 12 "$output" | sed 's/^/   | /'
  fi
}

# The row of the benchmark table for one batch size.
bench_row() {
  local batch=$1 kiln torch ratio=""
  kiln=$(cat "$GPU_CHECK_STATE/bench-kiln-$batch.value" 2>/dev/null)
  torch=$(cat "$GPU_CHECK_STATE/bench-torch-$batch.value" 2>/dev/null)
  [[ -n $kiln && -n $torch ]] && ratio=$(awk -v k="$kiln" -v t="$torch" 'BEGIN { printf "%.2f", k / t }')
  printf '| %s | %s | %s | %s |\n' "$batch" "${kiln:-${GPU_CHECK_STATUS[bench-kiln-$batch]-}}" \
    "${torch:-${GPU_CHECK_STATUS[bench-torch-$batch]-}}" "${ratio:-n/a}"
}

# The table, in Markdown for bench/RESULTS.md: a heading that names the
# machine, each stage's result, then kiln against PyTorch.
results_table() {
  local heading=$1 name status seconds text
  echo "### $heading"
  echo
  echo "| stage | status | seconds | result |"
  echo "|---|---|---|---|"
  while IFS=$'\t' read -r name status seconds text; do
    printf '| %s | %s | %s | %s |\n' "$name" "$status" "$seconds" "${text//|//}"
  done <"$GPU_CHECK_STATE/rows"
  echo
  echo "Fashion-MNIST training throughput on $GPU_CHECK_DEVICE (samples/s, median of $GPU_CHECK_BENCH_WINDOWS" \
    "windows of $GPU_CHECK_BENCH_STEPS steps):"
  echo
  echo "| batch | kiln | PyTorch eager | kiln / PyTorch |"
  echo "|---|---|---|---|"
  local batch
  for batch in "${GPU_CHECK_BENCH_BATCHES[@]}"; do bench_row "$batch"; done
}
