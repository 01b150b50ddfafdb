// Views: outputs that share their input's storage through other shapes,
// strides and offsets. reshape views a contiguous input and copies any other.
#include <algorithm>
#include <cstring>

#include "kiln/kernels/builtin_ops.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/ops/helpers.hpp"

namespace kiln {
namespace {

std::vector<int64_t> dims_of(const Shape& s) { return {s.begin(), s.end()}; }

Tensor call_with(Runtime& rt, std::string_view name, const Tensor& t, NamedAttrs attrs) {
  const OpDef& op = rt.op(name);
  return rt.call1(op, {t}, op.make_attrs(attrs));
}

// ---- reshape -----------------------------------------------------------------

Shape resolve_reshape(const OpDef& op, const Shape& in, const std::vector<int64_t>& dims) {
  KILN_CHECK(dims.size() <= size_t(kMaxDims), Status::invalid_argument, "op '", op.name, "': at most ", kMaxDims,
             " dimensions");
  Shape out;
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      KILN_CHECK(infer_at < 0, Status::invalid_argument, "op '", op.name, "': only one dimension can be -1");
      infer_at = int(i);
      out.push_back(1);
      continue;
    }
    KILN_CHECK(dims[i] >= 0, Status::invalid_argument, "op '", op.name, "': invalid dimension ", dims[i]);
    out.push_back(dims[i]);
    known *= dims[i];
  }
  if (infer_at >= 0) {
    KILN_CHECK(known != 0 && in.numel() % known == 0, Status::shape_mismatch, "op '", op.name, "': cannot reshape ",
               to_string(in), " (", in.numel(), " elements) into a shape with -1 and ", known, " other elements");
    out[infer_at] = in.numel() / known;
  }
  KILN_CHECK(out.numel() == in.numel(), Status::shape_mismatch, "op '", op.name, "': cannot reshape ", to_string(in),
             " (", in.numel(), " elements) into ", to_string(out), " (", out.numel(), " elements)");
  return out;
}

Tensor reshape_view(Runtime& rt, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  const Shape shape = resolve_reshape(op, in.shape(), attrs.ints(0));
  const Tensor dense = rt.contiguous(in);
  return dense.view_as(shape, contiguous_strides(shape), dense.offset());
}

std::vector<Tensor> reshape_backward(const BackwardCall& c) {
  return {call_with(c.runtime, "reshape", c.grad_outputs[0], {{"shape", dims_of(c.inputs[0].shape())}})};
}

// ---- permute / transpose -------------------------------------------------------

std::vector<int> check_permutation(const OpDef& op, const std::vector<int64_t>& dims, int rank) {
  KILN_CHECK(int(dims.size()) == rank, Status::invalid_argument, "op '", op.name, "': ", dims.size(),
             " dimensions given for a tensor of rank ", rank);
  std::vector<int> perm(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    perm[i] = normalize_dim(int(dims[i]), rank, op.name.c_str());
    KILN_CHECK(!seen[size_t(perm[i])], Status::invalid_argument, "op '", op.name, "': dimension ", dims[i],
               " repeats; expected a permutation of 0..", rank - 1);
    seen[size_t(perm[i])] = true;
  }
  return perm;
}

Tensor permute_view(Runtime&, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  const std::vector<int> perm = check_permutation(op, attrs.ints(0), in.rank());
  Shape shape, strides;
  for (int p : perm) {
    shape.push_back(in.shape()[p]);
    strides.push_back(in.strides()[p]);
  }
  return in.view_as(shape, strides, in.offset());
}

std::vector<Tensor> permute_backward(const BackwardCall& c) {
  const std::vector<int> perm = check_permutation(c.op, c.attrs.ints(0), c.grad_outputs[0].rank());
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
  return {call_with(c.runtime, "permute", c.grad_outputs[0], {{"dims", inverse}})};
}

Tensor transpose_view(Runtime&, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  const int a = normalize_dim(int(attrs.integer(0)), in.rank(), op.name.c_str());
  const int b = normalize_dim(int(attrs.integer(1)), in.rank(), op.name.c_str());
  Shape shape = in.shape(), strides = in.strides();
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return in.view_as(shape, strides, in.offset());
}

std::vector<Tensor> transpose_backward(const BackwardCall& c) {
  const OpDef& op = c.runtime.op("transpose");
  return {c.runtime.call1(op, {c.grad_outputs[0]}, c.attrs)};
}

// ---- slice: [start, end) with step along one dimension -------------------------

struct SliceRange {
  int dim;
  int64_t start, length, step;
};

SliceRange resolve_slice(const OpDef& op, const Shape& in, const Attrs& attrs) {
  const int dim = normalize_dim(int(attrs.integer(0)), in.rank(), op.name.c_str());
  const int64_t size = in[dim];
  int64_t start = attrs.integer(1), end = attrs.integer(2);
  const int64_t step = attrs.integer(3);
  KILN_CHECK(step > 0, Status::invalid_argument, "op '", op.name, "': step must be positive, got ", step);
  // Python semantics: negative indices count from the end, out-of-range clamps.
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  return {dim, start, (end - start + step - 1) / step, step};
}

