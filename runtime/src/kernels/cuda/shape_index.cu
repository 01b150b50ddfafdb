// index_select, index_add, scatter and scatter_add on a GPU. Indices are
// checked against their range: an element with a bad index is skipped and
// the op then throws the CPU kernel's error. The adds use atomics
// (shape_sums.cuh); scatter's writes with repeated indices keep one of
// them, as on the CPU and in PyTorch, though not necessarily the same one.
#include "index_check.cuh"
#include "shape_sums.cuh"
#include "../../ops/reduction/common.hpp"
#include "../../ops/shape/families.hpp"
#include "../../ops/shape/index_geometry.hpp"

namespace kiln::shape {
namespace {

using cuda::BadIndexSlot;
using cuda::IndexCheck;
using reduction::visit_index_dtype;

int op_dim(const KernelCall& c, int rank) {
  return normalize_dim(int(c.op.attr_int(c.attrs, "dim")), rank, c.op.name.c_str());
}

void throw_if_out_of_range(const IndexCheck& check, const KernelCall& c, int dim, int64_t size) {
  if (const auto bad = check.first_bad()) throw_index_out_of_range(c.op, bad->index, dim, size);
}

// ---- index_select / index_add ---------------------------------------------------------

template <class T, class I>
struct SelectAt {
  const T* input;
  const I* index;
  AlongDim g;
  BadIndexSlot bad;
  __device__ T operator()(int64_t e) const {
    const int64_t j = g.position(e), k = int64_t(index[j]);
    if (k < 0 || k >= g.size) {
      bad.report(j);
      return T{};
    }
    return input[g.input_offset(e, k)];
  }
};

struct IndexSelectKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    const Tensor& index = c.inputs[1];
    const AlongDim g = along_dim(c.op, c.attrs, in.shape(), index.numel());
    const IndexCheck check(c.runtime, index);
    visit_index_dtype(index.dtype(), [&]<class I>() {
      const SelectAt<T, I> at{in.data<T>(), index.data<I>(), g, check.slot()};
      cuda::run_index_map<T>("index_select", c.outputs[0], at);
    });
    throw_if_out_of_range(check, c, op_dim(c, in.rank()), g.size);
  }
};

template <class T, class I>
struct AddSlices {
  const T* source;
  const I* index;
  acc_t<T>* acc;
  acc_t<T> alpha;
  AlongDim g;
  BadIndexSlot bad;
  __device__ void operator()(int64_t e) const {
    const int64_t j = g.position(e), k = int64_t(index[j]);
    if (k < 0 || k >= g.size) return bad.report(j);
    atomicAdd(acc + g.input_offset(e, k), alpha * cuda::to_math(source[e]));
  }
};

struct IndexAddKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    const Tensor& index = c.inputs[1];
    const Tensor& source = c.inputs[2];
    Tensor& out = c.outputs[0];
    const AlongDim g = along_dim(c.op, c.attrs, in.shape(), index.numel());
    const Tensor acc = cuda::start_sums<T>(c.runtime, out, in, "index_add");
    const IndexCheck check(c.runtime, index);
    visit_index_dtype(index.dtype(), [&]<class I>() {
      const AddSlices<T, I> add{source.data<T>(), index.data<I>(), acc.data<acc_t<T>>(),
                                acc_t<T>(c.op.attr_real(c.attrs, "alpha")), g, check.slot()};
      cuda::run_for_each("index_add", out, source.numel(), add);
    });
    throw_if_out_of_range(check, c, op_dim(c, in.rank()), g.size);
    cuda::finish_sums<T>(acc, out, "index_add");
  }
};

// ---- scatter / scatter_add ----------------------------------------------------------------

// The walk over the (dense) index: operand 0 is the src element, operand 1
// the output position without the scattered coordinate.
cuda::OffsetMap<2> scatter_walk(const Shape& index, const Shape& src, const Shape& out, int dim) {
  const Shape src_strides = contiguous_strides(src);
  Shape out_strides = contiguous_strides(out);
  out_strides[dim] = 0;  // the index supplies this coordinate
  cuda::OffsetMap<2> m{};
  m.rank = index.rank();
  for (int d = 0; d < m.rank; ++d) {
    m.sizes[d] = index[d];
    m.strides[0][d] = src_strides[d];
    m.strides[1][d] = out_strides[d];
  }
  return m;
}

// Store(dst + offset, value) for every element of index.
template <class T, class I, class Dst, class Store>
struct ScatterTo {
  const T* src;
  const I* index;
  Dst* dst;
  cuda::OffsetMap<2> walk;
  int64_t size, stride;  // of the scattered dimension
  BadIndexSlot bad;
  __device__ void operator()(int64_t i) const {
    int64_t off[2];
    walk.offsets(i, off);
    const int64_t k = int64_t(index[i]);
    if (k < 0 || k >= size) return bad.report(i);
    Store{}(dst + off[1] + k * stride, src[off[0]]);
  }
};

struct Assign {
  template <class T> __device__ void operator()(T* dst, T v) const { *dst = v; }
};

struct AtomicAdd {
  template <class A, class T> __device__ void operator()(A* dst, T v) const { atomicAdd(dst, cuda::to_math(v)); }
};

template <class T, class Dst, class Store>
void run_scatter(const KernelCall& c, Dst* dst, const char* what) {
  const Tensor& index = c.inputs[1];
  const Tensor& out = c.outputs[0];
  const int dim = op_dim(c, out.rank());
  const int64_t stride = contiguous_strides(out.shape())[dim];
  const IndexCheck check(c.runtime, index);
  visit_index_dtype(index.dtype(), [&]<class I>() {
    const ScatterTo<T, I, Dst, Store> scatter{c.inputs[2].data<T>(), index.data<I>(), dst,
                                              scatter_walk(index.shape(), c.inputs[2].shape(), out.shape(), dim),
                                              out.dim(dim), stride, check.slot()};
    cuda::run_for_each(what, out, index.numel(), scatter);
  });
  throw_if_out_of_range(check, c, dim, out.dim(dim));
}

struct ScatterKernels {
  template <class T> static void kernel(const KernelCall& c) {
    Tensor& out = c.outputs[0];
    cuda::Map<T, T>::run_dense("scatter", out, cuda::Identity<T>{}, c.inputs[0]);
    run_scatter<T, T, Assign>(c, out.data<T>(), "scatter");
  }
};

struct ScatterAddKernels {
  template <class T> static void kernel(const KernelCall& c) {
    Tensor& out = c.outputs[0];
    const Tensor acc = cuda::start_sums<T>(c.runtime, out, c.inputs[0], "scatter_add");
    run_scatter<T, acc_t<T>, AtomicAdd>(c, acc.data<acc_t<T>>(), "scatter_add");
    cuda::finish_sums<T>(acc, out, "scatter_add");
  }
};

}  // namespace

void register_cuda_select_scatter_kernels(OpRegistry& r) {
  cuda::set_kernels<IndexSelectKernels>(r, "index_select", cuda::AllTypes{});
  cuda::set_kernels<IndexAddKernels>(r, "index_add", cuda::FloatTypes{});
  cuda::set_kernels<ScatterKernels>(r, "scatter", cuda::AllTypes{});
  cuda::set_kernels<ScatterAddKernels>(r, "scatter_add", cuda::FloatTypes{});
}

}  // namespace kiln::shape
