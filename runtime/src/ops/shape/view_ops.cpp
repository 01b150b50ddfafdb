// Views that only rename dimensions or take a window of one: squeeze,
// unsqueeze, flatten and narrow, with PyTorch's arguments. Each shares its
// input's storage; flatten copies only when the dims it merges cannot be
// read with one stride (as torch.flatten does).
#include "kiln/ops/helpers.hpp"

namespace kiln::shape {
namespace {

std::vector<int64_t> dims_of(const Shape& s) { return {s.begin(), s.end()}; }

// The gradient of a view that keeps every element in order: the gradient
// reshaped back to the input's shape.
std::vector<Tensor> reshape_back(const BackwardCall& c) {
  const OpDef& reshape = c.runtime.op("reshape");
  return {c.runtime.call1(reshape, {c.grad_outputs[0]},
                          reshape.make_attrs({{"shape", dims_of(c.input_meta[0].shape)}}))};
}

// ---- squeeze(dim): drop size-1 dims (all of them when dim is empty) -------------

Tensor squeeze_view(Runtime&, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  const std::vector<int64_t>& dims = attrs.ints(0);
  bool drop[kMaxDims] = {};
  for (int64_t d : dims) drop[normalize_dim(int(d), in.rank(), op.name.c_str())] = true;
  Shape shape, strides;
  for (int d = 0; d < in.rank(); ++d) {
    // Like PyTorch, a listed dim whose size is not 1 stays: no error.
    if (in.shape()[d] == 1 && (dims.empty() || drop[d])) continue;
    shape.push_back(in.shape()[d]);
    strides.push_back(in.strides()[d]);
  }
  return in.view_as(shape, strides, in.offset());
}

// ---- unsqueeze(dim): a size-1 dim inserted at dim (-1 appends) -------------------

Tensor unsqueeze_view(Runtime&, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  KILN_CHECK(in.rank() < kMaxDims, Status::invalid_argument, "op '", op.name, "': a tensor of rank ", in.rank(),
             " has no room for another dimension (at most ", kMaxDims, ")");
  const int64_t given = attrs.integer(0);
  const int rank = in.rank() + 1;
  KILN_CHECK(given >= -rank && given < rank, Status::invalid_argument, "op '", op.name, "': dimension ", given,
             " is out of range for a tensor of rank ", in.rank(), " (expected ", -rank, " to ", rank - 1, ")");
  const int dim = int(given < 0 ? given + rank : given);
  Shape shape = in.shape(), strides = in.strides();
  // Any stride serves a size-1 dim; the one a contiguous tensor would have
  // keeps a contiguous input contiguous.
  const int64_t stride = dim < in.rank() ? in.shape()[dim] * in.strides()[dim] : 1;
  shape.insert(dim, 1);
  strides.insert(dim, stride);
  return in.view_as(shape, strides, in.offset());
}

// ---- flatten(start_dim, end_dim): dims start..end (both included) merged --------

Tensor flatten_view(Runtime& rt, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  if (in.rank() == 0) return in.view_as(Shape{1}, Shape{1}, in.offset());
  const int start = normalize_dim(int(attrs.integer(0)), in.rank(), op.name.c_str());
  const int end = normalize_dim(int(attrs.integer(1)), in.rank(), op.name.c_str());
  KILN_CHECK(start <= end, Status::invalid_argument, "op '", op.name, "': start_dim ", attrs.integer(0),
             " comes after end_dim ", attrs.integer(1), " for a tensor of rank ", in.rank());
  // The merged dims are one strided run when each steps over the next whole.
  bool one_run = true;
  for (int d = start; d < end; ++d) one_run = one_run && in.strides()[d] == in.strides()[d + 1] * in.shape()[d + 1];
  const Tensor source = one_run ? in : rt.contiguous(in);
  Shape shape, strides;
  for (int d = 0; d < in.rank(); ++d) {
    if (d > start && d <= end) {
      shape[shape.rank() - 1] *= in.shape()[d];
      strides[strides.rank() - 1] = source.strides()[d];
      continue;
    }
    shape.push_back(in.shape()[d]);
    strides.push_back(source.strides()[d]);
  }
  return source.view_as(shape, strides, source.offset());
}

// ---- narrow(dim, start, length): positions start..start+length-1 of dim ------------

struct Window {
  int dim;
  int64_t start, length;
};

Window resolve_window(const OpDef& op, const Shape& in, const Attrs& attrs) {
  KILN_CHECK(in.rank() > 0, Status::invalid_argument, "op '", op.name, "': cannot narrow a scalar");
  const int dim = normalize_dim(int(attrs.integer(0)), in.rank(), op.name.c_str());
  const int64_t size = in[dim];
  int64_t start = attrs.integer(1);
  const int64_t length = attrs.integer(2);
  KILN_CHECK(start >= -size && start <= size, Status::invalid_argument, "op '", op.name, "': start ", start,
             " is out of range for dimension ", dim, " of size ", size, " (expected ", -size, " to ", size, ")");
  if (start < 0) start += size;
  KILN_CHECK(length >= 0 && start + length <= size, Status::invalid_argument, "op '", op.name, "': start ", start,
             " and length ", length, " exceed dimension ", dim, " of size ", size);
  return {dim, start, length};
}

Tensor narrow_view(Runtime&, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  const Window w = resolve_window(op, in.shape(), attrs);
  Shape shape = in.shape();
  shape[w.dim] = w.length;
  return in.view_as(shape, in.strides(), in.offset() + w.start * in.strides()[w.dim]);
}

// The gradient lands in the window, zeros elsewhere: slice's gradient op.
std::vector<Tensor> narrow_backward(const BackwardCall& c) {
  const Window w = resolve_window(c.op, c.input_meta[0].shape, c.attrs);
  const OpDef& grad = c.runtime.op("slice_grad");
  return {c.runtime.call1(grad, {c.grad_outputs[0]},
                          grad.make_attrs({{"input_shape", dims_of(c.input_meta[0].shape)},
                                           {"dim", int64_t(w.dim)},
                                           {"start", w.start},
                                           {"end", w.start + w.length}}))};
}

OpDef view_op(std::string name, std::vector<AttrSpec> attrs, ViewFn view, BackwardFn backward) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"input"}};
  op.attrs = std::move(attrs);
  op.view = view;
  op.backward = backward;
  op.accepts_strided = true;
  op.saves_inputs = op.saves_outputs = false;
  return op;
}

}  // namespace

void register_view_ops(OpRegistry& r) {
  r.add(view_op("squeeze", {attr_ints("dim", {})}, squeeze_view, reshape_back));
  r.add(view_op("unsqueeze", {attr_required("dim", AttrType::integer)}, unsqueeze_view, reshape_back));
  r.add(view_op("flatten", {attr_int("start_dim", 0), attr_int("end_dim", -1)}, flatten_view, reshape_back));
  r.add(view_op("narrow",
                {attr_required("dim", AttrType::integer), attr_required("start", AttrType::integer),
                 attr_required("length", AttrType::integer)},
                narrow_view, narrow_backward));
}

}  // namespace kiln::shape
