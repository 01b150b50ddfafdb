/* The forward of LSTM and GRU (shapes in rnn.h): the input brought to
 * [T, N, features], each layer's directions run step by step by the cell,
 * the results brought back to the caller's layout. Outputs: the output,
 * then each final state (h_n, and c_n for LSTM). */
#include <stdio.h>
#include <stdlib.h>

#include "dropout.h"
#include "host.h"
#include "rnn.h"

/* What one forward works with. Every tensor lives in `s`; the arrays only
 * point at them. */
typedef struct rnn_run {
  const kl_rnn* r;
  kl_scratch s;
  int training;
  int unbatched;                            /* the caller gave [T, features] */
  int64_t steps, batch;                     /* T, N */
  kiln_tensor* zeros[KL_RNN_MAX_STATES];    /* [1, N, P] and [1, N, H]: the states nobody gave */
  kiln_tensor** initial[KL_RNN_MAX_STATES]; /* per state, L * D pieces [1, N, width]; NULL: zeros */
  kiln_tensor** finals;                     /* state i of layer/direction j at [i * L * D + j] */
  kiln_tensor** pieces;                     /* T: one direction's input projections */
  kiln_tensor** hs;                         /* T: one direction's h at each step */
  void* block;                              /* the one allocation behind the arrays */
} rnn_run;

static int64_t stacks(const kl_rnn* r) { return r->num_layers * r->directions; }

/* The width of state i: P for h, H for LSTM's c. */
static int64_t state_width(const kl_rnn* r, int i) { return i == 0 ? kl_rnn_h_size(r) : r->hidden_size; }

static kiln_status check_arity(const kl_rnn* r, const kiln_layer_call* call) {
  const int n = r->cell->n_states;
  if ((size_t)(1 + n) > call->max_outputs)
    return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s gives %d outputs; the caller has room for %zu", r->cell->name, 1 + n,
                   call->max_outputs);
  if (call->n_inputs == 1 || call->n_inputs == (size_t)(1 + n)) return KILN_OK;
  if (n == 1)
    return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s takes 1 input (input) or 2 (input, %s), got %zu", r->cell->name,
                   r->cell->state_names[0], call->n_inputs);
  return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s takes 1 input (input) or %d (input, %s, %s), got %zu", r->cell->name,
                 1 + n, r->cell->state_names[0], r->cell->state_names[1], call->n_inputs);
}

static kiln_status run_begin(rnn_run* u, const kl_rnn* r, const kiln_layer_call* call) {
  int i;
  u->r = r;
  u->training = call->training;
  u->block = NULL;
  for (i = 0; i < KL_RNN_MAX_STATES; ++i) u->initial[i] = NULL;
  kl_scratch_init(&u->s, call->runtime);
  return check_arity(r, call);
}

/* The arrays, once T is known: finals, pieces, hs, then the room of the
 * given states' pieces. */
static kiln_status allocate(rnn_run* u) {
  const int64_t n_states = u->r->cell->n_states, ld = stacks(u->r);
  kiln_tensor** p = calloc((size_t)(2 * n_states * ld + 2 * u->steps), sizeof *p);
  if (!p)
    return kl_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for a sequence of %lld steps", u->r->cell->name,
                   (long long)u->steps);
  u->block = p;
  u->finals = p;
  u->pieces = p + n_states * ld;
  u->hs = u->pieces + u->steps;
  return KILN_OK;
}

static kiln_tensor** initial_room(rnn_run* u, int state) { return u->hs + u->steps + state * stacks(u->r); }

/* The input as [T, N, input_size]; sets T, N and whether it was unbatched. */
static kiln_status time_major_input(rnn_run* u, kiln_tensor* x, kiln_tensor** out) {
  const kl_rnn* r = u->r;
  kiln_tensor_desc d;
  kiln_attr attrs[2];
  kiln_status st = kl_host.tensor_describe(x, &d);
  if (st != KILN_OK) return st;
  if ((d.rank != 2 && d.rank != 3) || d.dims[d.rank - 1] != r->input_size)
    return kl_fail(KILN_ERR_SHAPE_MISMATCH,
                   "%s: input must be [%s, input_size = %lld] or unbatched [T, input_size], got rank %d with last "
                   "dim %lld",
                   r->cell->name, r->batch_first ? "N, T" : "T, N", (long long)r->input_size, d.rank,
                   (long long)(d.rank ? d.dims[d.rank - 1] : 0));
  u->unbatched = d.rank == 2;
  u->steps = d.dims[u->unbatched || !r->batch_first ? 0 : 1];
  u->batch = u->unbatched ? 1 : d.dims[r->batch_first ? 0 : 1];
  if (u->steps < 1)
    return kl_fail(KILN_ERR_SHAPE_MISMATCH, "%s: the input holds a sequence of length 0; expected at least 1 step",
                   r->cell->name);
  if (u->unbatched) {
    attrs[0] = kiln_attr_int("dim", 1);
    return kl_call(&u->s, r->ops[KL_RNN_OP_UNSQUEEZE], &x, 1, attrs, 1, out);
  }
  if (!r->batch_first) {
    *out = x;
    return KILN_OK;
  }
  attrs[0] = kiln_attr_int("dim0", 0);
  attrs[1] = kiln_attr_int("dim1", 1);
  return kl_call(&u->s, r->ops[KL_RNN_OP_TRANSPOSE], &x, 1, attrs, 2, out);
}

