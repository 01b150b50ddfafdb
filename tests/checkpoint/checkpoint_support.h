/* What the checkpoint tests share: a whole training setup whose every part
 * has state to save (an MLP with BatchNorm1d's running statistics and
 * Dropout's random draws, Adam's moments, a warm-up cosine schedule, a
 * shuffling loader with worker threads), built the same way each time. */
#ifndef KILN_CHECKPOINT_SUPPORT_H
#define KILN_CHECKPOINT_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"
#include "trainer_support.h"

#define RUN_EXAMPLES 96
#define RUN_BATCH 16 /* 6 batches per epoch */
#define RUN_HIDDEN 16 /* the MLP's hidden width, unless a test asks for another */

typedef struct training_run {
  kiln_runtime* rt;
  blobs data;
  kiln_loader* loader;
  kiln_module* model;
  kiln_optimizer* opt;
  kiln_lr_schedule* schedule;
  kiln_trainer* trainer;
} training_run;

/* A fresh runtime seeded with `seed` (which draws the initial weights) and
 * everything above; `max_steps` ends training; checkpoint_every > 0 saves
 * the state to `checkpoint_path` every that many steps. */
void run_open(training_run* r, uint64_t seed, int64_t max_steps, const char* checkpoint_path,
              int64_t checkpoint_every);
/* The same with an MLP `hidden` wide. */
void run_open_wide(training_run* r, uint64_t seed, int64_t max_steps, const char* checkpoint_path,
                   int64_t checkpoint_every, int64_t hidden);
/* The same in a runtime the caller made (the run takes over its reference),
 * without checkpoints. */
void run_open_in(training_run* r, kiln_runtime* rt, int64_t max_steps);
void run_close(training_run* r);

/* One step; returns its loss (exits when training is already over). */
double run_step(training_run* r);

/* Every byte of the model's parameters and buffers, in order, into `out`
 * (at most `capacity` bytes); returns how many. */
size_t run_model_bytes(training_run* r, unsigned char* out, size_t capacity);

/* A path for `name` in the test's own scratch folder (made when needed),
 * valid until the next call. */
const char* scratch_path(const char* name);

#endif /* KILN_CHECKPOINT_SUPPORT_H */
