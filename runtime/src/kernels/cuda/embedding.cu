// embedding and gather on a GPU, and their backward ops, which scatter-add
// the gradient back with atomics: straight into f32 and f64 outputs, through
// an f32 scratch for f16 and bf16. Indices are checked against their range;
// an element with a bad index is skipped (written as zero) and the op then
// throws the CPU kernel's error.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "fill.hpp"
#include "index_check.cuh"
#include "map.cuh"
#include "kiln/ops/helpers.hpp"
#include "../../ops/reduction/common.hpp"

namespace kiln {
namespace {

using cuda::BadIndexSlot;
using cuda::IndexCheck;
using cuda::to_math;

void throw_if_out_of_range(const IndexCheck& check, const OpDef& op, int64_t size, const char* what) {
  const auto bad = check.first_bad();
  KILN_CHECK(!bad, Status::invalid_argument, "op '", op.name, "': index ", bad->index, " is out of range for ", what,
             " of size ", size, " (expected 0 <= index < ", size, ")");
}

// ---- embedding(indices [...], weight [V, D]) -> [..., D] ------------------------

// Element e of the output is element e % D of the row indices[e / D].
template <class Word, class I>
struct EmbeddingAt {
  const I* indices;
  const Word* weight;
  int64_t rows, dim;
  BadIndexSlot bad;
  __device__ Word operator()(int64_t e) const {
    const int64_t i = e / dim, row = int64_t(indices[i]);
    if (row < 0 || row >= rows) {
      bad.report(i);
      return Word(0);
    }
    return weight[row * dim + e % dim];
  }
};

// A row copy moves bits: one instantiation per element width.
void embedding_kernel(const KernelCall& c) {
  const Tensor& indices = c.inputs[0];
  const Tensor& weight = c.inputs[1];
  const IndexCheck check(c.runtime, indices);
  reduction::visit_index_dtype(indices.dtype(), [&]<class I>() {
    cuda::visit_word(weight.element_size(), [&]<class Word>() {
      const EmbeddingAt<Word, I> at{indices.data<I>(), weight.data<Word>(), weight.dim(0), weight.dim(1), check.slot()};
      cuda::run_index_map<Word>("embedding", c.outputs[0], at);
    });
  });
  throw_if_out_of_range(check, c.op, weight.dim(0), "a weight table");
}

// Adds the gradient into an f32 scratch for 16-bit types, into the output
// itself otherwise; the caller converts the scratch.
template <class T>
Tensor accumulator(Runtime& rt, Tensor& out) {
  Tensor acc = cuda::is_16bit_float_v<T> ? rt.empty(out.shape(), DType::f32, out.device()) : out;
  cuda::fill(acc, 0.0);
  return acc;
}

template <class T>
struct ToElement {
  __device__ T operator()(float v) const { return cuda::from_math<T>(v); }
};

template <class T>
void finish_accumulator(const Tensor& acc, Tensor& out, const char* what) {
  if constexpr (cuda::is_16bit_float_v<T>) cuda::Map<T, float>::run_dense(what, out, ToElement<T>{}, acc);
}

// acc[indices[e / D], e % D] += grad[e].
template <class T, class I>
struct ScatterRows {
  const T* grad;
  const I* indices;
  acc_t<T>* acc;
  int64_t rows, dim;
  BadIndexSlot bad;
  __device__ void operator()(int64_t e) const {
    const int64_t i = e / dim, row = int64_t(indices[i]);
    if (row < 0 || row >= rows) return bad.report(i);
    atomicAdd(acc + row * dim + e % dim, to_math(grad[e]));
  }
};

struct EmbeddingBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& grad = c.inputs[0];
    const Tensor& indices = c.inputs[1];
    Tensor& out = c.outputs[0];
    const Tensor acc = accumulator<T>(c.runtime, out);
    const IndexCheck check(c.runtime, indices);
    reduction::visit_index_dtype(indices.dtype(), [&]<class I>() {
      const ScatterRows<T, I> scatter{grad.data<T>(), indices.data<I>(), acc.data<acc_t<T>>(), out.dim(0), out.dim(1),
                                      check.slot()};
      cuda::run_for_each("embedding_backward", out, grad.numel(), scatter);
    });
    throw_if_out_of_range(check, c.op, out.dim(0), "a weight table");
    finish_accumulator<T>(acc, out, "embedding_backward");
  }
};

// ---- gather(input, index; dim) ---------------------------------------------------

