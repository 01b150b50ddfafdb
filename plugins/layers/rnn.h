/* What LSTM and GRU share: their configuration (torch.nn.LSTM's and
 * torch.nn.GRU's arguments), their parameters (PyTorch's names and layout),
 * and the forward that runs a cell over every time step, layer and
 * direction. Each of lstm.c and gru.c supplies its cell: the number of gate
 * blocks in the weights, the state tensors it carries and one time step.
 *
 * Shapes, with T the sequence length, N the batch, D = 2 when bidirectional
 * (else 1), L = num_layers, H = hidden_size, G the gate blocks, and P the
 * width of h: LSTM's proj_size when it is set (0 < P < H), else H:
 *
 *   input      [T, N, input_size] ([N, T, input_size] with batch_first), or
 *              [T, input_size] unbatched
 *   h0, h_n    [L * D, N, P] ([L * D, P] unbatched), in the order
 *              (layer 0 forward, layer 0 reverse, layer 1 forward, ...)
 *   c0, c_n    [L * D, N, H] (LSTM), likewise
 *   output     [T, N, D * P] ([N, T, D * P] with batch_first): the last
 *              layer's h at every step, the reverse direction's second
 *
 * Parameters of layer k (the suffix "_reverse" for the reverse direction):
 * weight_ih_l{k} [G H, input_size] (D P for k > 0), weight_hh_l{k} [G H, P],
 * bias_ih_l{k} and bias_hh_l{k} [G H], and with proj_size weight_hr_l{k}
 * [P, H] (h = weight_hr (o * tanh(c))), all U(-1/sqrt(H), 1/sqrt(H)).
 *
 * The forward projects a whole layer's input through weight_ih in one
 * product, then runs the recurrence: LSTM without proj_size on the CPU in
 * one lstm_recurrence op per layer and direction (its kernels run every
 * step fused), otherwise one cell step per position, a few ops each. (Not
 * done: a single product of the forward and reverse directions' input
 * weights.) */
#ifndef KILN_LAYERS_RNN_H
#define KILN_LAYERS_RNN_H

#include "scratch.h"

enum { KL_RNN_MAX_STATES = 2 };

/* The ops a cell step may call. */
enum {
  KL_RNN_OP_LINEAR,
  KL_RNN_OP_ADD,
  KL_RNN_OP_SUB,
  KL_RNN_OP_MUL,
  KL_RNN_OP_SIGMOID,
  KL_RNN_OP_TANH,
  KL_RNN_OP_CHUNK,
  KL_RNN_OP_CONCAT,
  KL_RNN_OP_TRANSPOSE,
  KL_RNN_OP_COPY,
  KL_RNN_OP_UNSQUEEZE,
  KL_RNN_OP_SQUEEZE,
  KL_RNN_OP_DROPOUT,
  KL_RNN_OP_LSTM_RECURRENCE,
  KL_RNN_N_OPS
};

/* One layer and direction's parameters; the biases are NULL without bias,
 * w_hr without proj_size. */
typedef struct kl_rnn_weights {
  kiln_tensor *w_ih, *w_hh, *b_ih, *b_hh, *w_hr;
} kl_rnn_weights;

typedef struct kl_rnn kl_rnn;

typedef struct kl_rnn_cell {
  const char* name;               /* the layer type: "LSTM" */
  int gates;                      /* G: gate blocks stacked in the weights' rows */
  int n_states;                   /* 2 for LSTM (h, c), 1 for GRU (h); h comes first */
  const char* const* state_names; /* "h0", "c0": the forward's inputs after the first */
  size_t n_config;                /* its configuration: kl_rnn_config's first n_config entries */
  /* One time step: x_proj [1, N, G H] is x_t W_ih^T + b_ih; state[0 ..
   * n_states) hold the states ([1, N, P] for h, [1, N, H] for c) before
   * the step and receive them after it. Every tensor made is kept in `s`. */
  kiln_status (*step)(kl_scratch* s, const kl_rnn* rnn, const kl_rnn_weights* w, kiln_tensor* x_proj,
                      kiln_tensor** state);
  /* Every step of a direction in one op, or NULL: x_proj [T, N, G H] holds
   * all the steps' input sides; state[] as for step, updated to the final
   * states; *out receives h of every step, [T, N, P]. Sets *ran to 0,
   * having done nothing, where it cannot run (then `step` runs instead). */
  kiln_status (*sequence)(kl_scratch* s, const kl_rnn* rnn, const kl_rnn_weights* w, kiln_tensor* x_proj,
                          int reverse, kiln_tensor** state, kiln_tensor** out, int* ran);
} kl_rnn_cell;

struct kl_rnn {
  const kl_rnn_cell* cell;
  int64_t input_size, hidden_size, num_layers, directions;
  int64_t proj_size; /* 0: none */
  int batch_first;
  double dropout;
  const kiln_op* ops[KL_RNN_N_OPS];
  kl_rnn_weights* weights; /* num_layers * directions, layer by layer, forward first */
};

/* The configuration entries, PyTorch's arguments with its defaults; GRU
 * takes those before proj_size, LSTM all. */
enum {
  KL_RNN_INPUT_SIZE,
  KL_RNN_HIDDEN_SIZE,
  KL_RNN_NUM_LAYERS,
  KL_RNN_BIAS,
  KL_RNN_BATCH_FIRST,
  KL_RNN_DROPOUT,
  KL_RNN_BIDIRECTIONAL,
  KL_RNN_PROJ_SIZE,
  KL_RNN_N_CONFIG
};
extern const kiln_attr_spec kl_rnn_config[KL_RNN_N_CONFIG];

/* P: the width of h, proj_size when set, else hidden_size. */
int64_t kl_rnn_h_size(const kl_rnn* rnn);

/* Registers a layer type of `cell`'s name running `cell`. */
kiln_status kl_rnn_register(kiln_registrar* registrar, const kl_rnn_cell* cell);

/* Shorthands for a step: the op `op` of `rnn` on one or two inputs. */
kiln_status kl_rnn_unary(kl_scratch* s, const kl_rnn* rnn, int op, kiln_tensor* x, kiln_tensor** out);
kiln_status kl_rnn_binary(kl_scratch* s, const kl_rnn* rnn, int op, kiln_tensor* a, kiln_tensor* b, kiln_tensor** out);

/* h W_hh^T + b_hh: [1, N, G H]. */
kiln_status kl_rnn_hidden_product(kl_scratch* s, const kl_rnn* rnn, const kl_rnn_weights* w, kiln_tensor* h,
                                  kiln_tensor** out);

/* `t` without (squeeze) or with (unsqueeze) a leading dim of size 1. */
kiln_status kl_rnn_squeeze0(kl_scratch* s, const kl_rnn* rnn, kiln_tensor* t, kiln_tensor** out);
kiln_status kl_rnn_unsqueeze0(kl_scratch* s, const kl_rnn* rnn, kiln_tensor* t, kiln_tensor** out);

/* `t` cut into `n` equal blocks of its last dim (gates). */
kiln_status kl_rnn_chunk_last(kl_scratch* s, const kl_rnn* rnn, kiln_tensor* t, int n, kiln_tensor** parts);

/* The layer type's forward (rnn_forward.c). */
kiln_status kl_rnn_forward(void* state, const kiln_layer_call* call);

#endif /* KILN_LAYERS_RNN_H */
