// scaled_dot_product_attention in f32 without a mask (causal or not) and
// without dropout, a head at a time in the machine's widest vectors: the
// transformer's case. Query rows go in blocks of kRows; per block:
//   forward:  P = softmax(scale Q K^T) over each row's keys, O = P V
//   backward: P again, dP = dO V^T, D_r = P_r . dP_r,
//             dS = scale P (dP - D), dQ = dS K,
// and after the head's last block dK = dS^T Q and dV = P^T dO over all its
// rows (a head's P and dS are kept: 2 L S floats), with row i's keys j < n(i) (all S, or i + 1 with causality), so a causal
// row never computes the scores of the keys it leaves out and the work is
// about half the dense products'. Each product keeps kRows accumulators
// of eight lanes in registers and loads the shared operand once for all of
// them: the keys and values are transposed to [E, S8] once per head (S8:
// S rounded up to 8, zero-filled), so that a block's scores are runs of
// whole vectors along the keys. The f32 exp is kiln's vector one
// (kiln/kernels/cpu/vector_math.hpp).
#include <algorithm>
#include <limits>
#include <vector>

#include "attention_kernels.hpp"
#include "attention_shape.hpp"
#include "kiln/kernels/cpu/dense_sum.hpp"
#include "kiln/kernels/cpu/lanes8.hpp"
#include "kiln/kernels/cpu/vector_isa.hpp"
#include "kiln/kernels/cpu/vector_math.hpp"
#include "kiln/runtime.hpp"

namespace kiln::nn {
namespace {

using cpu::Lanes8;
using cpu::load8;
using cpu::store8;

constexpr int kRows = 4;

int64_t round_up8(int64_t n) { return (n + 7) / 8 * 8; }

// One head: query [L, E], key [S, E], value [S, Ev] (and the output's
// gradient [L, Ev]), each row contiguous, rows `*_rows` floats apart.
struct Head {
  int64_t l, s, e, ev;
  float scale;
  bool causal;
  int64_t q_rows, k_rows, v_rows, dout_rows;

  int64_t s8() const { return round_up8(s); }
  int64_t keys(int64_t i) const { return causal ? std::min(i + 1, s) : s; }
};

// kRows query rows from `first` (the last block may have fewer: its extra
// rows repeat the last one and their weights are 0).
struct Block {
  int64_t first, rows;
  int64_t keys[kRows];  // n of each row
  int64_t most;         // the largest n
  int64_t width;        // most, rounded up to 8

  Block(const Head& h, int64_t first_row) : first(first_row), rows(std::min<int64_t>(kRows, h.l - first_row)) {
    most = 0;
    for (int r = 0; r < kRows; ++r) {
      keys[r] = r < rows ? h.keys(first + r) : 0;
      most = std::max(most, keys[r]);
    }
    width = round_up8(most);
  }
  // Row r of an [L, ...] matrix whose rows are `stride` apart, the last
  // real row for the extra ones.
  const float* row(const float* m, int64_t stride, int r) const {
    return m + (first + std::min<int64_t>(r, rows - 1)) * stride;
  }
};

// t [cols, stride] from m [rows, cols] (rows m_rows apart); columns rows
// to stride zero.
[[gnu::always_inline]] inline void transpose_padded(const float* m, int64_t rows, int64_t cols, int64_t m_rows,
                                                    int64_t stride, float* __restrict t) {
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) t[c * stride + r] = m[r * m_rows + c];
    std::fill(t + c * stride + rows, t + (c + 1) * stride, 0.0f);
  }
}

