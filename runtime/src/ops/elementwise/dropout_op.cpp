// dropout(input, p, training) -> (output, mask): each element is kept with
// probability 1 - p (mask 1) and scaled by 1 / (1 - p), else zeroed (mask 0).
// Element i draws Philox word i. In eval mode, or with p = 0, the output
// copies the input and the mask is all ones. dropout_backward(grad, mask,
// scale) = grad * mask * scale.
#include <cstring>

#include "elementwise_common.hpp"
#include "random_words.hpp"

namespace kiln::elementwise {
namespace {

void dropout_infer(InferCall& c) {
  check_floating(c, 0);
  const double p = c.op.attr_real(c.attrs, "p");
  KILN_CHECK(p >= 0.0 && p < 1.0, Status::invalid_argument, "op '", c.op.name, "': p must be in [0, 1), got ", p);
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
  c.outputs.push_back({c.inputs[0].shape(), DType::u8, c.device});
}

bool drops(const OpDef& op, const Attrs& attrs) {
  return op.attr_bool(attrs, "training") && op.attr_real(attrs, "p") > 0.0;
}

template <class T>
void dropout_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  Tensor& out = c.outputs[0];
  uint8_t* mask = c.outputs[1].data<uint8_t>();
  const int64_t n = in.numel();
  if (!drops(c.op, c.attrs)) {
    std::memcpy(out.raw_data(), in.raw_data(), in.nbytes());
    std::memset(mask, 1, size_t(n));
    return;
  }
  const double p = c.op.attr_real(c.attrs, "p");
  const float threshold = float(p);
  const acc_t<T> scale = acc_t<T>(1.0 / (1.0 - p));
  const T* src = in.data<T>();
  T* dst = out.data<T>();
  const GeneratorState range = c.runtime.reserve_random(blocks_for_words(n));
  for_range(c.runtime, n, [=](int64_t begin, int64_t end) {
    RandomWords words(range);
    for (int64_t i = begin; i < end; ++i) {
      const bool keep = Philox::to_unit_float(words[i]) >= threshold;
      mask[i] = keep;
      dst[i] = store_acc<T>(keep ? load_acc(src[i]) * scale : acc_t<T>(0));
    }
  });
}

std::vector<Tensor> dropout_backward(const BackwardCall& c) {
  const double scale = drops(c.op, c.attrs) ? 1.0 / (1.0 - c.op.attr_real(c.attrs, "p")) : 1.0;
  const OpDef& op = c.runtime.op("dropout_backward");
  return {c.runtime.call1(op, {c.grad_outputs[0], c.outputs[1]}, op.make_attrs({{"scale", scale}}))};
}

void dropout_backward_infer(InferCall& c) {
  check_floating(c, 0);
  KILN_CHECK(c.inputs[1].dtype() == DType::u8, Status::dtype_mismatch, "op '", c.op.name, "': mask must be u8, got ",
             dtype_name(c.inputs[1].dtype()));
  KILN_CHECK(c.inputs[0].shape() == c.inputs[1].shape(), Status::shape_mismatch, "op '", c.op.name, "': grad ",
             to_string(c.inputs[0].shape()), " and mask ", to_string(c.inputs[1].shape()), " must have one shape");
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
}

template <class T>
void dropout_backward_kernel(const KernelCall& c) {
  const T* grad = c.inputs[0].data<T>();
  const uint8_t* mask = c.inputs[1].data<uint8_t>();
  T* out = c.outputs[0].data<T>();
  const acc_t<T> scale = acc_t<T>(c.op.attr_real(c.attrs, "scale"));
  for_range(c.runtime, c.outputs[0].numel(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = store_acc<T>(mask[i] ? load_acc(grad[i]) * scale : acc_t<T>(0));
  });
}

}  // namespace

void register_dropout_ops(OpRegistry& r) {
  {
    OpDef op;
    op.name = "dropout";
    op.inputs = {{"input"}};
    op.attrs = {attr_real("p", 0.5), attr_bool("training", true)};
    op.infer = dropout_infer;
    op.backward = dropout_backward;
    op.saves_inputs = false;  // the backward reads only the mask
    set_cpu_kernels(op, FloatTypes{}, []<class T>() -> KernelFn { return dropout_kernel<T>; });
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "dropout_backward";
    op.inputs = {{"grad"}, {"mask"}};
    op.attrs = {attr_real("scale", 1.0)};
    op.infer = dropout_backward_infer;
    set_cpu_kernels(op, FloatTypes{}, []<class T>() -> KernelFn { return dropout_backward_kernel<T>; });
    r.add(std::move(op));
  }
}

}  // namespace kiln::elementwise
