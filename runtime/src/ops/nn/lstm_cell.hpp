// One LSTM time step over a block of batch rows, element by element: the
// forward from the gates' pre-activations, the backward from the saved
// activations. The loops are written for the vectoriser; lstm_kernels.cpp
// compiles the f32 ones for AVX-512 and AVX2 as well and picks by CPU.
//
// Rows are [4H] gates in the order i, f, g, o (PyTorch's), [H] states.
#pragma once

#include <cstdint>

#include "lstm_math.hpp"

namespace kiln::nn::lstm {

template <class T>
struct CellForward {
  T* gates;          // [rows, 4H]: h W_hh^T in, the activated i, f, g, o out
  const T* x_proj;   // [rows, 4H]: x W_ih^T + b_ih
  const T* bias;     // [4H]: b_hh (zeros without one)
  const T* c_prev;   // [rows, H]
  T* c;              // [rows, H]
  T* h;              // [rows, H]
  int64_t rows, hidden;
};

// One row, each of its blocks through a pointer of its own: the vectoriser
// takes restrict parameters as independent streams (pointers into one row
// of a struct's array it does not).
//   i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of the pre-activations
//   c = f c_prev + i g,  h = o tanh(c)
template <class T>
[[gnu::always_inline]] inline void forward_row(T* __restrict gi, T* __restrict gf, T* __restrict gg,
                                               T* __restrict go, const T* __restrict xi, const T* __restrict xf,
                                               const T* __restrict xg, const T* __restrict xo,
                                               const T* __restrict bias, const T* __restrict c_prev,
                                               T* __restrict c, T* __restrict h, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const T i = sigmoid(gi[j] + xi[j] + bias[j]);
    const T f = sigmoid(gf[j] + xf[j] + bias[n + j]);
    const T cand = tanh(gg[j] + xg[j] + bias[2 * n + j]);
    const T o = sigmoid(go[j] + xo[j] + bias[3 * n + j]);
    gi[j] = i;
    gf[j] = f;
    gg[j] = cand;
    go[j] = o;
    const T cell = f * c_prev[j] + i * cand;
    c[j] = cell;
    h[j] = o * tanh(cell);
  }
}

template <class T>
[[gnu::always_inline]] inline void cell_forward(const CellForward<T>& s) {
  const int64_t n = s.hidden;
  for (int64_t r = 0; r < s.rows; ++r) {
    T* g = s.gates + r * 4 * n;
    const T* x = s.x_proj + r * 4 * n;
    forward_row(g, g + n, g + 2 * n, g + 3 * n, x, x + n, x + 2 * n, x + 3 * n, s.bias, s.c_prev + r * n,
                s.c + r * n, s.h + r * n, n);
  }
}

template <class T>
struct CellBackward {
  const T* gates;   // [rows, 4H]: the forward's activations
  const T* c;       // [rows, H]: the step's cell state
  const T* c_prev;  // [rows, H]
  const T* grad_h;  // [rows, H]: the gradient of the step's output
  const T* dh;      // [rows, H]: the gradient of h from the later steps
  T* dc;            // [rows, H]: that of c from the later steps in, of c_prev out
  T* grad_gates;    // [rows, 4H]: of the pre-activations, out
  int64_t rows, hidden;
};

template <class T>
[[gnu::always_inline]] inline void backward_row(const T* __restrict gi, const T* __restrict gf,
                                                const T* __restrict gg, const T* __restrict go,
                                                const T* __restrict c, const T* __restrict c_prev,
                                                const T* __restrict grad_h, const T* __restrict dh,
                                                T* __restrict dc, T* __restrict di, T* __restrict df,
                                                T* __restrict dg, T* __restrict d_o, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const T i = gi[j], f = gf[j], cand = gg[j], o = go[j];
    const T tc = tanh(c[j]);
    const T dht = dh[j] + grad_h[j];
    const T dct = dc[j] + dht * o * (T(1) - tc * tc);
    di[j] = dct * cand * i * (T(1) - i);
    df[j] = dct * c_prev[j] * f * (T(1) - f);
    dg[j] = dct * i * (T(1) - cand * cand);
    d_o[j] = dht * tc * o * (T(1) - o);
    dc[j] = dct * f;
  }
}

template <class T>
[[gnu::always_inline]] inline void cell_backward(const CellBackward<T>& s) {
  const int64_t n = s.hidden;
  for (int64_t r = 0; r < s.rows; ++r) {
    const T* g = s.gates + r * 4 * n;
    T* d = s.grad_gates + r * 4 * n;
    backward_row(g, g + n, g + 2 * n, g + 3 * n, s.c + r * n, s.c_prev + r * n, s.grad_h + r * n, s.dh + r * n,
                 s.dc + r * n, d, d + n, d + 2 * n, d + 3 * n, n);
  }
}

}  // namespace kiln::nn::lstm
