// logical_and, logical_or (two tensors of one dtype, broadcast together) and
// logical_not, giving bool tensors: any non-zero value is true, NaN
// included (torch.logical_and and friends). No gradient.
#include "binary_functions.hpp"
#include "binary_map.hpp"

namespace kiln::elementwise {
namespace {

template <class T>
void logical_not_kernel(const KernelCall& c) {
  const T* in = c.inputs[0].data<T>();
  bool* out = c.outputs[0].data<bool>();
  for_range(c.runtime, c.outputs[0].numel(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = LogicalNotFn{}(load_math(in[i]));
  });
}

OpDef logical_not_op() {
  OpDef op;
  op.name = "logical_not";
  op.inputs = {{"input"}};
  op.infer = [](InferCall& c) { c.outputs.push_back({c.inputs[0].shape(), DType::boolean, c.device}); };
  set_cpu_kernels(op, AllTypes{}, []<class T>() -> KernelFn { return logical_not_kernel<T>; });
  return op;
}

}  // namespace

void register_logical_ops(OpRegistry& r) {
  r.add(bool_binary_op<LogicalAndFn>("logical_and"));
  r.add(bool_binary_op<LogicalOrFn>("logical_or"));
  r.add(logical_not_op());
}

}  // namespace kiln::elementwise
