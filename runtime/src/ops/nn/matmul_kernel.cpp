#include "matmul_kernel.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "../elementwise/unary_functions.hpp"
#include "dnnl_helpers.hpp"
#include "dnnl_precision.hpp"
#include "kiln/error.hpp"
#include "kiln/util/str_cat.hpp"
#include "matmul_transposed_f32.hpp"

namespace kiln::nn {
namespace {

using elementwise::UnaryParams;

// The activation's parameters as the unary ops' formulas read them (relu:
// slope 0; gelu: the tanh form). The plain loops evaluate those formulas and
// oneDNN's post-op the same function, so f32 and f64 agree with each other
// and with relu and gelu(approximate = "tanh").
UnaryParams activation_params(LinearActivation activation) {
  return {0.0, 0.0, activation == LinearActivation::gelu_tanh};
}

dnnl::algorithm activation_algorithm(LinearActivation activation, const UnaryParams& p) {
  return static_cast<dnnl::algorithm>(activation == LinearActivation::relu ? elementwise::Relu::onednn(p)
                                                                          : elementwise::Gelu::onednn(p));
}

template <class Fn, class T>
void apply_each(T* values, int64_t n, const UnaryParams& p) {
  for (int64_t i = 0; i < n; ++i) values[i] = T(Fn::value(values[i], p));
}

// values[i] = activation(values[i]) for i < n.
template <class T>
void activate(T* values, int64_t n, LinearActivation activation) {
  if (activation == LinearActivation::none) return;
  const UnaryParams p = activation_params(activation);
  if (activation == LinearActivation::relu) apply_each<elementwise::Relu>(values, n, p);
  else apply_each<elementwise::Gelu>(values, n, p);
}

// Dims and strides of an operand with leading size-1 dims added up to `rank`,
// as oneDNN wants every operand of a matmul at the rank of the output.
struct Layout {
  Shape dims, strides;
};

Layout padded_layout(const Shape& dims, const Shape& strides, int rank) {
  Layout l;
  const int64_t outer = dims.rank() > 0 ? dims[0] * strides[0] : 1;
  for (int i = dims.rank(); i < rank; ++i) {
    l.dims.push_back(1);
    l.strides.push_back(outer);
  }
  for (int i = 0; i < dims.rank(); ++i) {
    l.dims.push_back(dims[i]);
    l.strides.push_back(strides[i]);
  }
  return l;
}

Layout bias_layout(int64_t n, int rank) {
  Shape dims;
  dims.resize(rank, 1);
  dims[rank - 1] = n;
  return {dims, contiguous_strides(dims)};
}

// The primitive for these layouts, or nothing when oneDNN has no fast
// implementation for them (a broadcast view with zero strides, say, which only
// its slow reference kernel takes: a dense copy is cheaper). Cached either way
// so a layout is only tried once.
// Every operand is in `dtype` (f32 or bf16); oneDNN accumulates in f32
// whatever it is.
std::shared_ptr<std::optional<dnnl::matmul>> dnnl_matmul_for(DnnlContext& ctx, const Layout& a, const Layout& b,
                                                             const Layout* bias, const Layout& out,
                                                             LinearActivation activation, DType dtype) {
  const std::string key = str_cat("matmul:", dtype_name(dtype), to_string(a.dims), to_string(a.strides),
                                  to_string(b.dims), to_string(b.strides), bias ? to_string(bias->dims) : "-",
                                  to_string(out.dims), ":", int(activation));
  const bool dense = a.strides == contiguous_strides(a.dims) && b.strides == contiguous_strides(b.dims);
  return ctx.cached<std::optional<dnnl::matmul>>(key, [&]() -> std::optional<dnnl::matmul> {
    try {
      const auto da = typed_desc(a.dims, a.strides, dtype), db = typed_desc(b.dims, b.strides, dtype);
      const auto dout = typed_desc(out.dims, dtype);
      const auto desc = bias ? dnnl::matmul::desc(da, db, typed_desc(bias->dims, dtype), dout)
                             : dnnl::matmul::desc(da, db, dout);
      dnnl::primitive_attr attr;
      if (activation != LinearActivation::none) {
        const UnaryParams p = activation_params(activation);
        dnnl::post_ops ops;
        ops.append_eltwise(1.0f, activation_algorithm(activation, p), float(p.alpha), float(p.beta));
        attr.set_post_ops(ops);
      }
      const dnnl::matmul::primitive_desc pd(desc, attr, ctx.engine());
      if (!dense && std::string_view(pd.impl_info_str()).starts_with("ref")) return std::nullopt;
      return dnnl::matmul(pd);
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  });
}

// Runs the product on oneDNN; false when it cannot take these layouts.
bool try_dnnl_matmul(Runtime& rt, const Tensor& a, const Tensor& b, const Tensor& bias, Tensor& out,
                     LinearActivation activation) {
  const int rank = out.rank();
  const DType dtype = out.dtype();
  const Layout la = padded_layout(a.shape(), a.strides(), rank);
  const Layout lb = padded_layout(b.shape(), b.strides(), rank);
  const Layout lout{out.shape(), out.strides()};
  const Layout lbias = bias_layout(out.dim(-1), rank);
  DnnlContext& ctx = rt.dnnl();
  const auto prim = dnnl_matmul_for(ctx, la, lb, bias.defined() ? &lbias : nullptr, lout, activation, dtype);
  if (!prim->has_value()) return false;
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, wrap(ctx, typed_desc(la.dims, la.strides, dtype), a.raw_data())},
      {DNNL_ARG_WEIGHTS, wrap(ctx, typed_desc(lb.dims, lb.strides, dtype), b.raw_data())},
      {DNNL_ARG_DST, wrap(ctx, typed_desc(lout.dims, dtype), out.raw_data())}};
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, wrap(ctx, typed_desc(lbias.dims, dtype), bias.raw_data()));
  ctx.execute(**prim, args, out.numel() * a.dim(-1) / DnnlContext::kMultiplyAddsPerElement);
  return true;
}

