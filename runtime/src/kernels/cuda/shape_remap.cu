// flip, roll, repeat, pad, tril and triu on a GPU, and the backward ops of
// repeat and pad. Each output element is the input element its Remap picks
// (ops/shape/remap.hpp, the map the CPU kernels run) or the fill value; the
// backward ops add the gradient back with atomics: straight into f32 and
// f64 outputs, through an f32 scratch for f16 and bf16.
#include "shape_sums.cuh"
#include "../../ops/shape/families.hpp"
#include "../../ops/shape/remap.hpp"

namespace kiln::shape {
namespace {

using cuda::to_math;

template <class T>
struct RemapAt {
  const T* input;
  Remap map;
  T fill;
  __device__ T operator()(int64_t o) const {
    const int64_t s = map.source_offset(o);
    return s < 0 ? fill : input[s];
  }
};

struct RemapKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& in = c.inputs[0];
    const RemapAt<T> at{in.data<T>(), build_remap(c.op, c.attrs, in.shape()),
                        fill_as<T>(remap_fill_value(c.op, c.attrs))};
    cuda::run_index_map<T>(c.op.name.c_str(), c.outputs[0], at);
  }
};

template <class T>
struct AddBack {
  const T* grad;
  acc_t<T>* acc;
  Remap map;
  __device__ void operator()(int64_t o) const {
    const int64_t s = map.source_offset(o);
    if (s >= 0) atomicAdd(acc + s, to_math(grad[o]));
  }
};

// *_backward(grad; forward's attributes, input_shape) -> input_shape
struct RemapBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& grad = c.inputs[0];
    Tensor& out = c.outputs[0];
    const char* what = c.op.name.c_str();
    const Tensor acc = cuda::start_sums<T>(c.runtime, out, Tensor(), what);
    const AddBack<T> add{grad.data<T>(), acc.data<acc_t<T>>(), build_remap(c.op, c.attrs, out.shape())};
    cuda::run_for_each(what, out, grad.numel(), add);
    cuda::finish_sums<T>(acc, out, what);
  }
};

}  // namespace

void register_cuda_remap_kernels(OpRegistry& r) {
  for (const char* op : {"flip", "roll", "repeat", "pad", "tril", "triu"})
    cuda::set_kernels<RemapKernels>(r, op, cuda::AllTypes{});
  for (const char* op : {"repeat_backward", "pad_backward"})
    cuda::set_kernels<RemapBackwardKernels>(r, op, cuda::FloatTypes{});
}

}  // namespace kiln::shape
