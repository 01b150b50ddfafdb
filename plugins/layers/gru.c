/* GRU(input_size, hidden_size, num_layers = 1, bias = true,
 * batch_first = false, dropout = 0, bidirectional = false): torch.nn.GRU's
 * layer, its parameters and gate order (shapes, names and the forward's
 * inputs and outputs in rnn.h). One step, with the gates r, z, n stacked in
 * this order in the weights' rows:
 *
 *   r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
 *   z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
 *   n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
 *   h' = (1 - z) * n + z * h  =  n + z * (h - n)
 *
 * Forward: (input) or (input, h0); outputs (output, h_n). */
#include "host.h"
#include "layers.h"
#include "rnn.h"

enum { R, Z, N };

static kiln_status gru_step(kl_scratch* s, const kl_rnn* rnn, const kl_rnn_weights* w, kiln_tensor* x_proj,
                            kiln_tensor** state) {
  kiln_tensor *hidden = NULL, *xg[3] = {NULL, NULL, NULL}, *hg[3] = {NULL, NULL, NULL};
  kiln_tensor *r = NULL, *z = NULL, *n = NULL, *h = NULL;
  kiln_status st;
  KL_TRY(kl_rnn_hidden_product(s, rnn, w, state[0], &hidden));
  KL_TRY(kl_rnn_chunk_last(s, rnn, x_proj, 3, xg));
  KL_TRY(kl_rnn_chunk_last(s, rnn, hidden, 3, hg));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_ADD, xg[R], hg[R], &r));
  KL_TRY(kl_rnn_unary(s, rnn, KL_RNN_OP_SIGMOID, r, &r));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_ADD, xg[Z], hg[Z], &z));
  KL_TRY(kl_rnn_unary(s, rnn, KL_RNN_OP_SIGMOID, z, &z));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_MUL, r, hg[N], &n));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_ADD, xg[N], n, &n));
  KL_TRY(kl_rnn_unary(s, rnn, KL_RNN_OP_TANH, n, &n));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_SUB, state[0], n, &h));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_MUL, z, h, &h));
  KL_TRY(kl_rnn_binary(s, rnn, KL_RNN_OP_ADD, n, h, &h));
  state[0] = h;
done:
  return st;
}

static const char* const state_names[] = {"h0"};

static const kl_rnn_cell gru_cell = {"GRU", 3, 1, state_names, KL_RNN_PROJ_SIZE, gru_step, NULL};

kiln_status kl_register_gru(kiln_registrar* registrar) { return kl_rnn_register(registrar, &gru_cell); }
