/* LSTM(input_size, hidden_size, num_layers = 1, bias = true,
 * batch_first = false, dropout = 0, bidirectional = false, proj_size = 0):
 * torch.nn.LSTM's layer, its parameters and gate order (shapes, names and
 * the forward's inputs and outputs in rnn.h). One step, with the gates
 * i, f, g, o stacked in this order in the weights' rows:
 *
 *   i, f, g, o = x W_ih^T + b_ih + h W_hh^T + b_hh   (cut into 4 blocks of H)
 *   c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
 *   h' = sigmoid(o) * tanh(c')             (h' W_hr^T with proj_size)
 *
 * Forward: (input) or (input, h0, c0); outputs (output, h_n, c_n). Without
 * proj_size, on the CPU, each direction runs as one lstm_recurrence op,
 * the same equations with every step fused. */
#include "host.h"
#include "layers.h"
#include "rnn.h"

enum { I, F, G, O };

static kiln_status lstm_step(kl_scratch* s, const kl_rnn* rnn, const kl_rnn_weights* w, kiln_tensor* x_proj,
                             kiln_tensor** state) {
  kiln_tensor *hidden = NULL, *gates = NULL, *g[4] = {NULL, NULL, NULL, NULL};
  kiln_tensor *kept = NULL, *added = NULL, *c = NULL, *h = NULL;
  kiln_status st;
  KL_TRY(kl_rnn_hidden_product(s, rnn, w, state[0], &hidden));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_ADD, x_proj, hidden, &gates));
  KL_TRY(kl_rnn_chunk_last(s, rnn, gates, 4, g));
  KL_TRY(kl_rnn_unary(s, rnn, KL_RNN_OP_SIGMOID, g[I], &g[I]));
  KL_TRY(kl_rnn_unary(s, rnn, KL_RNN_OP_SIGMOID, g[F], &g[F]));
  KL_TRY(kl_rnn_unary(s, rnn, KL_RNN_OP_TANH, g[G], &g[G]));
  KL_TRY(kl_rnn_unary(s, rnn, KL_RNN_OP_SIGMOID, g[O], &g[O]));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_MUL, g[F], state[1], &kept));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_MUL, g[I], g[G], &added));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_ADD, kept, added, &c));
  KL_TRY(kl_rnn_unary(s, rnn, KL_RNN_OP_TANH, c, &h));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_MUL, g[O], h, &h));
  if (w->w_hr) KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_LINEAR, h, w->w_hr, &h));
  state[0] = h;
  state[1] = c;
done:
  return st;
}

/* Whether the lstm_recurrence op has kernels for x_proj: f32 or f64 on the CPU. */
static kiln_status fused_kernels(kiln_tensor* x_proj, int* fused) {
  kiln_tensor_desc d;
  kiln_device_type device;
  int index = 0;
  kiln_status st = kl_host.tensor_describe(x_proj, &d);
  if (st == KILN_OK) st = kl_host.tensor_device(x_proj, &device, &index);
  *fused = st == KILN_OK && device == KILN_DEVICE_CPU && (d.dtype == KILN_F32 || d.dtype == KILN_F64);
  return st;
}

/* The direction in one lstm_recurrence op, whose states are [N, H] where
 * the forward's pieces are [1, N, H]; without proj_size, which the op does
 * not take. */
static kiln_status lstm_sequence(kl_scratch* s, const kl_rnn* rnn, const kl_rnn_weights* w, kiln_tensor* x_proj,
                                 int reverse, kiln_tensor** state, kiln_tensor** out, int* ran) {
  kiln_tensor *inputs[5], *results[3] = {NULL, NULL, NULL};
  const kiln_attr attr = kiln_attr_bool("reverse", reverse);
  kiln_status st;
  *ran = 0;
  if (w->w_hr) return KILN_OK;
  KL_TRY(fused_kernels(x_proj, ran));
  if (!*ran) return KILN_OK;
  inputs[0] = x_proj;
  KL_TRY(kl_rnn_squeeze0(s, rnn, state[0], &inputs[1]));
  KL_TRY(kl_rnn_squeeze0(s, rnn, state[1], &inputs[2]));
  inputs[3] = w->w_hh;
  inputs[4] = w->b_hh;
  KL_TRY(kl_call_n(s, rnn->ops[KL_RNN_OP_LSTM_RECURRENCE], inputs, 5, &attr, 1, results, 3));
  *out = results[0];
  KL_TRY(kl_rnn_unsqueeze0(s, rnn, results[1], &state[0]));
  KL_TRY(kl_rnn_unsqueeze0(s, rnn, results[2], &state[1]));
done:
  return st;
}

static const char* const state_names[] = {"h0", "c0"};

static const kl_rnn_cell lstm_cell = {"LSTM", 4, 2, state_names, KL_RNN_N_CONFIG, lstm_step, lstm_sequence};

kiln_status kl_register_lstm(kiln_registrar* registrar) { return kl_rnn_register(registrar, &lstm_cell); }
