// Ops that read a tensor at positions given by an index tensor: embedding
// (rows of a weight table) and gather (torch.gather along one dimension),
// with backward ops that scatter-add the gradient back.
#include <cstring>

#include "common.hpp"
#include "families.hpp"
#include "kiln/kernels/cpu/strided.hpp"

namespace kiln::reduction {
namespace {

void check_index_range(const OpDef& op, int64_t index, int64_t size, const char* what) {
  KILN_CHECK(index >= 0 && index < size, Status::invalid_argument, "op '", op.name, "': index ", index,
             " is out of range for ", what, " of size ", size, " (expected 0 <= index < ", size, ")");
}

// ---- embedding(indices [...], weight [V, D]) -> [..., D] ---------------------

void embedding_infer(InferCall& c) {
  check_index_dtype(c, 0);
  check_floating(c, 1);
  check_rank(c, 1, 2, "a [num_embeddings, dim] table");
  Shape out = c.inputs[0].shape();
  KILN_CHECK(out.rank() < kMaxDims, Status::invalid_argument, "op '", c.op.name, "': indices of rank ", out.rank(),
             " leave no room for the embedding dimension (at most ", kMaxDims, " dims)");
  out.push_back(c.inputs[1].dim(1));
  c.outputs.push_back({out, c.inputs[1].dtype(), c.device});
}

// A row copy moves bits, so one kernel serves every floating dtype.
void embedding_kernel(const KernelCall& c) {
  const Tensor& indices = c.inputs[0];
  const Tensor& weight = c.inputs[1];
  const int64_t rows = weight.dim(0);
  const size_t row_bytes = size_t(weight.dim(1)) * weight.element_size();
  const char* src = static_cast<const char*>(weight.raw_data());
  char* dst = static_cast<char*>(c.outputs[0].raw_data());
  visit_index_dtype(indices.dtype(), [&]<class I>() {
    const I* idx = indices.data<I>();
    c.runtime.thread_pool().parallel_for(indices.numel(), 64, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t row = int64_t(idx[i]);
        check_index_range(c.op, row, rows, "a weight table");
        std::memcpy(dst + size_t(i) * row_bytes, src + size_t(row) * row_bytes, row_bytes);
      }
    });
  });
}

// embedding_backward(grad [..., D], indices [...]) -> [num_weights, D]
void embedding_backward_infer(InferCall& c) {
  const int64_t v = c.op.attr_int(c.attrs, "num_weights");
  const Shape& g = c.inputs[0].shape();
  c.outputs.push_back({Shape{v, g[g.rank() - 1]}, c.inputs[0].dtype(), c.device});
}

// Serial: several indices may name the same row.
template <class T>
void embedding_backward_kernel(const KernelCall& c) {
  const Tensor& indices = c.inputs[1];
  Tensor& out = c.outputs[0];
  const int64_t rows = out.dim(0), dim = out.dim(1);
  std::vector<acc_t<T>> acc(size_t(out.numel()), acc_t<T>(0));
  const T* g = c.inputs[0].data<T>();
  visit_index_dtype(indices.dtype(), [&]<class I>() {
    const I* idx = indices.data<I>();
    for (int64_t i = 0; i < indices.numel(); ++i) {
      const int64_t row = int64_t(idx[i]);
      check_index_range(c.op, row, rows, "a weight table");
      for (int64_t k = 0; k < dim; ++k) acc[size_t(row * dim + k)] += load_acc(g[i * dim + k]);
    }
  });
  T* dst = out.data<T>();
  for (size_t i = 0; i < acc.size(); ++i) dst[i] = store_acc<T>(acc[i]);
}

std::vector<Tensor> embedding_backward(const BackwardCall& c) {
  return {Tensor(), call_op1(c.runtime, "embedding_backward", {c.grad_outputs[0], c.inputs[0]},
                             {{"num_weights", c.inputs[1].dim(0)}})};
}

// ---- gather(input, index; dim): out[i..] = input[.. index[i..] at dim ..] ------

void gather_infer(InferCall& c) {
  check_floating(c, 0);
  check_index_dtype(c, 1);
  const Shape& in = c.inputs[0].shape();
  const Shape& index = c.inputs[1].shape();
  const int dim = normalize_dim(int(c.op.attr_int(c.attrs, "dim")), in.rank(), c.op.name.c_str());
  KILN_CHECK(index.rank() == in.rank(), Status::shape_mismatch, "op '", c.op.name, "': index ", to_string(index),
             " must have the rank of input ", to_string(in));
  for (int d = 0; d < in.rank(); ++d)
    KILN_CHECK(d == dim || index[d] <= in[d], Status::shape_mismatch, "op '", c.op.name, "': index ",
               to_string(index), " is larger than input ", to_string(in), " in dimension ", d,
               " (only dimension ", dim, " may differ)");
  c.outputs.push_back({index, c.inputs[0].dtype(), c.device});
}

