// The ops the runtime itself relies on: dense copies, constant fills and the
// reduction of broadcast gradients. Views live in view_ops.cpp.
#include <cstring>

#include "kiln/autograd/grad_mode.hpp"
#include "kiln/kernels/builtin_ops.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/ops/helpers.hpp"

namespace kiln {
namespace {

// ---- copy: any layout in, contiguous out -------------------------------

void copy_infer(InferCall& c) { c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device}); }

void copy_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  Tensor& out = c.outputs[0];
  if (in.is_contiguous()) {
    std::memcpy(out.raw_data(), in.raw_data(), in.nbytes());
    return;
  }
  // A copy moves bits: the element width is all that matters.
  cpu::copy_strided(c.runtime.thread_pool(), in.element_size(), in.shape(), in.raw_data(), in.strides(),
                    out.raw_data(), out.strides());
}

std::vector<Tensor> identity_backward(const BackwardCall& c) { return {c.grad_outputs[0]}; }

// ---- full: a constant tensor -------------------------------------------

void full_infer(InferCall& c) {
  const Shape shape = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "shape"), "shape");
  c.outputs.push_back({shape, c.op.attr_dtype(c.attrs, "dtype"), c.device});
}

void full_kernel(const KernelCall& c) {
  Tensor& out = c.outputs[0];
  const double value = c.op.attr_real(c.attrs, "value");
  visit_dtype(out.dtype(), [&]<class T>() {
    T v;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) v = from_float<T>(float(value));
    else v = static_cast<T>(value);
    T* p = out.data<T>();
    c.runtime.thread_pool().parallel_for(out.numel(), cpu::kElementGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = v;
    });
  });
}

// ---- sum_to: sum a broadcast tensor down to a shape -----------------------

void sum_to_infer(InferCall& c) {
  check_floating(c, 0);
  const Shape target = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "shape"), "shape");
  const Shape& in = c.inputs[0].shape();
  KILN_CHECK(broadcast_shapes(target, in, c.op.name.c_str()) == in, Status::shape_mismatch, "op '", c.op.name,
             "': shape ", to_string(target), " does not broadcast to the input's ", to_string(in));
  c.outputs.push_back({target, c.inputs[0].dtype(), c.device});
}

// The sum over the dims the target broadcast along (those it lacks in
// front and those where it has 1): sum's kernel, which spreads the output
// elements over the threads and adds runs of elements in partial sums. Its
// output holds the kept dims in row-major order, as the target does.
void sum_to_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  Tensor& out = c.outputs[0];
  const Shape& target = out.shape();
  const int lead = in.shape().rank() - target.rank();
  std::vector<int64_t> dims;
  for (int d = 0; d < in.shape().rank(); ++d)
    if (d < lead || (target[d - lead] == 1 && in.shape()[d] != 1)) dims.push_back(d);
  const NoGradGuard no_grad(c.runtime);  // a step of this kernel, not a call to differentiate
  const Tensor summed = dims.empty() ? c.runtime.contiguous(in)
                                     : c.runtime.call1("sum", {in}, {{"dims", dims}, {"keepdim", false}});
  std::memcpy(out.raw_data(), summed.raw_data(), out.nbytes());
}

std::vector<Tensor> sum_to_backward(const BackwardCall& c) {
  const Shape& in = c.inputs[0].shape();
  const OpDef& expand = c.runtime.op("expand");
  Tensor g = c.runtime.call1(expand, {c.grad_outputs[0]},
                             expand.make_attrs({{"shape", std::vector<int64_t>(in.begin(), in.end())}}));
  return {c.runtime.contiguous(g)};
}

}  // namespace

void register_core_ops(OpRegistry& r) {
  {
    OpDef op;
    op.name = "copy";
    op.inputs = {{"input"}};
    op.infer = copy_infer;
    op.backward = identity_backward;
    op.accepts_strided = true;
    op.saves_inputs = op.saves_outputs = false;
    op.set_kernel(DeviceType::cpu, kAllDTypes, copy_kernel);
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "full";
    op.attrs = {attr_required("shape", AttrType::ints), attr_real("value", 0.0), attr_dtype("dtype", DType::f32),
                attr_string("device", "cpu")};
    op.infer = full_infer;
    op.dtype_input = -1;
    op.set_kernel(DeviceType::cpu, kAllDTypes, full_kernel);
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "sum_to";
    op.inputs = {{"input"}};
    op.attrs = {attr_required("shape", AttrType::ints)};
    op.infer = sum_to_infer;
    op.backward = sum_to_backward;
    op.saves_outputs = false;
    op.set_kernel(DeviceType::cpu, {DType::f32, DType::f64, DType::f16, DType::bf16}, sum_to_kernel);
    r.add(std::move(op));
  }
}

}  // namespace kiln
