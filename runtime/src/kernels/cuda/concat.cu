// concat, split and slice_grad on a GPU: each input (or output) is a block
// of a larger tensor (the joined tensor, the sliced input), copied with both
// sides' strides, so strided inputs are read in place. Only bits move: one
// instantiation per element width serves every dtype.
#include "cuda_kernels.hpp"
#include "fill.hpp"
#include "map.cuh"
#include "kiln/ops/helpers.hpp"

namespace kiln {
namespace {

// dst[map offset 1] = src[map offset 0] over a block.
template <class Word>
struct CopyBlock {
  const Word* src;
  Word* dst;
  cuda::OffsetMap<2> map;
  __device__ void operator()(int64_t i) const {
    int64_t off[2];
    map.offsets(i, off);
    dst[off[1]] = src[off[0]];
  }
};

// Copies the block `part` (in its own layout) to or from its place in
// `whole`, which starts `start` elements along `dim`.
void copy_block(const char* what, const Tensor& part, const Tensor& whole, int dim, int64_t start, bool into_whole) {
  const Shape& shape = part.shape();
  cuda::OffsetMap<2> map{};
  map.rank = shape.rank();
  for (int d = 0; d < map.rank; ++d) {
    map.sizes[d] = shape[d];
    map.strides[into_whole ? 0 : 1][d] = part.strides()[d];
    map.strides[into_whole ? 1 : 0][d] = whole.strides()[d];
  }
  const int64_t origin = start * whole.strides()[dim];
  cuda::visit_word(whole.element_size(), [&]<class Word>() {
    Word* p = part.data<Word>();
    Word* w = whole.data<Word>() + origin;
    cuda::run_for_each(what, whole, shape.numel(), into_whole ? CopyBlock<Word>{p, w, map} : CopyBlock<Word>{w, p, map});
  });
}

int along(const KernelCall& c, const Shape& shape) {
  return normalize_dim(int(c.op.attr_int(c.attrs, "dim")), shape.rank(), c.op.name.c_str());
}

void concat_kernel(const KernelCall& c) {
  const int dim = along(c, c.inputs[0].shape());
  int64_t start = 0;
  for (const Tensor& in : c.inputs) {
    copy_block("concat", in, c.outputs[0], dim, start, true);
    start += in.shape()[dim];
  }
}

void split_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  const int dim = along(c, in.shape());
  int64_t start = 0;
  for (const Tensor& out : c.outputs) {
    copy_block("split", out, in, dim, start, false);
    start += out.shape()[dim];
  }
}

// slice_grad: zeros shaped like the sliced input, with the gradient written
// into the sliced positions (a view of the output made by "slice").
void slice_grad_kernel(const KernelCall& c) {
  Tensor& out = c.outputs[0];
  cuda::fill(out, 0.0);
  const OpDef& slice = c.runtime.op("slice");
  const Attrs attrs = slice.make_attrs({{"dim", c.op.attr_int(c.attrs, "dim")},
                                        {"start", c.op.attr_int(c.attrs, "start")},
                                        {"end", c.op.attr_int(c.attrs, "end")},
                                        {"step", c.op.attr_int(c.attrs, "step")}});
  const Tensor region = c.runtime.call1(slice, {out}, attrs);
  copy_block("slice_grad", c.inputs[0], region, 0, 0, true);
}

}  // namespace

void register_cuda_concat_split_kernels(OpRegistry& r) {
  for (DType t : kAllDTypes) {
    r.set_kernel("concat", DeviceType::cuda, t, concat_kernel);
    r.set_kernel("split", DeviceType::cuda, t, split_kernel);
  }
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16})
    r.set_kernel("slice_grad", DeviceType::cuda, t, slice_grad_kernel);
}

}  // namespace kiln
