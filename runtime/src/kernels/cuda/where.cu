// where(condition, a, b) on a GPU: the three operands broadcast together, in
// any layout; every dtype. Only bits move, so one instantiation per element
// width serves every dtype of that width.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "map.cuh"

namespace kiln {
namespace {

template <class T>
struct Select {
  __device__ T operator()(bool condition, T a, T b) const { return condition ? a : b; }
};

void where_kernel(const KernelCall& c) {
  cuda::visit_word(c.outputs[0].element_size(), [&]<class Word>() {
    cuda::Map<Word, bool, Word, Word>::run("where", c.outputs[0], Select<Word>{}, c.inputs[0], c.inputs[1],
                                           c.inputs[2]);
  });
}

}  // namespace

void register_cuda_where_kernels(OpRegistry& r) {
  for (DType t : kAllDTypes) r.set_kernel("where", DeviceType::cuda, t, where_kernel);
}

}  // namespace kiln
