// any and all over a set of dimensions (all when none are given): whether
// some or every element is non-zero (NaN counts as non-zero), as a bool
// tensor, for an input of any dtype. Over zero elements any is false and
// all is true, as in PyTorch.
#include "common.hpp"
#include "families.hpp"
#include "ordering.hpp"
#include "reduce_geometry.hpp"

namespace kiln::reduction {
namespace {

void logical_infer(InferCall& c) {
  const ReduceGeometry g = reduce_geometry(c.op, c.inputs[0].shape(), c.inputs[0].strides(), c.attrs);
  c.outputs.push_back({g.output_shape, DType::boolean, c.device});
}

// any stops at the first non-zero element, all at the first zero one: each
// looks for an element whose truth differs from the empty answer.
template <bool All, class T>
void logical_kernel(const KernelCall& c) {
  const ReduceGeometry g = reduce_geometry(c.op, c.inputs[0].shape(), c.inputs[0].strides(), c.attrs);
  const T* x = c.inputs[0].data<T>();
  bool* out = c.outputs[0].data<bool>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    bool found = false;
    for_each_reduced(g, base, [&](int64_t i) { found = found || ((order_key(x[i]) != 0) != All); });
    out[o] = found != All;
  });
}

template <bool All>
void add_logical_op(OpRegistry& r, std::string name) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"input"}};
  op.attrs = {attr_ints("dims", {}), attr_bool("keepdim", false)};
  op.infer = logical_infer;
  op.accepts_strided = true;
  for (DType t : kAllDTypes)
    visit_dtype(t, [&]<class T>() { op.set_kernel(DeviceType::cpu, t, &logical_kernel<All, T>); });
  r.add(std::move(op));
}

}  // namespace

void register_logical_reduce_ops(OpRegistry& r) {
  add_logical_op<false>(r, "any");
  add_logical_op<true>(r, "all");
}

}  // namespace kiln::reduction
