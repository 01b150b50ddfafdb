// softmax and log_softmax, and their backward ops softmax_backward(grad,
// output) and log_softmax_backward(grad, output), which need only the
// forward's output.
#include <cmath>
#include <cstring>
#include <limits>

#include "common.hpp"
#include "families.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "softmax.hpp"

namespace kiln::reduction {

SoftmaxRows softmax_rows(const OpDef& op, const Shape& shape, const Attrs& attrs) {
  const int dim = normalize_dim(int(op.attr_int(attrs, "dim")), shape.rank(), op.name.c_str());
  SoftmaxRows r;
  if (shape.rank() == 0) return r;  // a scalar is one row of one element
  for (int i = 0; i < dim; ++i) r.outer *= shape[i];
  r.n = shape[dim];
  for (int i = dim + 1; i < shape.rank(); ++i) r.inner *= shape[i];
  return r;
}

namespace {

// Calls fn(base, stride) for every row, in parallel.
template <class Fn>
void for_each_row(ThreadPool& pool, const SoftmaxRows& r, Fn&& fn) {
  const int64_t grain = std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, r.n));
  pool.parallel_for(r.outer * r.inner, grain, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) fn((row / r.inner) * r.n * r.inner + row % r.inner, r.inner);
  });
}

// Subtracting the row maximum keeps exp() from overflowing.
template <bool Log, class T>
void softmax_kernel(const KernelCall& c) {
  const SoftmaxRows r = softmax_rows(c.op, c.inputs[0].shape(), c.attrs);
  const T* x = c.inputs[0].data<T>();
  T* y = c.outputs[0].data<T>();
  using A = acc_t<T>;
  for_each_row(c.runtime.thread_pool(), r, [&](int64_t base, int64_t stride) {
    A m = -std::numeric_limits<A>::infinity();
    for (int64_t k = 0; k < r.n; ++k) m = std::max(m, load_acc(x[base + k * stride]));
    A s = 0;
    for (int64_t k = 0; k < r.n; ++k) s += std::exp(load_acc(x[base + k * stride]) - m);
    const A log_s = std::log(s);
    for (int64_t k = 0; k < r.n; ++k) {
      const A shifted = load_acc(x[base + k * stride]) - m;
      y[base + k * stride] = store_acc<T>(Log ? shifted - log_s : std::exp(shifted) / s);
    }
  });
}

// softmax: gx = y (g - sum(g y)); log_softmax: gx = g - exp(y) sum(g).
template <bool Log, class T>
void softmax_backward_kernel(const KernelCall& c) {
  const SoftmaxRows r = softmax_rows(c.op, c.inputs[0].shape(), c.attrs);
  const T* g = c.inputs[0].data<T>();
  const T* y = c.inputs[1].data<T>();
  T* gx = c.outputs[0].data<T>();
  using A = acc_t<T>;
  for_each_row(c.runtime.thread_pool(), r, [&](int64_t base, int64_t stride) {
    A s = 0;
    for (int64_t k = 0; k < r.n; ++k) {
      const int64_t i = base + k * stride;
      s += Log ? load_acc(g[i]) : load_acc(g[i]) * load_acc(y[i]);
    }
    for (int64_t k = 0; k < r.n; ++k) {
      const int64_t i = base + k * stride;
      const A gi = load_acc(g[i]), yi = load_acc(y[i]);
      gx[i] = store_acc<T>(Log ? gi - std::exp(yi) * s : yi * (gi - s));
    }
  });
}

// Eight floats, carried in the widest vectors the build has (two SSE
// registers on x86-64's baseline).
typedef float Lanes8 __attribute__((vector_size(32)));

// Eight elements of the gradient and of the output, loaded together (a
// struct, so that no vector crosses a function boundary: 32-byte vectors
// have no register ABI without AVX).
struct GradAndOutput8 {
  Lanes8 g, y;
  GradAndOutput8(const float* g_at, const float* y_at) {
    std::memcpy(&g, g_at, sizeof g);
    std::memcpy(&y, y_at, sizeof y);
  }
};

