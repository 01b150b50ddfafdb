// scaled_dot_product_attention fused on the CPU, in the input's precision.
// Forward, per query row i: one pass over the keys keeps the running
// maximum m of the scores, the running sum l of exp(score - m) and the
// running weighted sum of values, rescaling both by exp(m_old - m_new)
// whenever the maximum grows; the row is that sum over l (0 when every key
// is masked, as in PyTorch). Rows are independent and run in parallel.
//
// Backward, with P = softmax(scores) recomputed a row at a time from the
// row's log-sum-exp (a first pass over the keys) and D_i = dO_i . O_i:
//   dV_j += P_ij dO_i,  dS_ij = P_ij (dO_i . V_j - D_i),
//   dQ_i += scale dS_ij K_j,  dK_j += scale dS_ij Q_i.
// dK and dV gather over every query row, so one batch element (a batch
// index, a head) runs on one thread, which owns its rows of dK and dV.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attention_kernels.hpp"
#include "attention_shape.hpp"
#include "kiln/runtime.hpp"

namespace kiln::nn {
namespace {

template <class T>
T dot(const T* a, const T* b, int64_t n) {
  T acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

// a += alpha * b
template <class T>
void axpy(T* a, T alpha, const T* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] += alpha * b[i];
}

// The scores of one call: query, key and the mask, with the rules that
// drop a key from a query's row.
template <class T>
struct Scores {
  const AttentionShape& s;
  const T* q;
  const T* k;
  const bool* keep;  // a bool mask, or null
  const T* add;      // a floating mask, or null

  Scores(const AttentionShape& shape, const Tensor& query, const Tensor& key, const Tensor& mask)
      : s(shape),
        q(query.data<T>()),
        k(key.data<T>()),
        keep(s.mask == AttentionMask::keep ? mask.data<bool>() : nullptr),
        add(s.mask == AttentionMask::add ? mask.data<T>() : nullptr) {}

  // Keys past `end` are left out by causality.
  int64_t end(int64_t i) const { return s.causal ? std::min(i + 1, s.s) : s.s; }

  // The score of key j for query i of batch b; -inf when the key is left
  // out (which a floating mask of -inf does too).
  T at(int64_t b, int64_t i, int64_t j) const {
    if (keep && !keep[s.mask_index(b, i, j)]) return -std::numeric_limits<T>::infinity();
    const T score = T(s.scale) * dot(q + (b * s.l + i) * s.e, k + (b * s.s + j) * s.e, s.e);
    return add ? score + add[s.mask_index(b, i, j)] : score;
  }

  // log(sum_j exp(score_j)) over row i: -inf when every key is left out.
  T log_sum_exp(int64_t b, int64_t i) const {
    T max = -std::numeric_limits<T>::infinity(), sum = 0;
    for (int64_t j = 0; j < end(i); ++j) {
      const T score = at(b, i, j);
      if (score == -std::numeric_limits<T>::infinity()) continue;
      if (score > max) {
        sum *= std::exp(max - score);
        max = score;
      }
      sum += std::exp(score - max);
    }
    return max + std::log(sum);
  }
};

template <class T>
void forward(const KernelCall& c) {
  const Tensor mask = c.inputs.size() > 3 ? c.inputs[3] : Tensor();
  const AttentionShape s = attention_shape(c.op, c.attrs, c.inputs[0], c.inputs[1], c.inputs[2], mask);
  const Scores<T> scores(s, c.inputs[0], c.inputs[1], mask);
  const T* v = c.inputs[2].data<T>();
  T* out = c.outputs[0].data<T>();
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, s.s * (s.e + s.ev)));
  c.runtime.thread_pool().parallel_for(s.batch * s.l, grain, [&](int64_t begin, int64_t end) {
    std::vector<T> acc(size_t(s.ev));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / s.l, i = row % s.l;
      T max = -std::numeric_limits<T>::infinity(), sum = 0;
      std::fill(acc.begin(), acc.end(), T(0));
      for (int64_t j = 0; j < scores.end(i); ++j) {
        const T score = scores.at(b, i, j);
        if (score == -std::numeric_limits<T>::infinity()) continue;
        if (score > max) {
          const T rescale = std::exp(max - score);
          sum *= rescale;
          for (T& a : acc) a *= rescale;
          max = score;
        }
        const T p = std::exp(score - max);
        sum += p;
        axpy(acc.data(), p, v + (b * s.s + j) * s.ev, s.ev);
      }
      // A row with every key left out is 0, as in PyTorch (not 0 / 0).
      const T inverse = sum > 0 ? 1 / sum : 0;
      for (int64_t x = 0; x < s.ev; ++x) out[row * s.ev + x] = acc[size_t(x)] * inverse;
    }
  });
}