// The walk over the index tensor (in any layout): operand 0 is the input
// position without the gathered coordinate, operand 1 the index element,
// whose offset is what a bad index reports.
cuda::OffsetMap<2> gather_walk(const Shape& index_shape, const Shape& index_strides, Shape input_strides, int dim) {
  input_strides[dim] = 0;  // the index supplies this coordinate
  cuda::OffsetMap<2> m{};
  m.rank = index_shape.rank();
  for (int d = 0; d < m.rank; ++d) {
    m.sizes[d] = index_shape[d];
    m.strides[0][d] = input_strides[d];
    m.strides[1][d] = index_strides[d];
  }
  return m;
}

int gather_dim(const KernelCall& c, int rank) {
  return normalize_dim(int(c.op.attr_int(c.attrs, "dim")), rank, c.op.name.c_str());
}

template <class T, class I>
struct GatherAt {
  const T* input;
  const I* index;
  cuda::OffsetMap<2> walk;
  int64_t size, stride;  // of the gathered dimension
  BadIndexSlot bad;
  __device__ T operator()(int64_t i) const {
    int64_t off[2];
    walk.offsets(i, off);
    const int64_t k = int64_t(index[off[1]]);
    if (k < 0 || k >= size) {
      bad.report(off[1]);
      return cuda::from_math<T>(acc_t<T>(0));
    }
    return input[off[0] + k * stride];
  }
};

struct GatherKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    const Tensor& index = c.inputs[1];
    const int dim = gather_dim(c, in.rank());
    const IndexCheck check(c.runtime, index);
    reduction::visit_index_dtype(index.dtype(), [&]<class I>() {
      const GatherAt<T, I> at{in.data<T>(), index.data<I>(), gather_walk(index.shape(), index.strides(), in.strides(), dim),
                              in.dim(dim), in.strides()[dim], check.slot()};
      cuda::run_index_map<T>("gather", c.outputs[0], at);
    });
    throw_if_out_of_range(check, c.op, in.dim(dim), "the gathered dimension");
  }
};

template <class T, class I>
struct ScatterGathered {
  const T* grad;
  const I* index;
  acc_t<T>* acc;
  cuda::OffsetMap<2> walk;
  int64_t size, stride;
  BadIndexSlot bad;
  __device__ void operator()(int64_t i) const {
    int64_t off[2];
    walk.offsets(i, off);
    const int64_t k = int64_t(index[off[1]]);
    if (k < 0 || k >= size) return bad.report(off[1]);
    atomicAdd(acc + off[0] + k * stride, to_math(grad[i]));
  }
};

// gather_backward(grad, index; input_shape, dim): zeros, with the gradient
// added at the gathered positions.
struct GatherBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& grad = c.inputs[0];
    const Tensor& index = c.inputs[1];
    Tensor& out = c.outputs[0];
    const int dim = gather_dim(c, out.rank());
    const Shape out_strides = contiguous_strides(out.shape());
    const Tensor acc = accumulator<T>(c.runtime, out);
    const IndexCheck check(c.runtime, index);
    reduction::visit_index_dtype(index.dtype(), [&]<class I>() {
      const ScatterGathered<T, I> scatter{grad.data<T>(), index.data<I>(), acc.data<acc_t<T>>(),
                                          gather_walk(index.shape(), index.strides(), out_strides, dim), out.dim(dim),
                                          out_strides[dim], check.slot()};
      cuda::run_for_each("gather_backward", out, index.numel(), scatter);
    });
    throw_if_out_of_range(check, c.op, out.dim(dim), "the gathered dimension");
    finish_accumulator<T>(acc, out, "gather_backward");
  }
};

}  // namespace

void register_cuda_index_kernels(OpRegistry& r) {
  r.set_kernel("embedding", DeviceType::cuda, DType::f32, embedding_kernel);
  r.set_kernel("embedding", DeviceType::cuda, DType::f64, embedding_kernel);
  r.set_kernel("embedding", DeviceType::cuda, DType::f16, embedding_kernel);
  r.set_kernel("embedding", DeviceType::cuda, DType::bf16, embedding_kernel);
  cuda::set_kernels<EmbeddingBackwardKernels>(r, "embedding_backward", cuda::FloatTypes{});
  cuda::set_kernels<GatherKernels>(r, "gather", cuda::FloatTypes{});
  cuda::set_kernels<GatherBackwardKernels>(r, "gather_backward", cuda::FloatTypes{});
}

}  // namespace kiln
