/* What the trainer tests share: a two-class problem of two Gaussian blobs,
 * loaders over it, a Linear model with SGD, and reading parameters back. */
#ifndef KILN_TRAINER_SUPPORT_H
#define KILN_TRAINER_SUPPORT_H

#include <stdint.h>

#include "kiln/kiln.h"

/* Setup that fails ends the test: it prints the call and kiln_last_error()
 * and exits with 1. (check.h counts failures per file, so the support code
 * does not use it.) */
void require_ok(kiln_status status, const char* call, const char* file, int line);
#define REQUIRE_OK(call) require_ok((call), #call, __FILE__, __LINE__)

/* Two blobs in the plane, N(+2, 1) per coordinate for class 1 and N(-2, 1)
 * for class 0, classes alternating. Points are drawn from `seed` by the
 * test itself, so they are the same on every machine. */
typedef struct blobs {
  int64_t n;
  float* x;       /* [n, 2] */
  int64_t* y;     /* [n] */
  kiln_tensor* inputs;
  kiln_tensor* targets;
  kiln_data_source* source;
} blobs;

kiln_runtime* open_runtime(uint64_t seed);
/* 1 when `rt` sees no GPU, after printing "skipped: no GPU: <reason>" (a
 * GPU test then exits 77, which CTest reports as skipped); else 0. */
int skip_without_gpu(kiln_runtime* rt);
void blobs_make(kiln_runtime* rt, int64_t n, uint64_t seed, blobs* out);
/* Points [first, first + count) of `b` become NaN (inputs that make every
 * gradient NaN); its tensors and source are made again over them. */
void blobs_poison(kiln_runtime* rt, blobs* b, int64_t first, int64_t count);
/* Points [first, first + count) of `b` are removed, the rest move up. */
void blobs_drop(kiln_runtime* rt, blobs* b, int64_t first, int64_t count);
void blobs_free(blobs* b);

/* A loader over `b`: batches of `batch_size`, in order unless `shuffle`
 * (then shuffled with the same seed by every loader made here). */
kiln_loader* make_loader(const blobs* b, int64_t batch_size, int shuffle);
/* The same, delivering its batches to `device` (index 0). */
kiln_loader* make_loader_on(const blobs* b, int64_t batch_size, int shuffle, kiln_device_type device);

/* Linear(2 -> 2), initialised from the runtime's stream, and SGD over it. */
kiln_module* make_linear(kiln_runtime* rt);
kiln_optimizer* make_sgd(kiln_runtime* rt, kiln_module* model, double lr);

/* Options for `model`, `opt` and `train`: quiet, one epoch. */
kiln_trainer_options trainer_options(kiln_module* model, kiln_optimizer* opt, kiln_loader* train);

/* The model's parameters (weight [2, 2] then bias [2]) as doubles: 6 values. */
#define LINEAR_PARAMS 6
void read_linear(kiln_module* model, double out[LINEAR_PARAMS]);

/* Lines of a text file (0 when it cannot be read); each line, without its
 * newline, is passed to `visit` when it is not NULL. */
int count_lines(const char* path, void (*visit)(void* user, const char* line), void* user);

#endif /* KILN_TRAINER_SUPPORT_H */
