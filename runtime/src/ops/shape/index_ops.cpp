// index_select(input, index; dim) picks whole slices of `input` along dim,
// in the order of a 1-D index; index_add(input, index, source; dim, alpha)
// adds alpha * source's slices into those positions (repeated indices add
// up). Each is half of the other's gradient: index_select's input gradient
// is an index_add into zeros, index_add's source gradient an index_select.
#include "../reduction/common.hpp"
#include "families.hpp"
#include "index_geometry.hpp"
#include "kiln/kernels/cpu/strided.hpp"

namespace kiln::shape {
namespace {

using reduction::visit_index_dtype;

int64_t check_index_vector(const InferCall& c, size_t i) {
  reduction::check_index_dtype(c, i);
  const Tensor& index = c.inputs[i];
  KILN_CHECK(index.rank() <= 1, Status::shape_mismatch, "op '", c.op.name,
             "': index must be 1-D (or a scalar), got shape ", to_string(index.shape()));
  return index.numel();
}

int resolve_dim(const OpDef& op, const Attrs& attrs, const Shape& input) {
  KILN_CHECK(input.rank() > 0, Status::invalid_argument, "op '", op.name,
             "': needs a tensor of rank 1 or more, got a scalar");
  return normalize_dim(int(op.attr_int(attrs, "dim")), input.rank(), op.name.c_str());
}

// input with dim resized to `count`.
Shape selected_shape(const OpDef& op, const Attrs& attrs, const Shape& input, int64_t count) {
  Shape out = input;
  out[resolve_dim(op, attrs, input)] = count;
  return out;
}

template <class I>
int64_t checked_index(const KernelCall& c, const I* index, int64_t j, const AlongDim& g, const Shape& input) {
  const int64_t k = int64_t(index[j]);
  if (k < 0 || k >= g.size) throw_index_out_of_range(c.op, k, resolve_dim(c.op, c.attrs, input), g.size);
  return k;
}

// ---- index_select --------------------------------------------------------------------

void index_select_infer(InferCall& c) {
  const int64_t count = check_index_vector(c, 1);
  c.outputs.push_back({selected_shape(c.op, c.attrs, c.inputs[0].shape(), count), c.inputs[0].dtype(), c.device});
}

template <class T>
void index_select_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  const Tensor& index = c.inputs[1];
  const AlongDim g = along_dim(c.op, c.attrs, in.shape(), index.numel());
  const T* src = in.data<T>();
  T* dst = c.outputs[0].data<T>();
  visit_index_dtype(index.dtype(), [&]<class I>() {
    const I* idx = index.data<I>();
    c.runtime.thread_pool().parallel_for(c.outputs[0].numel(), cpu::kElementGrain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o)
        dst[o] = src[g.input_offset(o, checked_index(c, idx, g.position(o), g, in.shape()))];
    });
  });
}

std::vector<Tensor> index_select_backward(const BackwardCall& c) {
  const TensorMeta& in = c.input_meta[0];
  const Tensor zeros = c.runtime.full(in.shape, 0.0, in.dtype, in.device);
  const OpDef& add = c.runtime.op("index_add");
  return {c.runtime.call1(add, {zeros, c.inputs[1], c.grad_outputs[0]},
                          add.make_attrs({{"dim", c.op.attr_int(c.attrs, "dim")}})),
          Tensor()};
}

// ---- index_add -------------------------------------------------------------------------

void index_add_infer(InferCall& c) {
  check_floating(c, 0);
  KILN_CHECK(c.inputs[2].dtype() == c.inputs[0].dtype(), Status::dtype_mismatch, "op '", c.op.name, "': source is ",
             dtype_name(c.inputs[2].dtype()), " but input is ", dtype_name(c.inputs[0].dtype()));
  const int64_t count = check_index_vector(c, 1);
  const Shape& in = c.inputs[0].shape();
  const Shape expected = selected_shape(c.op, c.attrs, in, count);
  const Shape& source = c.inputs[2].shape();
  KILN_CHECK(source == expected, Status::shape_mismatch, "op '",
             c.op.name, "': source has shape ", to_string(source), " but ", count, " indices along dimension ",
             c.op.attr_int(c.attrs, "dim"), " of input ", to_string(in), " need ", to_string(expected));
  c.outputs.push_back({in, c.inputs[0].dtype(), c.device});
}

