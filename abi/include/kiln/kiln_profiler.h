/*
 * kiln_profiler.h: the per-op profiler of kiln's C API, time per op call as
 * a table and as a Chrome trace.
 * kiln.h includes it; the ownership and threading rules at the top of kiln.h
 * hold here too.
 */
#ifndef KILN_KILN_PROFILER_H
#define KILN_KILN_PROFILER_H

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- profiler ------------------------------------------------------------------- */

/* Time per op. Between kiln_profiler_begin and kiln_profiler_end, every op
 * call on `rt` (from any thread: loader workers and the thread pool too)
 * and every backward function kiln_backward runs records its name, phase,
 * device, start and end, nesting and input shapes. Off, it costs an op
 * call one flag check. Backward functions are named "<op> backward"; they
 * and the ops they call are in the backward phase, every other call in the
 * forward phase. An op's self time is its total less the ops it called.
 * Times are host times: on a GPU, an op that does not wait for the device
 * is charged the time to launch its kernels. The trace also holds the
 * GPU's own time for each call, measured with CUDA events on its compute
 * stream, on a track "cuda:<n> compute stream" (kiln_profiler_end waits
 * for the GPU to read them).
 *
 *   kiln_profiler_begin(rt);
 *   ... forward, kiln_backward, kiln_optimizer_step ...
 *   kiln_profiler_end(rt);
 *   size_t n = 0;
 *   kiln_profiler_report(rt, NULL, 0, &n);                 (the length)
 *   char* table = malloc(n + 1);
 *   kiln_profiler_report(rt, table, n + 1, NULL);
 *   kiln_profiler_write_trace(rt, "trace.json");            (Perfetto, chrome://tracing)
 */

/* Starts a profile, dropping the last one. KILN_ERR_INVALID_STATE when
 * profiling is already on for `rt`. */
KILN_API kiln_status kiln_profiler_begin(kiln_runtime* rt);
/* Stops recording; the profile stays readable until the next begin.
 * KILN_ERR_INVALID_STATE when profiling is not on. */
KILN_API kiln_status kiln_profiler_end(kiln_runtime* rt);
/* The last finished profile as a text table, one row per op and phase,
 * forward rows then backward rows, each by total time, largest first:
 *   op  phase  calls  total ms  self ms  mean µs  % total
 * ("% total": the row's total time against the self time of all calls,
 * so nested rows may add up to more than 100), then the forward and
 * backward sums. Writes the text and a terminating NUL into `buffer`
 * (caller-owned, `capacity` bytes) and its length without the NUL into
 * *length; either may be NULL (`buffer` only with `capacity` 0) to ask for
 * the length alone. A buffer too small is KILN_ERR_INVALID_ARGUMENT naming
 * the size needed. KILN_ERR_INVALID_STATE while profiling is on or before
 * any profile ended. */
KILN_API kiln_status kiln_profiler_report(kiln_runtime* rt, char* buffer, size_t capacity, size_t* length);
/* Writes the last finished profile to `path` as Chrome trace JSON: one
 * complete ("X") event per call, ts and dur in microseconds, the process
 * id as pid and the recording thread (1, 2, ...) as tid, and in args the
 * device, the nesting depth, the self time in microseconds ("self_us") and
 * the input shapes; the "cat" is the phase. Perfetto (ui.perfetto.dev) and
 * chrome://tracing open it. The file is written beside `path` and renamed
 * over it: a failed write (KILN_ERR_IO naming the path and the step) leaves
 * whatever was there. Same states as kiln_profiler_report. */
KILN_API kiln_status kiln_profiler_write_trace(kiln_runtime* rt, const char* path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_PROFILER_H */