/* A given state [L * D, N, width] ([L * D, width] unbatched) cut into its
 * L * D pieces [1, N, width]. */
static kiln_status split_state(rnn_run* u, int index, kiln_tensor* state) {
  const kl_rnn* r = u->r;
  const int64_t ld = stacks(r), width = state_width(r, index);
  kiln_tensor_desc d;
  kiln_attr attrs[2];
  const int rank = u->unbatched ? 2 : 3;
  kiln_status st = kl_host.tensor_describe(state, &d);
  if (st != KILN_OK) return st;
  if (d.rank != rank || d.dims[0] != ld || d.dims[rank - 1] != width || (!u->unbatched && d.dims[1] != u->batch)) {
    char want[96];
    if (u->unbatched)
      snprintf(want, sizeof want, "[%lld, %lld] for an unbatched input", (long long)ld, (long long)width);
    else
      snprintf(want, sizeof want, "[%lld, %lld, %lld]", (long long)ld, (long long)u->batch, (long long)width);
    return kl_fail(KILN_ERR_SHAPE_MISMATCH,
                   "%s: %s must be [num_layers * directions, N, %s] = %s, got rank %d [%lld, %lld, ...]",
                   r->cell->name, r->cell->state_names[index], index == 0 && r->proj_size ? "proj_size" : "hidden_size",
                   want, d.rank, (long long)d.dims[0], (long long)(d.rank > 1 ? d.dims[1] : 0));
  }
  if (u->unbatched) {
    attrs[0] = kiln_attr_int("dim", 1);
    if ((st = kl_call(&u->s, r->ops[KL_RNN_OP_UNSQUEEZE], &state, 1, attrs, 1, &state)) != KILN_OK) return st;
  }
  u->initial[index] = initial_room(u, index);
  attrs[0] = kiln_attr_int("chunks", ld);
  attrs[1] = kiln_attr_int("dim", 0);
  return kl_call_n(&u->s, r->ops[KL_RNN_OP_CHUNK], &state, 1, attrs, 2, u->initial[index], (size_t)ld);
}

/* Each state's zeros [1, N, width] in the dtype and on the device of x. */
static kiln_status make_zeros(rnn_run* u, kiln_tensor* x) {
  kiln_tensor_desc d;
  kiln_device_type device;
  int index = 0, i;
  kiln_status st = kl_host.tensor_describe(x, &d);
  if (st == KILN_OK) st = kl_host.tensor_device(x, &device, &index);
  for (i = 0; st == KILN_OK && i < u->r->cell->n_states; ++i) {
    const int64_t shape[3] = {1, u->batch, state_width(u->r, i)};
    st = kl_host.tensor_full(u->s.runtime, shape, 3, 0.0, d.dtype, device, index, &u->zeros[i]);
    if (st == KILN_OK) st = kl_scratch_keep(&u->s, u->zeros[i]);
  }
  return st;
}

/* Layer/direction j over x [T, N, F]: its h at every step, concatenated in
 * time order into *out [T, N, P]; its final states go to finals. */
static kiln_status run_direction(rnn_run* u, int64_t j, int reverse, kiln_tensor* x, kiln_tensor** out) {
  const kl_rnn* r = u->r;
  const kl_rnn_weights* w = &r->weights[j];
  const int n_states = r->cell->n_states;
  kiln_tensor* state[KL_RNN_MAX_STATES];
  kiln_tensor *inputs[3], *projected = NULL;
  kiln_attr attrs[2];
  int64_t k;
  int i;
  kiln_status st;
  for (i = 0; i < n_states; ++i) state[i] = u->initial[i] ? u->initial[i][j] : u->zeros[i];
  inputs[0] = x;
  inputs[1] = w->w_ih;
  inputs[2] = w->b_ih;
  /* The input side of every step in one product, then cut by step: one
   * chunk op, whose backward joins the steps' gradients in one pass. */
  if ((st = kl_call(&u->s, r->ops[KL_RNN_OP_LINEAR], inputs, 3, NULL, 0, &projected)) != KILN_OK) return st;
  if (r->cell->sequence) {
    int ran = 0;
    st = r->cell->sequence(&u->s, r, w, projected, reverse, state, out, &ran);
    if (st != KILN_OK || ran) {
      for (i = 0; st == KILN_OK && i < n_states; ++i) u->finals[i * stacks(r) + j] = state[i];
      return st;
    }
  }
  attrs[0] = kiln_attr_int("chunks", u->steps);
  attrs[1] = kiln_attr_int("dim", 0);
  st = kl_call_n(&u->s, r->ops[KL_RNN_OP_CHUNK], &projected, 1, attrs, 2, u->pieces, (size_t)u->steps);
  for (k = 0; st == KILN_OK && k < u->steps; ++k) {
    const int64_t t = reverse ? u->steps - 1 - k : k;
    st = r->cell->step(&u->s, r, w, u->pieces[t], state);
    u->hs[t] = state[0];
  }
  if (st != KILN_OK) return st;
  for (i = 0; i < n_states; ++i) u->finals[i * stacks(r) + j] = state[i];
  attrs[0] = kiln_attr_int("dim", 0);
  return kl_call(&u->s, r->ops[KL_RNN_OP_CONCAT], u->hs, (size_t)u->steps, attrs, 1, out);
}

