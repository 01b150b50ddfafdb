// cast: every element converted to another dtype. Floating results carry
// the gradient back to floating inputs, cast to the input's dtype. f32 to
// and from bf16 and f16 (what autocast casts) run vectorised.
#include "cast_vector.hpp"
#include "elementwise_common.hpp"

namespace kiln::elementwise {
namespace {

void cast_infer(InferCall& c) {
  c.outputs.push_back({c.inputs[0].shape(), c.op.attr_dtype(c.attrs, "dtype"), c.device});
}

// One kernel per input type; the output type is chosen inside.
template <class From>
void cast_kernel(const KernelCall& c) {
  const From* in = c.inputs[0].data<From>();
  Tensor& out = c.outputs[0];
  visit_dtype(out.dtype(), [&]<class To>() {
    To* po = out.data<To>();
    for_range(c.runtime, out.numel(), [&](int64_t begin, int64_t end) {
      if constexpr (requires { convert_floats(in, po, int64_t(0)); })
        convert_floats(in + begin, po + begin, end - begin);
      else
        for (int64_t i = begin; i < end; ++i) po[i] = convert_element<To>(in[i]);
    });
  });
}

std::vector<Tensor> cast_backward(const BackwardCall& c) {
  const DType input_dtype = c.input_meta[0].dtype;
  if (!is_floating(input_dtype)) return {Tensor()};
  const OpDef& cast = c.op;
  return {c.runtime.call1(cast, {c.grad_outputs[0]}, cast.make_attrs({{"dtype", input_dtype}}))};
}

}  // namespace

void register_cast_op(OpRegistry& r) {
  OpDef op;
  op.name = "cast";
  op.inputs = {{"input"}};
  op.attrs = {attr_required("dtype", AttrType::dtype)};
  op.infer = cast_infer;
  op.backward = cast_backward;
  op.saves_inputs = op.saves_outputs = false;  // the backward reads only the input's dtype
  set_cpu_kernels(op, AllTypes{}, []<class T>() -> KernelFn { return cast_kernel<T>; });
  r.add(std::move(op));
}

}  // namespace kiln::elementwise