Tensor slice_view(Runtime&, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  const SliceRange s = resolve_slice(op, in.shape(), attrs);
  Shape shape = in.shape(), strides = in.strides();
  shape[s.dim] = s.length;
  strides[s.dim] *= s.step;
  return in.view_as(shape, strides, in.offset() + s.start * in.strides()[s.dim]);
}

std::vector<Tensor> slice_backward(const BackwardCall& c) {
  const Shape& in = c.inputs[0].shape();
  std::vector<int64_t> dims = dims_of(in);
  const OpDef& op = c.runtime.op("slice_grad");
  std::vector<Tensor> args{c.grad_outputs[0]};
  const Attrs attrs = op.make_attrs({{"input_shape", dims}, {"dim", c.attrs.integer(0)}, {"start", c.attrs.integer(1)},
                         {"end", c.attrs.integer(2)}, {"step", c.attrs.integer(3)}});
  return {c.runtime.call1(op, args, attrs)};
}

// slice_grad: zeros shaped like the sliced input, with the gradient written
// into the sliced positions.
void slice_grad_infer(InferCall& c) {
  const Shape shape = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "input_shape"), "input_shape");
  c.outputs.push_back({shape, c.inputs[0].dtype(), c.device});
}

void slice_grad_kernel(const KernelCall& c) {
  Tensor& out = c.outputs[0];
  const Tensor& grad = c.inputs[0];
  std::memset(out.raw_data(), 0, out.nbytes());
  const OpDef& slice = c.runtime.op("slice");
  Attrs attrs = slice.make_attrs({{"dim", c.op.attr_int(c.attrs, "dim")}, {"start", c.op.attr_int(c.attrs, "start")},
                                  {"end", c.op.attr_int(c.attrs, "end")}, {"step", c.op.attr_int(c.attrs, "step")}});
  const Tensor region = slice_view(c.runtime, out, attrs, slice);
  const Shape grad_strides = contiguous_strides(grad.shape());
  visit_dtype(out.dtype(), [&]<class T>() {
    T* dst = region.data<T>();
    const T* src = grad.data<T>();
    cpu::for_each_offset2(region.shape(), region.strides(), grad_strides, 0, region.numel(),
                          [&](int64_t, int64_t d, int64_t s) { dst[d] = src[s]; });
  });
}

// ---- expand: broadcast size-1 dimensions without copying ------------------------

// A size of -1 keeps the input's size in that dim, as in PyTorch; a new
// leading dim has no size to keep.
std::vector<int64_t> expand_sizes(const Tensor& in, std::vector<int64_t> sizes, const OpDef& op) {
  const int64_t lead = int64_t(sizes.size()) - in.rank();
  for (int64_t i = 0; i < int64_t(sizes.size()); ++i) {
    if (sizes[size_t(i)] != -1) continue;
    KILN_CHECK(i >= lead, Status::invalid_argument, "op '", op.name, "': size -1 in dim ", i,
               ", a new leading dim, where the input ", to_string(in.shape()), " has no size to keep");
    sizes[size_t(i)] = in.shape()[int(i - lead)];
  }
  return sizes;
}

Tensor expand_view(Runtime&, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  const Shape target = shape_from_attr(op, expand_sizes(in, attrs.ints(0), op), "shape");
  KILN_CHECK(target.rank() >= in.rank() && broadcast_shapes(in.shape(), target, op.name.c_str()) == target,
             Status::shape_mismatch, "op '", op.name, "': cannot expand ", to_string(in.shape()), " to ",
             to_string(target));
  return in.view_as(target, cpu::broadcast_strides(in.shape(), in.strides(), target), in.offset());
}

std::vector<Tensor> expand_backward(const BackwardCall& c) {
  return {sum_to(c.runtime, c.grad_outputs[0], c.inputs[0].shape())};
}

OpDef view_op(std::string name, std::vector<AttrSpec> attrs, ViewFn view, BackwardFn backward) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"input"}};
  op.attrs = std::move(attrs);
  op.view = view;
  op.backward = backward;
  op.accepts_strided = true;
  op.saves_outputs = false;
  return op;
}

}  // namespace

void register_view_ops(OpRegistry& r) {
  r.add(view_op("reshape", {attr_required("shape", AttrType::ints)}, reshape_view, reshape_backward));
  r.add(view_op("permute", {attr_required("dims", AttrType::ints)}, permute_view, permute_backward));
  r.add(view_op("transpose", {attr_int("dim0", 0), attr_int("dim1", 1)}, transpose_view, transpose_backward));
  r.add(view_op("slice", {attr_int("dim", 0), attr_int("start", 0), attr_int("end", INT64_MAX), attr_int("step", 1)},
                slice_view, slice_backward));
  r.add(view_op("expand", {attr_required("shape", AttrType::ints)}, expand_view, expand_backward));
  OpDef grad;
  grad.name = "slice_grad";
  grad.inputs = {{"grad"}};
  grad.attrs = {attr_required("input_shape", AttrType::ints), attr_int("dim", 0), attr_int("start", 0),
                attr_int("end", INT64_MAX), attr_int("step", 1)};
  grad.infer = slice_grad_infer;
  grad.set_kernel(DeviceType::cpu, {DType::f32, DType::f64, DType::f16, DType::bf16}, slice_grad_kernel);
  r.add(std::move(grad));
}

}  // namespace kiln
