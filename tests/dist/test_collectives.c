/* Every collective of a process group, for every dtype, against a local
 * reference, with 2 and 4 ranks on loopback (argv[1]); and the errors a
 * caller's mistake gets. */
#include "ranks.h"

#include "check.h"

#define N 37

static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64, KILN_F16, KILN_BF16, KILN_I32, KILN_I64, KILN_U8, KILN_BOOL};
static const char* const dtype_names[] = {"f32", "f64", "f16", "bf16", "i32", "i64", "u8", "bool"};

static const kiln_op* cast_op;

/* A tensor of `dtype` holding `values` (small whole numbers, exact in every dtype). */
static kiln_tensor* make(kiln_runtime* rt, const double* values, int64_t n, kiln_dtype dtype) {
  kiln_tensor *f64 = NULL, *out = NULL;
  const kiln_attr to = kiln_attr_dtype("dtype", dtype);
  CHECK_OK(kiln_tensor_from_data(rt, values, (size_t)n * sizeof(double), &n, 1, KILN_F64, &f64));
  CHECK_OK(kiln_op_call1(rt, cast_op, &f64, 1, &to, 1, &out));
  kiln_tensor_release(f64);
  return out;
}

/* Checks that `t` holds `want`; names the case on failure. */
static void expect(kiln_runtime* rt, kiln_tensor* t, const double* want, int64_t n, const char* what,
                   const char* dtype) {
  kiln_tensor* f64 = NULL;
  double got[4 * N];
  int64_t i;
  const kiln_attr to = kiln_attr_dtype("dtype", KILN_F64);
  CHECK_OK(kiln_op_call1(rt, cast_op, &t, 1, &to, 1, &f64));
  CHECK_OK(kiln_tensor_read(f64, got, (size_t)n * sizeof(double)));
  kiln_tensor_release(f64);
  for (i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    fprintf(stderr, "%s %s: element %ld is %g, expected %g\n", what, dtype, (long)i, got[i], want[i]);
    ++check_failures;
    return;
  }
}

static double reduce(double a, double b, kiln_reduce_op op, int is_bool) {
  if (is_bool && op == KILN_REDUCE_SUM) return (a != 0 || b != 0) ? 1 : 0;
  if (op == KILN_REDUCE_MAX) return a > b ? a : b;
  if (op == KILN_REDUCE_MIN) return a < b ? a : b;
  return a + b;
}

static void all_reduce_cases(kiln_runtime* rt, kiln_process_group* pg, int rank, int world, size_t d) {
  const kiln_reduce_op ops[] = {KILN_REDUCE_SUM, KILN_REDUCE_MAX, KILN_REDUCE_MIN, KILN_REDUCE_MEAN};
  const char* const names[] = {"all_reduce sum", "all_reduce max", "all_reduce min", "all_reduce mean"};
  const int is_bool = dtypes[d] == KILN_BOOL, floating = d < 4;
  size_t k;
  for (k = 0; k < 4; ++k) {
    double mine[N], want[N];
    int i, r;
    kiln_tensor* t;
    if (ops[k] == KILN_REDUCE_MEAN && !floating) continue;
    for (i = 0; i < N; ++i) {
      for (r = 0; r < world; ++r) {
        const double v = is_bool ? (double)((i + r) % 3 == 0) : ops[k] == KILN_REDUCE_SUM ? (r + 1) * (i % 5)
                                                                                           : (r * 7 + i) % 11;
        if (r == rank) mine[i] = v;
        want[i] = r == 0 ? v : reduce(want[i], v, ops[k], is_bool);
      }
      if (ops[k] == KILN_REDUCE_MEAN) want[i] /= world;
    }
    t = make(rt, mine, N, dtypes[d]);
    CHECK_OK(kiln_process_group_all_reduce(pg, t, ops[k], NULL));
    expect(rt, t, want, N, names[k], dtype_names[d]);
    kiln_tensor_release(t);
  }
}