// Element offset of batch `index` (row-major over out's batch dims) in a
// dense operand whose batch dims are out's, or 1 where it broadcasts.
int64_t batch_offset(int64_t index, const Shape& out_dims, const Shape& dims, int64_t matrix_size) {
  int64_t offset = 0, stride = matrix_size;
  for (int d = out_dims.rank() - 3; d >= 0; --d) {
    const int64_t i = index % out_dims[d];
    index /= out_dims[d];
    if (dims[d] != 1) offset += i * stride;
    stride *= dims[d];
  }
  return offset;
}

// Plain loops over dense operands, one output row per work item; the k-outer
// order streams rows of b and of the output, which keeps the inner loop
// contiguous.
void reference_matmul(Runtime& rt, const Tensor& a_in, const Tensor& b_in, const Tensor& bias, Tensor& out,
                      LinearActivation activation) {
  const Tensor a = rt.contiguous(a_in.detach()), b = rt.contiguous(b_in.detach());
  const int rank = out.rank();
  const Shape a_dims = padded_layout(a.shape(), a.strides(), rank).dims;
  const Shape b_dims = padded_layout(b.shape(), b.strides(), rank).dims;
  const int64_t m_size = out.dim(-2), n_size = out.dim(-1), k_size = a.dim(-1);
  const double* pa = a.data<double>();
  const double* pb = b.data<double>();
  const Tensor dense_bias = bias.defined() ? rt.contiguous(bias.detach()) : Tensor();
  const double* pbias = dense_bias.defined() ? dense_bias.data<double>() : nullptr;
  double* po = out.data<double>();
  const int64_t rows = out.numel() / std::max<int64_t>(n_size, 1);
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n_size * k_size));
  rt.thread_pool().parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t batch = row / m_size, m = row % m_size;
      const double* arow = pa + batch_offset(batch, out.shape(), a_dims, m_size * k_size) + m * k_size;
      const double* bmat = pb + batch_offset(batch, out.shape(), b_dims, k_size * n_size);
      double* orow = po + row * n_size;
      for (int64_t n = 0; n < n_size; ++n) orow[n] = pbias ? pbias[n] : 0.0;
      for (int64_t k = 0; k < k_size; ++k) {
        const double av = arow[k];
        const double* brow = bmat + k * n_size;
        for (int64_t n = 0; n < n_size; ++n) orow[n] += av * brow[n];
      }
      activate(orow, n_size, activation);
    }
  });
}

// An empty inner dimension makes every output row act(bias) (or act(0));
// oneDNN is not asked about zero-sized memory. One row is worked out in
// double, then stored in the output's dtype.
void fill_with_bias(Runtime& rt, const Tensor& bias, Tensor& out, LinearActivation activation) {
  const int64_t n_size = out.dim(-1);
  std::vector<double> row(size_t(n_size), 0.0);
  if (bias.defined()) {
    const Tensor dense_bias = rt.contiguous(bias.detach());
    visit_dtype(bias.dtype(), [&]<class T>() {
      if constexpr (is_floating(dtype_of<T>::value))
        for (int64_t n = 0; n < n_size; ++n) row[size_t(n)] = double(load_acc(dense_bias.data<T>()[n]));
    });
  }
  activate(row.data(), n_size, activation);
  visit_dtype(out.dtype(), [&]<class T>() {
    if constexpr (is_floating(dtype_of<T>::value)) {
      T* po = out.data<T>();
      for (int64_t i = 0; i < out.numel(); ++i) po[i] = store_acc<T>(acc_t<T>(row[size_t(i % n_size)]));
    }
  });
}

}  // namespace

void batched_matmul(Runtime& rt, const OpDef& op, const Tensor& a, const Tensor& b, const Tensor& bias, Tensor& out,
                    LinearActivation activation) {
  if (out.numel() == 0) return;
  if (a.dim(-1) == 0) return fill_with_bias(rt, bias, out, activation);
  if (a.dtype() == DType::f64) return reference_matmul(rt, a, b, bias, out, activation);
  KILN_CHECK(a.dtype() == DType::f32 || a.dtype() == DType::bf16, Status::internal,
             "op '", op.name, "': unexpected dtype ", dtype_name(a.dtype()));
  check_cpu_dtype(op, a.dtype());
  if (transposed_product_takes(a, b, bias, out, activation != LinearActivation::none))
    return transposed_product_f32(rt, a, b, out);
  if (try_dnnl_matmul(rt, a, b, bias, out, activation)) return;
  const Tensor dense_a = rt.contiguous(a.detach()), dense_b = rt.contiguous(b.detach());
  if (try_dnnl_matmul(rt, dense_a, dense_b, bias, out, activation)) return;
  throw_no_dnnl_implementation(op, a.dtype(), str_cat("a ", to_string(a.shape()), " @ b ", to_string(b.shape())),
                               "no primitive for these shapes");
}

}  // namespace kiln::nn
