/*
 * kiln_dist.h: distributed training in kiln's C API: process groups and
 * their collectives. kiln.h includes it; the ownership and threading rules
 * at the top of kiln.h hold here too.
 *
 * A job is several processes ("ranks") started by `kiln launch`, torchrun,
 * srun or by hand, each with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
 * in its environment. Rank 0 serves a small rendezvous store at
 * MASTER_ADDR:MASTER_PORT; the ranks meet there and then talk directly:
 * through Gloo (TCP) for CPU tensors, through NCCL for GPU tensors.
 *
 *   kiln_process_group* pg = NULL;
 *   if (kiln_process_group_create(rt, NULL, &pg) != KILN_OK) ...   (from the environment)
 *   kiln_process_group_all_reduce(pg, grad, KILN_REDUCE_MEAN, NULL);   (blocking)
 *   kiln_work* w = NULL;
 *   kiln_process_group_all_reduce(pg, bucket, KILN_REDUCE_SUM, &w);    (returns at once)
 *   ... compute ...
 *   kiln_work_wait(w); kiln_work_release(w);
 *   kiln_process_group_release(pg);
 *
 * Rules:
 * - Every rank calls the same collectives in the same order, with tensors
 *   of the same shape and dtype (as in every collective library).
 * - Collectives write into the tensors given. An operation started with a
 *   `work` out-argument owns its tensors until kiln_work_wait returns: do
 *   not read or write them before. With `work` NULL the call blocks.
 * - Every operation waits at most the group's timeout. A rank whose process
 *   ends, or that never joins, makes the others fail with KILN_ERR_PEER or
 *   KILN_ERR_TIMEOUT and a message naming the operation and the rank (for
 *   example "all_reduce (sum, f32[1024] on cpu) #12 on rank 0: rank 3 left
 *   the job (its process ended)"), never a hang. After a failure the group
 *   is broken: every later call fails with the first error.
 */
#ifndef KILN_KILN_DIST_H
#define KILN_KILN_DIST_H

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where this process stands in its job, from the environment alone (no
 * one is contacted): *in_job = 1 with RANK and WORLD_SIZE read and checked
 * when both are set, *in_job = 0 with rank 0 of 1 otherwise. A malformed
 * value fails naming the variable. Any output may be NULL. */
KILN_API kiln_status kiln_dist_job(int* in_job, int* rank, int* world_size);

/* Set `size` to sizeof(kiln_process_group_options); initialise by name.
 * Fields left 0 or NULL take the environment's value (RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT, KILN_DIST_TIMEOUT in seconds), then the
 * default. */
typedef struct kiln_process_group_options {
  size_t size;
  const char* backend;     /* "gloo" (CPU tensors; the default) or "nccl" (GPU tensors) */
  int rank;                /* used when world_size > 0 */
  int world_size;          /* 0: RANK and WORLD_SIZE from the environment (both required) */
  const char* master_addr; /* NULL: MASTER_ADDR, else 127.0.0.1 */
  int master_port;         /* 0: MASTER_PORT, else 29500 */
  double timeout_seconds;  /* 0: KILN_DIST_TIMEOUT, else 600 */
  const char* name;        /* NULL: "default"; groups of different names are separate */
} kiln_process_group_options;

/* Meets the other ranks (rank 0 serves the store) and connects to them;
 * waits at most the timeout for all of them to arrive. `options` may be
 * NULL (everything from the environment). A job variable that is missing or
 * malformed fails naming it. The group holds a reference on `rt`: while
 * its profiler records, each collective is a span on the trace's
 * "collectives" track. A "gloo" group sets SIGPIPE to be ignored if it is
 * at its default action, so that a peer's end is an error, not the end of
 * this process (as Python does at start-up); a handler of the host's stays. */
KILN_API kiln_status kiln_process_group_create(kiln_runtime* rt, const kiln_process_group_options* options,
                                               kiln_process_group** out);
/* The runtime's default group, made from the environment on first use
 * (the one the "ddp" strategy uses), as a new reference. */
KILN_API kiln_status kiln_process_group_default(kiln_runtime* rt, kiln_process_group** out);
KILN_API void kiln_process_group_retain(kiln_process_group* pg);
/* The last reference leaves the group: operations still queued fail, and
 * rank 0 keeps serving the store until the other ranks have left too (at
 * most a few seconds). */
KILN_API void kiln_process_group_release(kiln_process_group* pg);
KILN_API kiln_status kiln_process_group_rank(const kiln_process_group* pg, int* rank, int* world_size);
/* The backend's name: "gloo" or "nccl"; a static string. */
KILN_API const char* kiln_process_group_backend(const kiln_process_group* pg);

/* The collectives. `work`: NULL blocks until done; otherwise *work receives
 * a handle to wait on, and the call returns once the operation is queued.
 * Tensors must be contiguous and on a device of the backend. */

/* In place: `t` becomes the reduction over the ranks. KILN_REDUCE_MEAN
 * takes floating tensors only. */
KILN_API kiln_status kiln_process_group_all_reduce(kiln_process_group* pg, kiln_tensor* t, kiln_reduce_op op,
                                                   kiln_work** work);
/* `t` becomes rank `root`'s. */
KILN_API kiln_status kiln_process_group_broadcast(kiln_process_group* pg, kiln_tensor* t, int root,
                                                  kiln_work** work);
/* `output` (world_size × input's elements, same dtype) receives every
 * rank's input, rank r's at elements [r·n, (r+1)·n). */
KILN_API kiln_status kiln_process_group_all_gather(kiln_process_group* pg, const kiln_tensor* input,
                                                   kiln_tensor* output, kiln_work** work);
/* `input` (world_size × output's elements) is reduced over the ranks and
 * this rank keeps part `rank` of the result in `output`. */
KILN_API kiln_status kiln_process_group_reduce_scatter(kiln_process_group* pg, const kiln_tensor* input,
                                                       kiln_tensor* output, kiln_reduce_op op, kiln_work** work);
/* Point to point: a send to `dst` with `tag` (>= 0) matches the recv from
 * this rank with the same tag there. On gloo they start at once (they are
 * not ordered behind queued collectives) and complete in kiln_work_wait, so
 * a ring of sends and recvs may be waited for in any order. On nccl each
 * runs whole when it is waited for: wait in an order the two ranks agree
 * on (the lower rank's send first). */
KILN_API kiln_status kiln_process_group_send(kiln_process_group* pg, const kiln_tensor* t, int dst, int tag,
                                             kiln_work** work);
KILN_API kiln_status kiln_process_group_recv(kiln_process_group* pg, kiln_tensor* t, int src, int tag,
                                             kiln_work** work);
/* Returns (or completes `work`) once every rank has reached it. */
KILN_API kiln_status kiln_process_group_barrier(kiln_process_group* pg, kiln_work** work);

/* Blocks until the operation is done; returns its status (its message is
 * kiln_last_error()). Waiting again returns the same. */
KILN_API kiln_status kiln_work_wait(kiln_work* work);
/* *done = 1 once the operation has finished (send and recv finish in
 * kiln_work_wait). */
KILN_API kiln_status kiln_work_done(const kiln_work* work, int* done);
/* Releasing a work that is not done waits for it first: the tensors it
 * writes stay alive until then. */
KILN_API void kiln_work_release(kiln_work* work);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_DIST_H */