static void broadcast_gather_scatter(kiln_runtime* rt, kiln_process_group* pg, int rank, int world, size_t d) {
  double mine[4 * N], want[4 * N], zeros[4 * N] = {0};
  const int64_t n = 5, whole = world * n;
  int64_t i;
  int r;
  kiln_tensor *t, *in, *out;
  /* broadcast from the last rank */
  for (i = 0; i < N; ++i) {
    mine[i] = dtypes[d] == KILN_BOOL ? (double)((i + rank) % 2) : rank * 10 + i % 10;
    want[i] = dtypes[d] == KILN_BOOL ? (double)((i + world - 1) % 2) : (world - 1) * 10 + i % 10;
  }
  t = make(rt, mine, N, dtypes[d]);
  CHECK_OK(kiln_process_group_broadcast(pg, t, world - 1, NULL));
  expect(rt, t, want, N, "broadcast", dtype_names[d]);
  kiln_tensor_release(t);
  /* all_gather: rank r's part at [r*n, (r+1)*n) */
  for (i = 0; i < n; ++i) mine[i] = dtypes[d] == KILN_BOOL ? (double)((i + rank) % 2) : rank * 10 + i;
  for (r = 0; r < world; ++r)
    for (i = 0; i < n; ++i) want[r * n + i] = dtypes[d] == KILN_BOOL ? (double)((i + r) % 2) : r * 10 + i;
  in = make(rt, mine, n, dtypes[d]);
  out = make(rt, zeros, whole, dtypes[d]);
  CHECK_OK(kiln_process_group_all_gather(pg, in, out, NULL));
  expect(rt, out, want, whole, "all_gather", dtype_names[d]);
  kiln_tensor_release(in);
  kiln_tensor_release(out);
  if (dtypes[d] == KILN_BOOL) return;
  /* reduce_scatter sum: rank keeps part `rank` of the sum */
  for (i = 0; i < whole; ++i) mine[i] = rank + i % 7;
  for (i = 0; i < n; ++i) {
    want[i] = 0;
    for (r = 0; r < world; ++r) want[i] += r + (rank * n + i) % 7;
  }
  in = make(rt, mine, whole, dtypes[d]);
  out = make(rt, mine, n, dtypes[d]);
  CHECK_OK(kiln_process_group_reduce_scatter(pg, in, out, KILN_REDUCE_SUM, NULL));
  expect(rt, out, want, n, "reduce_scatter", dtype_names[d]);
  kiln_tensor_release(in);
  kiln_tensor_release(out);
}

/* Point to point around the ring, asynchronous collectives, a barrier. */
static void ring_and_async(kiln_runtime* rt, kiln_process_group* pg, int rank, int world) {
  double mine[N], want[N], zeros[N] = {0};
  kiln_tensor *send, *recv, *a, *b;
  kiln_work *ws = NULL, *wr = NULL, *wa = NULL, *wb = NULL, *wbar = NULL;
  int i, done = 0;
  const int left = (rank + world - 1) % world;
  for (i = 0; i < N; ++i) {
    mine[i] = rank * 100 + i;
    want[i] = left * 100 + i;
  }
  send = make(rt, mine, N, KILN_F32);
  recv = make(rt, zeros, N, KILN_F32);
  /* Both started before either is waited for: a ring of blocking sends would deadlock. */
  CHECK_OK(kiln_process_group_recv(pg, recv, left, 7, &wr));
  CHECK_OK(kiln_process_group_send(pg, send, (rank + 1) % world, 7, &ws));
  CHECK_OK(kiln_work_wait(ws));
  CHECK_OK(kiln_work_wait(wr));
  CHECK_OK(kiln_work_done(wr, &done));
  CHECK(done == 1);
  expect(rt, recv, want, N, "send/recv", "f32");
  kiln_work_release(ws);
  kiln_work_release(wr);

  a = make(rt, mine, N, KILN_F32);
  b = make(rt, mine, N, KILN_F64);
  CHECK_OK(kiln_process_group_all_reduce(pg, a, KILN_REDUCE_MAX, &wa));
  CHECK_OK(kiln_process_group_all_reduce(pg, b, KILN_REDUCE_MIN, &wb));
  CHECK_OK(kiln_process_group_barrier(pg, &wbar));
  CHECK_OK(kiln_work_wait(wb)); /* out of order: each completes on its own */
  CHECK_OK(kiln_work_wait(wa));
  CHECK_OK(kiln_work_wait(wbar));
  for (i = 0; i < N; ++i) want[i] = (world - 1) * 100 + i;
  expect(rt, a, want, N, "async all_reduce max", "f32");
  for (i = 0; i < N; ++i) want[i] = i;
  expect(rt, b, want, N, "async all_reduce min", "f64");
  kiln_work_release(wa);
  kiln_work_release(wb);
  kiln_work_release(wbar);
  kiln_tensor_release(send);
  kiln_tensor_release(recv);
  kiln_tensor_release(a);
  kiln_tensor_release(b);
}

