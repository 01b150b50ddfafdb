// max_pool1d and avg_pool1d over [N, C, L], as their
// torch.nn.functional namesakes: the 2-d pools on the input seen as
// [N, C, 1, L] with a 1 x kernel_size window, whose kernels (on every
// device) and backward they run.
#include "kernel_of.hpp"
#include "kiln/ops/helpers.hpp"
#include "kiln/runtime.hpp"
#include "pool_geometry.hpp"
#include "pool_ops.hpp"

namespace kiln::nn {
namespace {

const char* pool2d_name(std::string_view pool1d) { return pool1d == "max_pool1d" ? "max_pool2d" : "avg_pool2d"; }

// The one value of a window attribute; `fallback` when it may be empty and is.
int64_t single(const OpDef& op, const Attrs& attrs, const char* name, const int64_t* fallback) {
  const std::vector<int64_t>& v = op.attr_ints(attrs, name);
  if (v.empty() && fallback) return *fallback;
  KILN_CHECK(v.size() == 1, Status::invalid_argument, "op '", op.name, "': ", name, " takes 1 value, got ",
             v.size());
  return v[0];
}

// The window of a 1-d call, checked against an input of shape `s`; errors
// name this op and its 1-d values.
struct Window1d {
  int64_t kernel = 1, stride = 1, padding = 0, dilation = 1, out = 0;
  bool ceil_mode = false;
};

Window1d window_1d(const OpDef& op, const Attrs& attrs, const Shape& s) {
  KILN_CHECK(s.rank() == 3, Status::shape_mismatch, "op '", op.name, "': input must be [N, C, L] (rank 3), got shape ",
             to_string(s));
  Window1d w;
  w.kernel = single(op, attrs, "kernel_size", nullptr);
  w.stride = single(op, attrs, "stride", &w.kernel);
  w.padding = single(op, attrs, "padding", nullptr);
  if (op.attr_index("dilation") >= 0) w.dilation = single(op, attrs, "dilation", &w.dilation);
  w.ceil_mode = op.attr_bool(attrs, "ceil_mode");
  KILN_CHECK(w.kernel > 0 && w.stride > 0 && w.dilation > 0, Status::invalid_argument, "op '", op.name,
             "': kernel_size, stride and dilation must be positive, got ", w.kernel, ", ", w.stride, " and ",
             w.dilation);
  KILN_CHECK(w.padding >= 0 && w.padding <= w.kernel / 2, Status::invalid_argument, "op '", op.name, "': padding ",
             w.padding, " must be between 0 and half the window of ", w.kernel);
  w.out = pool_output_size(s[2], w.kernel, w.stride, w.padding, w.dilation, w.ceil_mode);
  KILN_CHECK(w.out >= 1, Status::shape_mismatch, "op '", op.name, "': a window of ",
             w.dilation * (w.kernel - 1) + 1, " (padding ", w.padding, ") does not fit the input of shape ",
             to_string(s), "; the output would have length ", w.out);
  return w;
}

// The 2-d pool's attributes for a 1-d call: a 1 x kernel window.
Attrs pool2d_attrs_of(const OpDef& op, const Attrs& attrs, const Window1d& w, const OpDef& pool2d) {
  using Ints = std::vector<int64_t>;
  const Ints kernel{1, w.kernel}, stride{1, w.stride}, padding{0, w.padding};
  if (op.attr_index("dilation") >= 0)
    return pool2d.make_attrs({{"kernel_size", kernel},
                              {"stride", stride},
                              {"padding", padding},
                              {"dilation", Ints{1, w.dilation}},
                              {"ceil_mode", w.ceil_mode}});
  return pool2d.make_attrs({{"kernel_size", kernel},
                            {"stride", stride},
                            {"padding", padding},
                            {"ceil_mode", w.ceil_mode},
                            {"count_include_pad", op.attr_bool(attrs, "count_include_pad")}});
}

Shape as_2d(const Shape& s) { return {s[0], s[1], 1, s[2]}; }

void pool1d_infer(InferCall& c) {
  check_floating(c, 0);
  const Shape& s = c.inputs[0].shape();
  const Window1d w = window_1d(c.op, c.attrs, s);
  c.outputs.push_back({Shape{s[0], s[1], w.out}, c.inputs[0].dtype(), c.device});
}

// A contiguous [N, C, L] tensor as [N, C, 1, L], sharing its storage.
Tensor view_2d(const Tensor& t) {
  const Shape s = as_2d(t.shape());
  return t.view_as(s, {s[1] * s[3], s[3], s[3], 1}, t.offset());
}

void pool1d_kernel(const KernelCall& c) {
  const OpDef& pool2d = c.runtime.op(pool2d_name(c.op.name));
  const Tensor in = view_2d(c.inputs[0]);
  Tensor out = view_2d(c.outputs[0]);
  const Window1d w = window_1d(c.op, c.attrs, c.inputs[0].shape());
  run_kernel_of(c, pool2d, {&in, 1}, {&out, 1}, pool2d_attrs_of(c.op, c.attrs, w, pool2d));
}

Tensor reshaped(Runtime& rt, const Tensor& t, const Shape& s) {
  return rt.call1("reshape", {t}, {{"shape", std::vector<int64_t>(s.begin(), s.end())}});
}

std::vector<Tensor> pool1d_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const OpDef& pool2d = rt.op(pool2d_name(c.op.name));
  const TensorMeta& meta = c.input_meta[0];
  const Tensor inputs[] = {reshaped(rt, c.inputs[0], as_2d(meta.shape))};
  const TensorMeta metas[] = {{as_2d(meta.shape), meta.dtype, meta.device}};
  const Tensor grads[] = {reshaped(rt, c.grad_outputs[0], as_2d(c.grad_outputs[0].shape()))};
  const Attrs attrs = pool2d_attrs_of(c.op, c.attrs, window_1d(c.op, c.attrs, meta.shape), pool2d);
  std::vector<Tensor> g =
      pool2d.backward(BackwardCall{rt, pool2d, inputs, metas, {}, grads, attrs, c.needs_input_grad});
  return {reshaped(rt, g[0], meta.shape)};
}

void register_pool1d(OpRegistry& r, const char* name, PoolKind kind) {
  const OpDef& pool2d = r.get(pool2d_name(name));
  OpDef op;
  op.name = name;
  op.inputs = {{"input"}};
  op.attrs = {attr_required("kernel_size", AttrType::ints), attr_ints("stride", {}), attr_ints("padding", {0})};
  if (kind == PoolKind::max) op.attrs.push_back(attr_ints("dilation", {1}));
  op.attrs.push_back(attr_bool("ceil_mode", false));
  if (kind == PoolKind::average) op.attrs.push_back(attr_bool("count_include_pad", true));
  op.infer = pool1d_infer;
  op.backward = pool1d_backward;
  op.saves_outputs = false;
  mirror_kernels(op, pool2d, DeviceType::cpu, pool1d_kernel);
  r.add(std::move(op));
}

}  // namespace

void register_pool1d_ops(OpRegistry& r) {
  register_pool1d(r, "max_pool1d", PoolKind::max);
  register_pool1d(r, "avg_pool1d", PoolKind::average);
}

}  // namespace kiln::nn