// softmax_backward over dense f32 rows (dim the last, stride 1). oneDNN 2.6
// has only its reference code for it where the CPU lacks AVX-512 (1.9 ms a
// call for the transformer's [32, 4, 64, 64] attention weights on a Zen 3);
// this loop keeps eight partial sums of g y in vectors, then forms each
// y (g - sum) eight at a time.
void softmax_backward_dense_rows(const KernelCall& c, const SoftmaxRows& r) {
  const float* g = c.inputs[0].data<float>();
  const float* y = c.inputs[1].data<float>();
  float* gx = c.outputs[0].data<float>();
  const int64_t n = r.n, wide = n / 8 * 8;
  const int64_t grain = std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, n));
  c.runtime.thread_pool().parallel_for(r.outer, grain, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const float* gr = g + row * n;
      const float* yr = y + row * n;
      float* out = gx + row * n;
      Lanes8 part{};
      for (int64_t k = 0; k < wide; k += 8) {
        const GradAndOutput8 v(gr + k, yr + k);
        part += v.g * v.y;
      }
      float sum = 0.0f;
      for (int j = 0; j < 8; ++j) sum += part[j];
      for (int64_t k = wide; k < n; ++k) sum += gr[k] * yr[k];
      for (int64_t k = 0; k < wide; k += 8) {
        const GradAndOutput8 v(gr + k, yr + k);
        const Lanes8 result = v.y * (v.g - sum);
        std::memcpy(out + k, &result, sizeof result);
      }
      for (int64_t k = wide; k < n; ++k) out[k] = yr[k] * (gr[k] - sum);
    }
  });
}

// f32: dense rows of softmax through the loop above, the rest through oneDNN.
template <bool Log>
void softmax_backward_f32_kernel(const KernelCall& c) {
  const SoftmaxRows r = softmax_rows(c.op, c.inputs[0].shape(), c.attrs);
  if (!Log && r.inner == 1 && c.inputs[0].numel() > 0) return softmax_backward_dense_rows(c, r);
  softmax_backward_dnnl_kernel<Log>(c);
}

void softmax_infer(InferCall& c) {
  check_floating(c, 0);
  softmax_rows(c.op, c.inputs[0].shape(), c.attrs);  // checks dim
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
}

void softmax_backward_infer(InferCall& c) {
  check_same_dtype(c);
  KILN_CHECK(c.inputs[0].shape() == c.inputs[1].shape(), Status::shape_mismatch, "op '", c.op.name, "': grad ",
             to_string(c.inputs[0].shape()), " and output ", to_string(c.inputs[1].shape()), " must have one shape");
  softmax_infer(c);
}

template <bool Log>
std::vector<Tensor> softmax_backward(const BackwardCall& c) {
  return {call_op1(c.runtime, Log ? "log_softmax_backward" : "softmax_backward", {c.grad_outputs[0], c.outputs[0]},
                   {{"dim", c.op.attr_int(c.attrs, "dim")}})};
}

template <bool Log>
void add_softmax_ops(OpRegistry& r, const std::string& name) {
  OpDef op;
  op.name = name;
  op.inputs = {{"input"}};
  op.attrs = {attr_int("dim", -1)};
  op.infer = softmax_infer;
  op.backward = softmax_backward<Log>;
  op.saves_inputs = false;
  op.precision = PrecisionCategory::f32;
  op.set_kernel(DeviceType::cpu, DType::f32, softmax_dnnl_kernel<Log>);
  op.set_kernel(DeviceType::cpu, DType::f64, softmax_kernel<Log, double>);
  op.set_kernel(DeviceType::cpu, DType::f16, softmax_kernel<Log, Half>);
  op.set_kernel(DeviceType::cpu, DType::bf16, softmax_kernel<Log, BFloat16>);
  r.add(std::move(op));

  OpDef grad;
  grad.name = name + "_backward";
  grad.inputs = {{"grad"}, {"output"}};
  grad.attrs = {attr_int("dim", -1)};
  grad.infer = softmax_backward_infer;
  grad.set_kernel(DeviceType::cpu, DType::f32, softmax_backward_f32_kernel<Log>);
  grad.set_kernel(DeviceType::cpu, DType::f64, softmax_backward_kernel<Log, double>);
  grad.set_kernel(DeviceType::cpu, DType::f16, softmax_backward_kernel<Log, Half>);
  grad.set_kernel(DeviceType::cpu, DType::bf16, softmax_backward_kernel<Log, BFloat16>);
  r.add(std::move(grad));
}

}  // namespace

void register_softmax_ops(OpRegistry& r) {
  add_softmax_ops<false>(r, "softmax");
  add_softmax_ops<true>(r, "log_softmax");
}

}  // namespace kiln::reduction