// out[r][j, j + 8 V) = sum_d a_r[d] t[d][j, j + 8 V): kRows x V
// accumulators, each broadcast of a_r[d] and load of t[d] used V and kRows
// times.
template <int V>
[[gnu::always_inline]] inline void rows_times_columns(const float* const* rows, int64_t depth, const float* t,
                                                      int64_t stride, int64_t j, float* __restrict out) {
  Lanes8 acc[kRows][V] = {};
  for (int64_t d = 0; d < depth; ++d) {
    Lanes8 tv[V];
    for (int c = 0; c < V; ++c) load8(tv[c], t + d * stride + j + 8 * c);
    for (int r = 0; r < kRows; ++r) {
      const float a = rows[r][d];
      for (int c = 0; c < V; ++c) acc[r][c] += a * tv[c];
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < V; ++c) store8(out + r * stride + j + 8 * c, acc[r][c]);
}

// out[r][j] = sum_d a_r[d] t[d][j], j < b.width: a block's rows of a
// (a_rows apart) times a transposed [depth, stride] matrix.
[[gnu::always_inline]] inline void block_times_transposed(const Block& b, const float* a, int64_t a_rows,
                                                          int64_t depth, const float* t, int64_t stride,
                                                          float* __restrict out) {
  const float* rows[kRows];
  for (int r = 0; r < kRows; ++r) rows[r] = b.row(a, a_rows, r);
  int64_t j = 0;
  for (; j + 16 <= b.width; j += 16) rows_times_columns<2>(rows, depth, t, stride, j, out);
  if (j < b.width) rows_times_columns<1>(rows, depth, t, stride, j, out);
}

// out_r[x, x + 8 V) = sum_{j < b.most} w[r][j] m[j][x, x + 8 V).
template <int V>
[[gnu::always_inline]] inline void weights_times_columns(const Block& b, const float* w, int64_t stride,
                                                         const float* m, int64_t m_rows, int64_t cols, int64_t x,
                                                         float* __restrict out) {
  Lanes8 acc[kRows][V] = {};
  for (int64_t j = 0; j < b.most; ++j) {
    Lanes8 mv[V];
    for (int c = 0; c < V; ++c) load8(mv[c], m + j * m_rows + x + 8 * c);
    for (int r = 0; r < kRows; ++r) {
      const float weight = w[r * stride + j];
      for (int c = 0; c < V; ++c) acc[r][c] += weight * mv[c];
    }
  }
  for (int r = 0; r < b.rows; ++r)
    for (int c = 0; c < V; ++c) store8(out + (b.first + r) * cols + x + 8 * c, acc[r][c]);
}

// out_r[x] = sum_{j < b.most} w[r][j] m[j][x], x < cols: a block's weights
// ([kRows, stride]) times a [S, cols] matrix (rows m_rows apart) into the
// dense [L, cols] out; rows b.rows on are not stored.
[[gnu::always_inline]] inline void block_weights_times(const Block& b, const float* w, int64_t stride, const float* m,
                                                       int64_t m_rows, int64_t cols, float* __restrict out) {
  int64_t x = 0;
  for (; x + 16 <= cols; x += 16) weights_times_columns<2>(b, w, stride, m, m_rows, cols, x, out);
  for (; x + 8 <= cols; x += 8) weights_times_columns<1>(b, w, stride, m, m_rows, cols, x, out);
  for (; x < cols; ++x)
    for (int r = 0; r < b.rows; ++r) {
      float sum = 0;
      for (int64_t j = 0; j < b.most; ++j) sum += w[r * stride + j] * m[j * m_rows + x];
      out[(b.first + r) * cols + x] = sum;
    }
}

// out[j0 + k][x, x + 8 V) = sum_{i in [first, last)} w[i][j0 + k] a_i[x, x + 8 V)
// for the kRows keys from j0: the transposed weights of a whole head (rows
// `stride` apart) times its [L, cols] rows (a_rows apart), kRows x V
// accumulators; keys at or past `keys` are not stored.
template <int V>
[[gnu::always_inline]] inline void keys_times_columns(const float* w, int64_t stride, const float* a, int64_t a_rows,
                                                      int64_t first, int64_t last, int64_t j0, int64_t keys,
                                                      int64_t cols, int64_t x, float* __restrict out) {
  Lanes8 acc[kRows][V] = {};
  for (int64_t i = first; i < last; ++i) {
    Lanes8 av[V];
    for (int c = 0; c < V; ++c) load8(av[c], a + i * a_rows + x + 8 * c);
    for (int k = 0; k < kRows; ++k) {
      const float weight = w[i * stride + j0 + k];
      for (int c = 0; c < V; ++c) acc[k][c] += weight * av[c];
    }
  }
  for (int k = 0; k < kRows && j0 + k < keys; ++k)
    for (int c = 0; c < V; ++c) store8(out + (j0 + k) * cols + x + 8 * c, acc[k][c]);
}

// out[j][x] = sum_i w[i][j] a_i[x] for the head's keys j < h.s: w^T a, with
// w the [L, S8] weights of every query row (0 past each row's keys) and a
// [L, cols] (rows a_rows apart), into the dense [S, cols] out. A causal
// head's key j takes rows i >= j only: the others' weights are 0.
[[gnu::always_inline]] inline void head_weights_transposed_times(const Head& h, const float* w, int64_t stride,
                                                                 const float* a, int64_t a_rows, int64_t cols,
                                                                 float* __restrict out) {
  for (int64_t j0 = 0; j0 < h.s; j0 += kRows) {
    const int64_t first = h.causal ? std::min(j0, h.l) : 0;
    int64_t x = 0;
    for (; x + 16 <= cols; x += 16) keys_times_columns<2>(w, stride, a, a_rows, first, h.l, j0, h.s, cols, x, out);
    for (; x + 8 <= cols; x += 8) keys_times_columns<1>(w, stride, a, a_rows, first, h.l, j0, h.s, cols, x, out);
    for (; x < cols; ++x)
      for (int64_t j = j0; j < std::min(j0 + kRows, h.s); ++j) {
        float sum = 0;
        for (int64_t i = first; i < h.l; ++i) sum += w[i * stride + j] * a[i * a_rows + x];
        out[j * cols + x] = sum;
      }
  }
}

// Turns each row's scores (p[r][0, width)) into its attention weights:
// softmax over its keys, 0 past them and in the extra rows.
[[gnu::always_inline]] inline void softmax_rows(const Block& b, float scale, int64_t stride, float* __restrict p) {
  for (int r = 0; r < kRows; ++r) {
    float* row = p + r * stride;
    const int64_t n = b.keys[r];
    if (n == 0) {
      std::fill(row, row + b.width, 0.0f);
      continue;
    }
    for (int64_t j = 0; j < b.width; ++j) row[j] *= scale;
    std::fill(row + n, row + b.width, -std::numeric_limits<float>::infinity());
    float part[8];
    std::fill(part, part + 8, -std::numeric_limits<float>::infinity());
    for (int64_t j = 0; j < b.width; j += 8)
      for (int k = 0; k < 8; ++k) part[k] = part[k] < row[j + k] ? row[j + k] : part[k];
    float max = part[0];
    for (int k = 1; k < 8; ++k) max = max < part[k] ? part[k] : max;
    for (int64_t j = 0; j < b.width; ++j) row[j] = cpu::exp_f32(row[j] - max);
    std::fill(row + n, row + b.width, 0.0f);
    const float inverse = 1.0f / cpu::dense_sum<float>(0, b.width, [row](int64_t j) { return row[j]; });
    for (int64_t j = 0; j < b.width; ++j) row[j] *= inverse;
  }
}

// Scratch of forward_head: E * S8 + kRows * S8 floats.
[[gnu::always_inline]] inline void forward_head(const Head& h, const float* q, const float* k, const float* v,
                                                float* __restrict out, float* __restrict scratch) {
  const int64_t s8 = h.s8();
  float* kt = scratch;
  float* p = kt + h.e * s8;
  transpose_padded(k, h.s, h.e, h.k_rows, s8, kt);
  for (int64_t first = 0; first < h.l; first += kRows) {
    const Block b(h, first);
    block_times_transposed(b, q, h.q_rows, h.e, kt, s8, p);
    softmax_rows(b, h.scale, s8, p);
    block_weights_times(b, p, s8, v, h.v_rows, h.ev, out);
  }
}

// Query rows of a head's backward scratch: L rounded up to whole blocks.
int64_t block_rows(int64_t l) { return (l + kRows - 1) / kRows * kRows; }

// Scratch of backward_head: (E + Ev + 2 L4) * S8 floats, L4 = block_rows(L).
// The weights P and their gradient dS of every query row are kept (0 past
// each row's keys), so that dK = dS^T Q and dV = P^T dO are products over
// the query rows with their accumulators in registers.
[[gnu::always_inline]] inline void backward_head(const Head& h, const float* dout, const float* q, const float* k,
                                                 const float* v, float* __restrict dq, float* __restrict dk,
                                                 float* __restrict dv, float* __restrict scratch) {
  const int64_t s8 = h.s8();
  float* kt = scratch;
  float* vt = kt + h.e * s8;
  float* p_all = vt + h.ev * s8;
  float* ds_all = p_all + block_rows(h.l) * s8;
  transpose_padded(k, h.s, h.e, h.k_rows, s8, kt);
  transpose_padded(v, h.s, h.ev, h.v_rows, s8, vt);
  for (int64_t first = 0; first < h.l; first += kRows) {
    const Block b(h, first);
    float* p = p_all + first * s8;
    float* ds = ds_all + first * s8;
    block_times_transposed(b, q, h.q_rows, h.e, kt, s8, p);
    softmax_rows(b, h.scale, s8, p);
    block_times_transposed(b, dout, h.dout_rows, h.ev, vt, s8, ds);  // dP
    const float scale = h.scale;
    for (int r = 0; r < kRows; ++r) {
      float* __restrict pr = p + r * s8;
      float* __restrict dsr = ds + r * s8;
      const float d = cpu::dense_sum<float>(0, b.width, [pr, dsr](int64_t j) { return pr[j] * dsr[j]; });
      for (int64_t j = 0; j < b.width; ++j) dsr[j] = scale * pr[j] * (dsr[j] - d);
      std::fill(pr + b.width, pr + s8, 0.0f);
      std::fill(dsr + b.width, dsr + s8, 0.0f);
    }
    block_weights_times(b, ds, s8, k, h.k_rows, h.e, dq);
  }
  head_weights_transposed_times(h, ds_all, s8, q, h.q_rows, h.e, dk);
  head_weights_transposed_times(h, p_all, s8, dout, h.dout_rows, h.ev, dv);
}

// The heads compiled for wider vectors with fused multiply-adds, called
// where the CPU has them.
struct ForwardArgs {
  const Head& h;
  const float *q, *k, *v;
  float* out;
  float* scratch;
};
struct BackwardArgs {
  const Head& h;
  const float *dout, *q, *k, *v;
  float *dq, *dk, *dv;
  float* scratch;
};

void forward_plain(const ForwardArgs& a) { forward_head(a.h, a.q, a.k, a.v, a.out, a.scratch); }
void backward_plain(const BackwardArgs& a) {
  backward_head(a.h, a.dout, a.q, a.k, a.v, a.dq, a.dk, a.dv, a.scratch);
}
#if defined(__x86_64__)
__attribute__((target("avx512f,avx512dq,fma"))) void forward_avx512(const ForwardArgs& a) {
  forward_head(a.h, a.q, a.k, a.v, a.out, a.scratch);
}
__attribute__((target("avx2,fma"))) void forward_avx2(const ForwardArgs& a) {
  forward_head(a.h, a.q, a.k, a.v, a.out, a.scratch);
}
__attribute__((target("avx512f,avx512dq,fma"))) void backward_avx512(const BackwardArgs& a) {
  backward_head(a.h, a.dout, a.q, a.k, a.v, a.dq, a.dk, a.dv, a.scratch);
}
__attribute__((target("avx2,fma"))) void backward_avx2(const BackwardArgs& a) {
  backward_head(a.h, a.dout, a.q, a.k, a.v, a.dq, a.dk, a.dv, a.scratch);
}
#endif

void run_head(const ForwardArgs& a) {
#if defined(__x86_64__)
  static const auto run = cpu::for_this_cpu(&forward_plain, &forward_avx2, &forward_avx512);
#else
  static const auto run = &forward_plain;
#endif
  run(a);
}

void run_head(const BackwardArgs& a) {
#if defined(__x86_64__)
  static const auto run = cpu::for_this_cpu(&backward_plain, &backward_avx2, &backward_avx512);
#else
  static const auto run = &backward_plain;
#endif
  run(a);
}

// A [..., rows, cols] input as the kernels read it: each row contiguous,
// rows `row_stride` floats apart, head b's first row at offsets[b]. An
// input whose rows are not contiguous is copied (`dense` keeps the copy).
struct HeadRows {
  Tensor dense;
  const float* data;
  std::vector<int64_t> offsets;
  int64_t row_stride;

  HeadRows(Runtime& rt, const Tensor& t, int64_t batch) {
    const Shape& shape = t.shape();
    const int rank = shape.rank();
    dense = shape[rank - 1] > 1 && t.strides()[rank - 1] != 1 ? rt.contiguous(t) : t;
    const Shape& strides = dense.strides();
    data = dense.data<float>();
    row_stride = shape[rank - 2] > 1 ? strides[rank - 2] : shape[rank - 1];
    offsets.resize(size_t(batch));
    for (int64_t b = 0; b < batch; ++b) {
      int64_t rest = b, offset = 0;
      for (int d = rank - 3; d >= 0; --d) {
        offset += (rest % shape[d]) * strides[d];
        rest /= shape[d];
      }
      offsets[size_t(b)] = offset;
    }
  }
  const float* head(int64_t b) const { return data + offsets[size_t(b)]; }
};

// This path takes f32 calls without a mask and without dropout.
bool takes(const AttentionShape& s, const Tensor& query, const Tensor& mask) {
  return query.dtype() == DType::f32 && !mask.defined() && s.dropout <= 0.0;
}

}  // namespace

