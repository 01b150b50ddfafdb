// Tensors made from attributes: zeros, ones, arange; and fill, which makes a
// constant tensor shaped like its input (whose values it never reads).
#include <cmath>

#include "elementwise_common.hpp"

namespace kiln::elementwise {
namespace {

void constant(Runtime& rt, Tensor& out, double value) {
  visit_dtype(out.dtype(), [&]<class T>() {
    const T v = convert_element<T>(value);
    T* p = out.data<T>();
    for_range(rt, out.numel(), [=](int64_t begin, int64_t end) { std::fill(p + begin, p + end, v); });
  });
}

void shape_attr_infer(InferCall& c) {
  const Shape shape = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "shape"), "shape");
  c.outputs.push_back({shape, c.op.attr_dtype(c.attrs, "dtype"), c.device});
}

void zeros_kernel(const KernelCall& c) { constant(c.runtime, c.outputs[0], 0.0); }
void ones_kernel(const KernelCall& c) { constant(c.runtime, c.outputs[0], 1.0); }

void fill_infer(InferCall& c) { c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device}); }
void fill_kernel(const KernelCall& c) { constant(c.runtime, c.outputs[0], c.op.attr_real(c.attrs, "value")); }

// ---- arange: start, start + step, ... up to but excluding end ---------------------

int64_t arange_length(const OpDef& op, double start, double end, double step) {
  KILN_CHECK(std::isfinite(start) && std::isfinite(end) && std::isfinite(step) && step != 0.0,
             Status::invalid_argument, "op '", op.name, "': start, end and step must be finite and step non-zero, got ",
             start, ", ", end, ", ", step);
  return std::max<int64_t>(0, int64_t(std::ceil((end - start) / step)));
}

void arange_infer(InferCall& c) {
  const DType dtype = c.op.attr_dtype(c.attrs, "dtype");
  KILN_CHECK(dtype != DType::boolean, Status::dtype_mismatch, "op '", c.op.name,
             "': dtype must be numeric, got bool");
  const int64_t n = arange_length(c.op, c.op.attr_real(c.attrs, "start"), c.op.attr_real(c.attrs, "end"),
                                  c.op.attr_real(c.attrs, "step"));
  c.outputs.push_back({Shape{n}, dtype, c.device});
}

template <class T>
void arange_kernel(const KernelCall& c) {
  const double start = c.op.attr_real(c.attrs, "start"), step = c.op.attr_real(c.attrs, "step");
  T* p = c.outputs[0].data<T>();
  for_range(c.runtime, c.outputs[0].numel(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) p[i] = convert_element<T>(start + double(i) * step);
  });
}

OpDef creation_op(std::string name, std::vector<AttrSpec> attrs, InferFn infer) {
  OpDef op;
  op.name = std::move(name);
  op.attrs = std::move(attrs);
  op.attrs.push_back(attr_string("device", "cpu"));
  op.infer = infer;
  op.dtype_input = -1;
  return op;
}

}  // namespace

void register_creation_ops(OpRegistry& r) {
  const std::pair<const char*, KernelFn> constants[] = {{"zeros", zeros_kernel}, {"ones", ones_kernel}};
  for (const auto& [name, kernel] : constants) {
    OpDef op = creation_op(name, {attr_required("shape", AttrType::ints), attr_dtype("dtype", DType::f32)},
                           shape_attr_infer);
    set_cpu_kernels(op, AllTypes{}, [kernel = kernel]<class>() { return kernel; });
    r.add(std::move(op));
  }
  {
    OpDef op = creation_op("arange",
                           {attr_real("start", 0.0), attr_required("end", AttrType::real), attr_real("step", 1.0),
                            attr_dtype("dtype", DType::i64)},
                           arange_infer);
    set_cpu_kernels(op, TypeList<float, double, Half, BFloat16, int32_t, int64_t, uint8_t>{},
                    []<class T>() -> KernelFn { return arange_kernel<T>; });
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "fill";
    op.inputs = {{"input"}};
    op.attrs = {attr_real("value", 0.0)};
    op.infer = fill_infer;
    op.accepts_strided = true;  // only the input's shape and dtype are read
    op.saves_inputs = op.saves_outputs = false;
    set_cpu_kernels(op, AllTypes{}, []<class>() -> KernelFn { return fill_kernel; });
    r.add(std::move(op));
  }
}

}  // namespace kiln::elementwise
