// matmul and linear on a GPU through cuBLASLt. Operands may be strided views
// (matmul's backward passes transposes): a matrix stored by rows or by
// columns goes to cuBLASLt as it is, anything else is copied dense first.
// Batch dimensions are broadcast with stride 0 and merged where the strides
// of all three tensors allow, so most products are one batched call.
// linear's bias and activation ride in cuBLASLt's epilogue (one pass over
// the output); where it has none for the case, the activation runs after,
// through the unary op's own kernel.
#include <optional>
#include <vector>

#include "cublas_matmul.hpp"
#include "cuda_kernels.hpp"
#include "kiln/error.hpp"
#include "kiln/ops/registry.hpp"
#include "matmul_bias_rows.hpp"

namespace kiln {
namespace {

// A [rows, cols] matrix as cuBLAS sees memory: by rows (element (i, j) at
// i * ld + j) or by columns (at i + j * ld).
struct MatrixStorage {
  bool by_rows;
  int64_t ld;
};

std::optional<MatrixStorage> storage_of(const Tensor& t) {
  const int r = t.rank();
  const int64_t rows = t.dim(r - 2), cols = t.dim(r - 1);
  const int64_t row_stride = t.strides()[r - 2], col_stride = t.strides()[r - 1];
  // A single row or column leaves the other stride free; any ld is valid then.
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= cols))
    return MatrixStorage{true, rows == 1 ? cols : row_stride};
  if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows))
    return MatrixStorage{false, cols == 1 ? rows : col_stride};
  return std::nullopt;
}

// The operand's stride along each batch dimension of the output, 0 where it
// is broadcast (absent, or of size 1).
std::vector<int64_t> batch_strides(const Tensor& t, const Shape& out) {
  const int out_batch = out.rank() - 2, own_batch = t.rank() - 2;
  std::vector<int64_t> strides(size_t(out_batch), 0);
  for (int d = 0; d < own_batch; ++d)
    if (t.dim(d) != 1) strides[size_t(out_batch - own_batch + d)] = t.strides()[d];
  return strides;
}

// The batch as nested loops over (a, b, out) strides: dims of size 1 are
// dropped and neighbours merged where every tensor steps through them as
// one. The innermost dim becomes cuBLASLt's batch, the others are looped.
struct BatchDim {
  int64_t size;
  int64_t a, b, out;
};

std::vector<BatchDim> merged_batch(const Shape& out_shape, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                   int64_t matrix_elements) {
  int64_t out_stride = matrix_elements;
  std::vector<BatchDim> reversed;  // innermost first
  for (int d = out_shape.rank() - 3; d >= 0; --d) {
    const BatchDim dim{out_shape[d], a[size_t(d)], b[size_t(d)], out_stride};
    out_stride *= out_shape[d];
    if (dim.size == 1) continue;
    if (!reversed.empty()) {
      BatchDim& inner = reversed.back();
      if (dim.a == inner.a * inner.size && dim.b == inner.b * inner.size && dim.out == inner.out * inner.size) {
        inner.size *= dim.size;
        continue;
      }
    }
    reversed.push_back(dim);
  }
  std::vector<BatchDim> dims(reversed.rbegin(), reversed.rend());
  if (dims.empty()) dims.push_back({1, 0, 0, matrix_elements});
  return dims;
}

// cuBLAS works by columns: out [M, N] by rows is out^T [N, M] by columns, so
// the product is computed as out^T = b^T @ a^T, and a matrix stored by rows
// is its own transpose stored by columns.
cuda::GemmOperand gemm_operand(const Tensor& t, const MatrixStorage& s, int64_t offset, int64_t batch_stride) {
  return {static_cast<const char*>(t.raw_data()) + size_t(offset) * t.element_size(), !s.by_rows, s.ld, batch_stride};
}