// Calls fn(i, input_offset) for every element i of the index tensor, where
// input_offset is the input element it selects.
template <class Fn>
void for_each_gathered(const KernelCall& c, const Shape& in_shape, const Shape& in_strides, int64_t begin,
                       int64_t end, Fn&& fn) {
  const Tensor& index = c.inputs[1];
  const int dim = normalize_dim(int(c.op.attr_int(c.attrs, "dim")), in_shape.rank(), c.op.name.c_str());
  Shape base_strides = in_strides;
  base_strides[dim] = 0;  // the index supplies this coordinate
  visit_index_dtype(index.dtype(), [&]<class I>() {
    const I* idx = index.data<I>();
    cpu::for_each_offset2(index.shape(), base_strides, index.strides(), begin, end,
                          [&](int64_t i, int64_t base, int64_t index_off) {
                            const int64_t k = int64_t(idx[index_off]);
                            check_index_range(c.op, k, in_shape[dim], "the gathered dimension");
                            fn(i, base + k * in_strides[dim]);
                          });
  });
}

template <class T>
void gather_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  const T* src = in.data<T>();
  T* dst = c.outputs[0].data<T>();
  c.runtime.thread_pool().parallel_for(c.inputs[1].numel(), cpu::kElementGrain, [&](int64_t b, int64_t e) {
    for_each_gathered(c, in.shape(), in.strides(), b, e, [&](int64_t i, int64_t off) { dst[i] = src[off]; });
  });
}

// gather_backward(grad, index; input_shape, dim): zeros, with the gradient
// added at the gathered positions. Serial: an index may repeat.
void gather_backward_infer(InferCall& c) {
  c.outputs.push_back({shape_from_attr(c.op, c.op.attr_ints(c.attrs, "input_shape"), "input_shape"),
                       c.inputs[0].dtype(), c.device});
}

template <class T>
void gather_backward_kernel(const KernelCall& c) {
  Tensor& out = c.outputs[0];
  std::vector<acc_t<T>> acc(size_t(out.numel()), acc_t<T>(0));
  const T* g = c.inputs[0].data<T>();
  for_each_gathered(c, out.shape(), contiguous_strides(out.shape()), 0, c.inputs[1].numel(),
                    [&](int64_t i, int64_t off) { acc[size_t(off)] += load_acc(g[i]); });
  T* dst = out.data<T>();
  for (size_t i = 0; i < acc.size(); ++i) dst[i] = store_acc<T>(acc[i]);
}

std::vector<Tensor> gather_backward(const BackwardCall& c) {
  return {call_op1(c.runtime, "gather_backward", {c.grad_outputs[0], c.inputs[1]},
                   {{"input_shape", dims_of(c.inputs[0].shape())}, {"dim", c.op.attr_int(c.attrs, "dim")}}),
          Tensor()};
}

}  // namespace

void register_index_ops(OpRegistry& r) {
  {
    OpDef op;
    op.name = "embedding";
    op.inputs = {{"indices"}, {"weight"}};
    op.infer = embedding_infer;
    op.backward = embedding_backward;
    op.dtype_input = 1;
    op.saves_outputs = false;
    op.set_kernel(DeviceType::cpu, {DType::f32, DType::f64, DType::f16, DType::bf16}, embedding_kernel);
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "embedding_backward";
    op.inputs = {{"grad"}, {"indices"}};
    op.attrs = {attr_required("num_weights", AttrType::integer)};
    op.infer = embedding_backward_infer;
    set_float_kernels(op, []<class T>() { return &embedding_backward_kernel<T>; });
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "gather";
    op.inputs = {{"input"}, {"index"}};
    op.attrs = {attr_int("dim", 0)};
    op.infer = gather_infer;
    op.backward = gather_backward;
    op.accepts_strided = true;
    op.saves_outputs = false;
    set_float_kernels(op, []<class T>() { return &gather_kernel<T>; });
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "gather_backward";
    op.inputs = {{"grad"}, {"index"}};
    op.attrs = {attr_required("input_shape", AttrType::ints), attr_int("dim", 0)};
    op.infer = gather_backward_infer;
    set_float_kernels(op, []<class T>() { return &gather_backward_kernel<T>; });
    r.add(std::move(op));
  }
}

}  // namespace kiln::reduction