template <class T>
void backward(const KernelCall& c) {
  const Tensor mask = c.inputs.size() > 5 ? c.inputs[5] : Tensor();
  const AttentionShape s = attention_shape(c.op, c.attrs, c.inputs[1], c.inputs[2], c.inputs[3], mask);
  const Scores<T> scores(s, c.inputs[1], c.inputs[2], mask);
  const T* dout = c.inputs[0].data<T>();
  const T* v = c.inputs[3].data<T>();
  const T* out = c.inputs[4].data<T>();
  T* dq = c.outputs[0].data<T>();
  T* dk = c.outputs[1].data<T>();
  T* dv = c.outputs[2].data<T>();
  const T scale = T(s.scale);
  c.runtime.thread_pool().parallel_for(s.batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      std::fill(dk + b * s.s * s.e, dk + (b + 1) * s.s * s.e, T(0));
      std::fill(dv + b * s.s * s.ev, dv + (b + 1) * s.s * s.ev, T(0));
      for (int64_t i = 0; i < s.l; ++i) {
        const int64_t row = b * s.l + i;
        const T* qi = scores.q + row * s.e;
        const T* doi = dout + row * s.ev;
        T* dqi = dq + row * s.e;
        std::fill(dqi, dqi + s.e, T(0));
        const T lse = scores.log_sum_exp(b, i);
        const T d = dot(doi, out + row * s.ev, s.ev);
        for (int64_t j = 0; j < scores.end(i); ++j) {
          const T score = scores.at(b, i, j);
          if (score == -std::numeric_limits<T>::infinity()) continue;
          const int64_t key = b * s.s + j;
          const T p = std::exp(score - lse);
          axpy(dv + key * s.ev, p, doi, s.ev);
          const T ds = p * (dot(doi, v + key * s.ev, s.ev) - d);
          axpy(dqi, scale * ds, scores.k + key * s.e, s.e);
          axpy(dk + key * s.e, scale * ds, qi, s.e);
        }
      }
    }
  });
}

// Dropout draws and keeps a mask of the [L, S] weights, which this kernel
// never holds.
bool drops(const KernelCall& c) { return c.op.attr_real(c.attrs, "dropout_p") > 0.0; }

}  // namespace

void attention_fused_kernel(const KernelCall& c) {
  if (c.outputs[0].numel() == 0 || attention_rows_f32(c)) return;
  with_dense_inputs(c, [](const KernelCall& dense) {
    if (drops(dense)) return attention_composed_kernel(dense);
    if (dense.inputs[0].dtype() == DType::f64) return forward<double>(dense);
    forward<float>(dense);
  });
}

void attention_backward_fused_kernel(const KernelCall& c) {
  // The mask's gradient is the [L, S] gradient of the scores, summed to its
  // shape: the composed kernel holds that matrix anyway.
  if (!c.op.attr_bool(c.attrs, "attn_mask_grad") && attention_backward_rows_f32(c)) return;
  with_dense_inputs(c, [](const KernelCall& dense) {
    if (drops(dense) || dense.op.attr_bool(dense.attrs, "attn_mask_grad"))
      return attention_backward_composed_kernel(dense);
    if (dense.inputs[1].dtype() == DType::f64) return backward<double>(dense);
    backward<float>(dense);
  });
}

}  // namespace kiln::nn