// out [batch..., M, N] (dense) = act(a [..., M, K] @ b [..., K, N] (+ bias [N])).
// Returns whether the activation was applied: the epilogue applies it when
// the product is one cuBLASLt call (linear's always is) and has a kernel for
// it; otherwise the caller does.
bool batched_matmul(Runtime& rt, Tensor a, Tensor b, const Tensor& bias, Tensor& out,
                    nn::LinearActivation activation) {
  const int device = out.device().index;
  const int r = out.rank();
  const int64_t m = out.dim(r - 2), n = out.dim(r - 1), k = a.dim(a.rank() - 1);
  if (out.numel() == 0) return true;
  const void* bias_data = bias.defined() ? bias.raw_data() : nullptr;
  if (k == 0) {
    cuda::fill_rows_with_bias(device, out.raw_data(), bias_data, out.element_size(), out.numel() / n, n);
    return activation == nn::LinearActivation::none;
  }
  std::optional<MatrixStorage> a_storage = storage_of(a), b_storage = storage_of(b);
  if (!a_storage) a_storage = storage_of(a = rt.contiguous(a));
  if (!b_storage) b_storage = storage_of(b = rt.contiguous(b));
  const std::vector<BatchDim> dims = merged_batch(out.shape(), batch_strides(a, out.shape()),
                                                  batch_strides(b, out.shape()), m * n);
  const BatchDim& inner = dims.back();
  cuda::Gemm g;
  g.dtype = out.dtype();
  g.m = n;
  g.n = m;
  g.k = k;
  g.batch = inner.size;
  g.bias = bias_data;
  g.activation = dims.size() == 1 ? activation : nn::LinearActivation::none;
  bool applied = true;
  const size_t element = out.element_size();
  // Every combination of the outer (looped) batch indices.
  std::vector<int64_t> index(dims.size() - 1, 0);
  for (;;) {
    int64_t a_offset = 0, b_offset = 0, out_offset = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      a_offset += index[d] * dims[d].a;
      b_offset += index[d] * dims[d].b;
      out_offset += index[d] * dims[d].out;
    }
    g.a = gemm_operand(b, *b_storage, b_offset, inner.b);
    g.b = gemm_operand(a, *a_storage, a_offset, inner.a);
    g.d = static_cast<char*>(out.raw_data()) + size_t(out_offset) * element;
    applied = cuda::cublaslt_gemm(rt, device, g) && applied;
    size_t d = index.size();
    while (d > 0 && ++index[d - 1] == dims[d - 1].size) index[--d] = 0;
    if (d == 0) return applied && g.activation == activation;
  }
}

void matmul_cuda(const KernelCall& c) {
  batched_matmul(c.runtime, c.inputs[0], c.inputs[1], Tensor(), c.outputs[0], nn::LinearActivation::none);
}

// The activation the epilogue could not apply, by the unary op's kernel run
// in place: element-wise, each element is read before it is written.
void activate_in_place(Runtime& rt, nn::LinearActivation activation, Tensor& out) {
  const nn::ActivationCall call = nn::activation_call(rt, activation, false);
  const KernelFn kernel = call.op.kernel(DeviceType::cuda, out.dtype());
  KILN_CHECK(kernel != nullptr, Status::unsupported, "op '", call.op.name, "' has no kernel for ",
             dtype_name(out.dtype()), " on cuda");
  kernel(KernelCall{rt, call.op, std::span<const Tensor>(&out, 1), std::span<Tensor>(&out, 1), call.attrs});
}

// Inputs arrive dense: input [rows, in] @ weight^T [in, out], the weight
// read by columns.
void linear_cuda(const KernelCall& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& w = c.inputs[1];
  const Tensor bias = c.inputs.size() > 2 ? c.inputs[2] : Tensor();
  const int64_t in = w.dim(1), out = w.dim(0);
  if (c.outputs[0].numel() == 0) return;
  const int64_t rows = c.outputs[0].numel() / out;
  Tensor out2 = c.outputs[0].view_as({rows, out}, {out, 1}, c.outputs[0].offset());
  const nn::LinearActivation activation = nn::linear_activation(c.op, c.attrs);
  if (!batched_matmul(c.runtime, x.view_as({rows, in}, {in, 1}, x.offset()),
                      w.view_as({in, out}, {1, in}, w.offset()), bias, out2, activation))
    activate_in_place(c.runtime, activation, out2);
}

}  // namespace

void register_cuda_matmul_kernels(OpRegistry& r) {
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    r.set_kernel("matmul", DeviceType::cuda, t, matmul_cuda);
    r.set_kernel("linear", DeviceType::cuda, t, linear_cuda);
  }
}

}  // namespace kiln