/* A caller's mistakes fail at once, before anything is sent. */
static void mistakes(kiln_runtime* rt, kiln_process_group* pg, int rank, int world) {
  double v[8] = {0};
  kiln_tensor *i32 = make(rt, v, 4, KILN_I32), *f32 = make(rt, v, 4, KILN_F32), *big = make(rt, v, 8, KILN_F32);
  CHECK_ERROR(kiln_process_group_all_reduce(pg, i32, KILN_REDUCE_MEAN, NULL), KILN_ERR_DTYPE_MISMATCH,
              "all_reduce: mean of a i32 tensor");
  CHECK_ERROR(kiln_process_group_all_reduce(pg, f32, (kiln_reduce_op)9, NULL), KILN_ERR_INVALID_ARGUMENT,
              "unknown kiln_reduce_op 9");
  CHECK_ERROR(kiln_process_group_all_gather(pg, f32, big, NULL), world == 2 ? KILN_OK : KILN_ERR_SHAPE_MISMATCH,
              world == 2 ? NULL : "must have");
  CHECK_ERROR(kiln_process_group_all_gather(pg, f32, i32, NULL), KILN_ERR_DTYPE_MISMATCH, "input is f32 but output is i32");
  CHECK_ERROR(kiln_process_group_broadcast(pg, f32, world, NULL), KILN_ERR_INVALID_ARGUMENT, "is not a rank of the group");
  CHECK_ERROR(kiln_process_group_send(pg, f32, rank, 0, NULL), KILN_ERR_INVALID_ARGUMENT,
              "is not another rank of the group");
  CHECK_ERROR(kiln_process_group_recv(pg, f32, (rank + 1) % world, -1, NULL), KILN_ERR_INVALID_ARGUMENT,
              "the tag must be >= 0");
  kiln_tensor_release(i32);
  kiln_tensor_release(f32);
  kiln_tensor_release(big);
}

static int rank_main(int rank, int world, int port, void* user) {
  kiln_runtime* rt = NULL;
  kiln_process_group* pg = NULL;
  int r = -1, w = -1;
  size_t d;
  (void)user;
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  CHECK_OK(kiln_op_find(rt, "cast", &cast_op));
  CHECK_OK(make_group(rt, rank, world, port, 30.0, &pg));
  if (!pg) return check_report("dist/collectives");
  CHECK_OK(kiln_process_group_rank(pg, &r, &w));
  CHECK(r == rank && w == world);
  CHECK(strcmp(kiln_process_group_backend(pg), "gloo") == 0);
  for (d = 0; d < sizeof dtypes / sizeof dtypes[0]; ++d) {
    all_reduce_cases(rt, pg, rank, world, d);
    broadcast_gather_scatter(rt, pg, rank, world, d);
  }
  ring_and_async(rt, pg, rank, world);
  mistakes(rt, pg, rank, world);
  kiln_process_group_release(pg);
  kiln_runtime_release(rt);
  return check_report(rank == 0 ? "dist/collectives rank 0" : "dist/collectives other rank");
}

/* Options that cannot make a group fail before meeting anyone. */
static void bad_options(void) {
  kiln_runtime* rt = NULL;
  kiln_process_group* pg = NULL;
  kiln_process_group_options o;
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  unsetenv("RANK");
  CHECK_ERROR(kiln_process_group_create(rt, NULL, &pg), KILN_ERR_INVALID_ARGUMENT,
              "the environment variable WORLD_SIZE is not set", "kiln launch");
  setenv("RANK", "2", 1);
  setenv("WORLD_SIZE", "2", 1);
  CHECK_ERROR(kiln_process_group_create(rt, NULL, &pg), KILN_ERR_INVALID_ARGUMENT,
              "RANK must be a whole number in [0, 1], got '2'");
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.world_size = 2;
  o.rank = 3;
  CHECK_ERROR(kiln_process_group_create(rt, &o, &pg), KILN_ERR_INVALID_ARGUMENT, "rank 3 of 2 ranks");
  o.rank = 0;
  o.backend = "mpi";
  CHECK_ERROR(kiln_process_group_create(rt, &o, &pg), KILN_ERR_INVALID_ARGUMENT, "unknown process group backend 'mpi'");
  CHECK(pg == NULL);
  kiln_runtime_release(rt);
}

int main(int argc, char** argv) {
  int statuses[MAX_RANKS], world = argc > 1 ? atoi(argv[1]) : 2, failed;
  bad_options();
  if (check_report("dist/collectives options") != 0) return 1;
  failed = run_ranks(world, rank_main, NULL, 120.0, statuses);
  printf("%d ranks, %d failed\n", world, failed);
  return failed == 0 ? 0 : 1;
}
