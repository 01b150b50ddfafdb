#include "f16_through_f32.hpp"

#include <vector>

#include "../elementwise/cast_vector.hpp"
#include "kiln/runtime.hpp"

namespace kiln::nn {

void run_f16_through_f32(const KernelCall& c, KernelFn f32_kernel) {
  Runtime& rt = c.runtime;
  const OpDef& cast = rt.op("cast");
  const Attrs to_f32 = cast.make_attrs({{"dtype", DType::f32}});
  std::vector<Tensor> inputs, outputs;
  inputs.reserve(c.inputs.size());
  for (const Tensor& t : c.inputs)
    inputs.push_back(t.defined() && t.dtype() == DType::f16 ? rt.call1(cast, {t.detach()}, to_f32) : t);
  outputs.reserve(c.outputs.size());
  for (const Tensor& t : c.outputs) outputs.push_back(rt.empty(t.shape(), DType::f32, t.device()));
  f32_kernel(KernelCall{rt, c.op, inputs, outputs, c.attrs});
  for (size_t i = 0; i < outputs.size(); ++i)
    elementwise::convert_floats(outputs[i].data<float>(), c.outputs[i].data<Half>(), outputs[i].numel());
}

}  // namespace kiln::nn