/* Every layer over x [T, N, input_size]: the last one's outputs [T, N, D P]. */
static kiln_status run_layers(rnn_run* u, kiln_tensor* x, kiln_tensor** out) {
  const kl_rnn* r = u->r;
  const kiln_attr last_dim = kiln_attr_int("dim", -1);
  int64_t layer;
  kiln_status st = KILN_OK;
  for (layer = 0; st == KILN_OK && layer < r->num_layers; ++layer) {
    kiln_tensor* directions[2] = {NULL, NULL};
    int64_t dir;
    for (dir = 0; st == KILN_OK && dir < r->directions; ++dir)
      st = run_direction(u, layer * r->directions + dir, (int)dir, x, &directions[dir]);
    if (st != KILN_OK) break;
    x = directions[0];
    if (r->directions == 2) st = kl_call(&u->s, r->ops[KL_RNN_OP_CONCAT], directions, 2, &last_dim, 1, &x);
    if (st == KILN_OK && layer + 1 < r->num_layers)
      st = kl_dropout_apply(&u->s, r->ops[KL_RNN_OP_DROPOUT], x, r->dropout, u->training, &x);
  }
  *out = x;
  return st;
}

/* y [T, N, D P] in the caller's layout: [N, T, D P] (dense) with
 * batch_first, [T, D P] unbatched. */
static kiln_status caller_output(rnn_run* u, kiln_tensor* y, kiln_tensor** out) {
  const kl_rnn* r = u->r;
  kiln_attr attrs[2];
  kiln_status st;
  if (u->unbatched) {
    const int64_t dim = 1;
    attrs[0] = kiln_attr_ints("dim", &dim, 1);
    return kl_call(&u->s, r->ops[KL_RNN_OP_SQUEEZE], &y, 1, attrs, 1, out);
  }
  if (!r->batch_first) {
    *out = y;
    return KILN_OK;
  }
  attrs[0] = kiln_attr_int("dim0", 0);
  attrs[1] = kiln_attr_int("dim1", 1);
  st = kl_call(&u->s, r->ops[KL_RNN_OP_TRANSPOSE], &y, 1, attrs, 2, &y);
  return st == KILN_OK ? kl_rnn_unary(&u->s, r, KL_RNN_OP_COPY, y, out) : st;
}

/* State i of every layer and direction, [L * D, N, width] ([L * D, width] unbatched). */
static kiln_status final_state(rnn_run* u, int i, kiln_tensor** out) {
  const kl_rnn* r = u->r;
  const int64_t dim = 1;
  kiln_attr attr = kiln_attr_int("dim", 0);
  kiln_status st =
      kl_call(&u->s, r->ops[KL_RNN_OP_CONCAT], u->finals + i * stacks(r), (size_t)stacks(r), &attr, 1, out);
  if (st != KILN_OK || !u->unbatched) return st;
  attr = kiln_attr_ints("dim", &dim, 1);
  return kl_call(&u->s, r->ops[KL_RNN_OP_SQUEEZE], out, 1, &attr, 1, out);
}

kiln_status kl_rnn_forward(void* state, const kiln_layer_call* call) {
  const kl_rnn* r = state;
  rnn_run u;
  kiln_tensor *x = NULL, *y = NULL, *results[1 + KL_RNN_MAX_STATES] = {NULL, NULL, NULL};
  int i;
  kiln_status st;
  KL_TRY(run_begin(&u, r, call));
  KL_TRY(time_major_input(&u, call->inputs[0], &x));
  KL_TRY(allocate(&u));
  for (i = 0; i + 1 < (int)call->n_inputs; ++i) KL_TRY(split_state(&u, i, call->inputs[1 + i]));
  if (call->n_inputs == 1) KL_TRY(make_zeros(&u, x));
  KL_TRY(run_layers(&u, x, &y));
  KL_TRY(caller_output(&u, y, &results[0]));
  for (i = 0; i < r->cell->n_states; ++i) KL_TRY(final_state(&u, i, &results[1 + i]));
  for (i = 1; i <= r->cell->n_states; ++i) {
    kl_host.tensor_retain(results[i]);
    call->outputs[i] = results[i];
  }
  *call->n_outputs = (size_t)(1 + r->cell->n_states);
done:
  free(u.block);
  return kl_scratch_finish(&u.s, st, results[0], &call->outputs[0]);
}
