#include "lstm_kernels.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <type_traits>
#include <vector>

#include "kiln/error.hpp"
#include "kiln/kernels/cpu/vector_isa.hpp"
#include "kiln/kernels/dnnl_context.hpp"
#include "kiln/runtime.hpp"
#include "lstm_cell.hpp"
#include "lstm_step_product.hpp"

namespace kiln::nn {
namespace {

using lstm::CellBackward;
using lstm::CellForward;

// The f32 cell loops compiled for wider vectors than baseline x86-64,
// called only where the CPU has them.
#if defined(__x86_64__)
__attribute__((target("avx512f,avx512dq,fma"))) void forward_avx512(const CellForward<float>& s) {
  lstm::cell_forward(s);
}
__attribute__((target("avx2,fma"))) void forward_avx2(const CellForward<float>& s) { lstm::cell_forward(s); }
__attribute__((target("avx512f,avx512dq,fma"))) void backward_avx512(const CellBackward<float>& s) {
  lstm::cell_backward(s);
}
__attribute__((target("avx2,fma"))) void backward_avx2(const CellBackward<float>& s) { lstm::cell_backward(s); }

void forward_plain(const CellForward<float>& s) { lstm::cell_forward(s); }
void backward_plain(const CellBackward<float>& s) { lstm::cell_backward(s); }

void run_cell(const CellForward<float>& s) {
  static const auto run = cpu::for_this_cpu(&forward_plain, &forward_avx2, &forward_avx512);
  run(s);
}
void run_cell(const CellBackward<float>& s) {
  static const auto run = cpu::for_this_cpu(&backward_plain, &backward_avx2, &backward_avx512);
  run(s);
}
#else
void run_cell(const CellForward<float>& s) { lstm::cell_forward(s); }
void run_cell(const CellBackward<float>& s) { lstm::cell_backward(s); }
#endif
void run_cell(const CellForward<double>& s) { lstm::cell_forward(s); }
void run_cell(const CellBackward<double>& s) { lstm::cell_backward(s); }

// c[m, n] = op(a)[m, k] op(b)[k, n], row-major with leading dimensions,
// op transposing where asked. f32 runs oneDNN's sgemm on as many OpenMP
// threads as the calling thread allows; f64, the reference, plain loops.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float* c, int64_t ldc) {
  const dnnl_status_t status =
      dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  KILN_CHECK(status == dnnl_success, Status::internal, "op 'lstm_recurrence': oneDNN's sgemm failed on ", m, "x",
             k, "x", n, " (status ", int(status), ")");
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
          int64_t ldb, double* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += (trans_a ? a[p * lda + i] : a[i * lda + p]) * (trans_b ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = acc;
    }
}

// The product of every step of a call: h W_hh^T into the gates (forward)
// or dg W_hh into h's gradient (backward). f32 runs kiln's kernel on W_hh
// packed once here where it takes (lstm_step_product.hpp), else gemm.
template <class T>
class StepProduct {
 public:
  StepProduct(const T* weight, int64_t hidden, bool to_gates)
      : weight_(weight), hidden_(hidden), to_gates_(to_gates) {
    if constexpr (std::is_same_v<T, float>)
      if (lstm::step_product_takes(hidden))
        packed_.emplace(to_gates ? lstm::PackedWeight::hidden_to_gates(weight, hidden)
                                 : lstm::PackedWeight::gates_to_hidden(weight, hidden));
  }

  // out[rows, 4H] from in[rows, H] (to_gates), or out[rows, H] from in[rows, 4H].
  void operator()(const T* in, int64_t rows, T* out) const {
    if constexpr (std::is_same_v<T, float>)
      if (packed_) return packed_->multiply(in, rows, out);
    const int64_t gates = 4 * hidden_;
    if (to_gates_) gemm(false, true, rows, gates, hidden_, in, hidden_, weight_, hidden_, out, gates);
    else gemm(false, false, rows, hidden_, gates, in, gates, weight_, hidden_, out, hidden_);
  }