bool attention_rows_f32(const KernelCall& c) {
  const Tensor mask = c.inputs.size() > 3 ? c.inputs[3] : Tensor();
  const AttentionShape s = attention_shape(c.op, c.attrs, c.inputs[0], c.inputs[1], c.inputs[2], mask);
  if (!takes(s, c.inputs[0], mask)) return false;
  const HeadRows q(c.runtime, c.inputs[0], s.batch), k(c.runtime, c.inputs[1], s.batch),
      v(c.runtime, c.inputs[2], s.batch);
  const Head h{s.l, s.s, s.e, s.ev, float(s.scale), s.causal, q.row_stride, k.row_stride, v.row_stride, 0};
  float* out = c.outputs[0].data<float>();
  c.runtime.thread_pool().parallel_for(s.batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(size_t((h.e + kRows) * h.s8()));
    for (int64_t b = begin; b < end; ++b)
      run_head(ForwardArgs{h, q.head(b), k.head(b), v.head(b), out + b * h.l * h.ev, scratch.data()});
  });
  return true;
}

bool attention_backward_rows_f32(const KernelCall& c) {
  const Tensor mask = c.inputs.size() > 5 ? c.inputs[5] : Tensor();
  const AttentionShape s = attention_shape(c.op, c.attrs, c.inputs[1], c.inputs[2], c.inputs[3], mask);
  if (!takes(s, c.inputs[1], mask)) return false;
  const HeadRows dout(c.runtime, c.inputs[0], s.batch), q(c.runtime, c.inputs[1], s.batch),
      k(c.runtime, c.inputs[2], s.batch), v(c.runtime, c.inputs[3], s.batch);
  const Head h{s.l,          s.s,          s.e,          s.ev,           float(s.scale),
               s.causal,     q.row_stride, k.row_stride, v.row_stride, dout.row_stride};
  float* dq = c.outputs[0].data<float>();
  float* dk = c.outputs[1].data<float>();
  float* dv = c.outputs[2].data<float>();
  c.runtime.thread_pool().parallel_for(s.batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(size_t((h.e + h.ev + 2 * block_rows(h.l)) * h.s8()));
    for (int64_t b = begin; b < end; ++b)
      run_head(BackwardArgs{h, dout.head(b), q.head(b), k.head(b), v.head(b), dq + b * h.l * h.e,
                            dk + b * h.s * h.e, dv + b * h.s * h.ev, scratch.data()});
  });
  return true;
}

}  // namespace kiln::nn