// Serial: indices may repeat.
template <class T>
void index_add_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  const Tensor& index = c.inputs[1];
  const Tensor& source = c.inputs[2];
  Tensor& out = c.outputs[0];
  const AlongDim g = along_dim(c.op, c.attrs, in.shape(), index.numel());
  const acc_t<T> alpha = acc_t<T>(c.op.attr_real(c.attrs, "alpha"));
  std::vector<acc_t<T>> acc(size_t(out.numel()));
  const T* base = in.data<T>();
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = load_acc(base[i]);
  const T* src = source.data<T>();
  visit_index_dtype(index.dtype(), [&]<class I>() {
    const I* idx = index.data<I>();
    for (int64_t e = 0; e < source.numel(); ++e)
      acc[size_t(g.input_offset(e, checked_index(c, idx, g.position(e), g, in.shape())))] += alpha * load_acc(src[e]);
  });
  T* dst = out.data<T>();
  for (size_t i = 0; i < acc.size(); ++i) dst[i] = store_acc<T>(acc[i]);
}

std::vector<Tensor> index_add_backward(const BackwardCall& c) {
  std::vector<Tensor> grads(3);
  const Tensor& grad = c.grad_outputs[0];
  if (c.needs_input_grad[0]) grads[0] = grad;
  if (c.needs_input_grad[2]) {
    const OpDef& select = c.runtime.op("index_select");
    Tensor g = c.runtime.call1(select, {grad, c.inputs[1]},
                               select.make_attrs({{"dim", c.op.attr_int(c.attrs, "dim")}}));
    const double alpha = c.op.attr_real(c.attrs, "alpha");
    if (alpha != 1.0) g = c.runtime.call1("mul_scalar", {g}, {{"value", alpha}});
    grads[2] = g;
  }
  return grads;
}

}  // namespace

AlongDim along_dim(const OpDef& op, const Attrs& attrs, const Shape& input, int64_t count) {
  AlongDim g;
  g.count = count;
  const int dim = resolve_dim(op, attrs, input);
  for (int d = 0; d < input.rank(); ++d) {
    if (d < dim) g.outer *= input[d];
    if (d == dim) g.size = input[d];
    if (d > dim) g.inner *= input[d];
  }
  return g;
}

void throw_index_out_of_range(const OpDef& op, int64_t index, int dim, int64_t size) {
  throw_error(Status::invalid_argument, str_cat("op '", op.name, "': index ", index, " is out of range for dimension ",
                                                dim, " of size ", size, " (expected 0 <= index < ", size, ")"));
}

void register_index_ops(OpRegistry& r) {
  {
    OpDef op;
    op.name = "index_select";
    op.inputs = {{"input"}, {"index"}};
    op.attrs = {attr_required("dim", AttrType::integer)};
    op.infer = index_select_infer;
    op.backward = index_select_backward;
    op.saves_outputs = false;
    for (DType t : kAllDTypes)
      visit_dtype(t, [&]<class T>() { op.set_kernel(DeviceType::cpu, t, &index_select_kernel<T>); });
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "index_add";
    op.inputs = {{"input"}, {"index"}, {"source"}};
    op.attrs = {attr_required("dim", AttrType::integer), attr_real("alpha", 1.0)};
    op.infer = index_add_infer;
    op.backward = index_add_backward;
    op.saves_outputs = false;
    reduction::set_float_kernels(op, []<class T>() { return &index_add_kernel<T>; });
    r.add(std::move(op));
  }
}

}  // namespace kiln::shape