 private:
  const T* weight_;
  int64_t hidden_;
  bool to_gates_;
  std::optional<lstm::PackedWeight> packed_;
};

// Sizes of a call: T steps of N rows, H the hidden size (4H gates).
struct Sequence {
  int64_t steps, batch, hidden;
  bool reverse;

  // `sequence` is any [T, N, ...] tensor of the call.
  Sequence(const KernelCall& c, const Tensor& sequence, const Tensor& weight_hh)
      : steps(sequence.dim(0)),
        batch(sequence.dim(1)),
        hidden(weight_hh.dim(1)),
        reverse(c.op.attr_bool(c.attrs, "reverse")) {}

  int64_t gates() const { return 4 * hidden; }
  // The time index of the k-th step taken.
  int64_t time(int64_t k) const { return reverse ? steps - 1 - k : k; }
  // Element offset of row `row` at time t in a [T, N, width] tensor.
  int64_t at(int64_t t, int64_t row, int64_t width) const { return (t * batch + row) * width; }
};

// Runs fn(first_row, rows) over blocks of the batch, one per worker of the
// runtime's pool (blocks of fewer than kMinRows rows are not worth a
// thread). The blocks are the parallelism: a product per step is too small
// to split again (halving the blocks to balance a late thread slowed the
// products, whose register blocks want six rows), and oneDNN's sgemm
// inside the pool's parallel region runs on its calling thread.
void for_row_blocks(Runtime& rt, int64_t batch, const std::function<void(int64_t, int64_t)>& fn) {
  constexpr int64_t kMinRows = 4;
  const int64_t workers = rt.thread_pool().num_workers();
  const int64_t grain = std::max(kMinRows, (batch + workers - 1) / workers);
  rt.thread_pool().parallel_for(batch, grain, [&](int64_t begin, int64_t end) { fn(begin, end - begin); });
}

// b_hh, or zeros without one: the cell loop adds it either way.
template <class T>
std::vector<T> bias_or_zeros(const Tensor& bias, int64_t gates) {
  if (!bias.defined()) return std::vector<T>(size_t(gates), T(0));
  const T* b = bias.data<T>();
  return std::vector<T>(b, b + gates);
}

// Inputs x_proj, h0, c0, weight_hh, bias_hh?; outputs output, h_n, c_n,
// gates, cells.
template <class T>
void forward(const KernelCall& c) {
  const Sequence q(c, c.inputs[0], c.inputs[3]);
  const int64_t hidden = q.hidden, gates = q.gates();
  const T* x_proj = c.inputs[0].data<T>();
  const T* h0 = c.inputs[1].data<T>();
  const T* c0 = c.inputs[2].data<T>();
  const T* weight = c.inputs[3].data<T>();
  const std::vector<T> bias = bias_or_zeros<T>(c.inputs.size() > 4 ? c.inputs[4] : Tensor(), gates);
  T* out = c.outputs[0].data<T>();
  T* activations = c.outputs[3].data<T>();
  T* cells = c.outputs[4].data<T>();
  const StepProduct<T> product(weight, hidden, true);
  for_row_blocks(c.runtime, q.batch, [&](int64_t row, int64_t rows) {
    const T* h_prev = h0 + row * hidden;
    const T* c_prev = c0 + row * hidden;
    for (int64_t k = 0; k < q.steps; ++k) {
      const int64_t t = q.time(k);
      T* g = activations + q.at(t, row, gates);
      product(h_prev, rows, g);
      T* h = out + q.at(t, row, hidden);
      T* cell = cells + q.at(t, row, hidden);
      run_cell(CellForward<T>{g, x_proj + q.at(t, row, gates), bias.data(), c_prev, cell, h, rows, hidden});
      h_prev = h;
      c_prev = cell;
    }
  });
  const int64_t last = q.time(q.steps - 1);
  std::copy_n(out + q.at(last, 0, hidden), q.batch * hidden, c.outputs[1].data<T>());
  std::copy_n(cells + q.at(last, 0, hidden), q.batch * hidden, c.outputs[2].data<T>());
}

// [T, N, H]: the h each step started from (h0 for the first step taken).
template <class T>
void previous_hs(const Sequence& q, const T* h0, const T* out, T* prev) {
  const int64_t block = q.batch * q.hidden;
  for (int64_t k = 0; k < q.steps; ++k)
    std::copy_n(k == 0 ? h0 : out + q.at(q.time(k - 1), 0, q.hidden), block, prev + q.at(q.time(k), 0, q.hidden));
}

// Inputs grad_output, grad_h_n, grad_c_n, h0, c0, weight_hh, output, gates,
// cells; outputs the gradients of x_proj, h0, c0, weight_hh and bias_hh.
template <class T>
void backward(const KernelCall& c) {
  const Sequence q(c, c.inputs[0], c.inputs[5]);
  const int64_t hidden = q.hidden, gates = q.gates();
  const T* grad_out = c.inputs[0].data<T>();
  const T* c0 = c.inputs[4].data<T>();
  const T* weight = c.inputs[5].data<T>();
  const T* activations = c.inputs[7].data<T>();
  const T* cells = c.inputs[8].data<T>();
  T* grad_x = c.outputs[0].data<T>();
  T* grad_h0 = c.outputs[1].data<T>();
  T* grad_c0 = c.outputs[2].data<T>();
  const StepProduct<T> product(weight, hidden, false);
  for_row_blocks(c.runtime, q.batch, [&](int64_t row, int64_t rows) {
    // The gradients of h and c flowing back into the step being taken.
    std::vector<T> dh(c.inputs[1].data<T>() + row * hidden, c.inputs[1].data<T>() + (row + rows) * hidden);
    std::vector<T> dc(c.inputs[2].data<T>() + row * hidden, c.inputs[2].data<T>() + (row + rows) * hidden);
    for (int64_t k = q.steps - 1; k >= 0; --k) {
      const int64_t t = q.time(k);
      const T* c_prev = k > 0 ? cells + q.at(q.time(k - 1), row, hidden) : c0 + row * hidden;
      T* dg = grad_x + q.at(t, row, gates);
      run_cell(CellBackward<T>{activations + q.at(t, row, gates), cells + q.at(t, row, hidden), c_prev,
                               grad_out + q.at(t, row, hidden), dh.data(), dc.data(), dg, rows, hidden});
      product(dg, rows, dh.data());
    }
    std::copy(dh.begin(), dh.end(), grad_h0 + row * hidden);
    std::copy(dc.begin(), dc.end(), grad_c0 + row * hidden);
  });

  // grad W_hh = sum over steps of grad_gates^T h_prev: one product over
  // every step and row, on all the threads oneDNN is given.
  const int64_t positions = q.steps * q.batch;
  Tensor prev = c.runtime.empty(c.inputs[6].shape(), c.inputs[6].dtype());
  previous_hs(q, c.inputs[3].data<T>(), c.inputs[6].data<T>(), prev.data<T>());
  {
    const auto lock = c.runtime.dnnl().lock_for_execution(positions * gates * hidden /
                                                          DnnlContext::kMultiplyAddsPerElement);
    gemm(true, false, gates, hidden, positions, grad_x, gates, prev.data<T>(), hidden, c.outputs[3].data<T>(), hidden);
  }
  // grad b_hh: the gates' gradients summed over every step and row.
  T* grad_bias = c.outputs[4].data<T>();
  std::fill_n(grad_bias, gates, T(0));
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t j = 0; j < gates; ++j) grad_bias[j] += grad_x[p * gates + j];
}

}  // namespace

void lstm_recurrence_kernel(const KernelCall& c) {
  if (c.inputs[0].dtype() == DType::f64) return forward<double>(c);
  forward<float>(c);
}

void lstm_recurrence_backward_kernel(const KernelCall& c) {
  if (c.inputs[0].dtype() == DType::f64) return backward<double>(c);
  backward<float>(c);
}

}  // namespace kiln::nn
