// stack(tensors...; dim) joins same-shaped tensors along a new dim;
// chunk(input; chunks, dim) cuts a dim into `chunks` pieces of ceil(size /
// chunks), the last one smaller (so there may be fewer pieces, as in
// torch.chunk). Both move the same bytes as concat and split: stack runs
// concat's kernel on its inputs viewed with the new size-1 dim, chunk runs
// split's kernel and backward on its pieces, on whatever device those
// kernels exist for.
#include <algorithm>

#include "../reduction/common.hpp"
#include "families.hpp"

namespace kiln::shape {
namespace {

// Runs the kernel `name` has for this call's device and dtype, with this
// call's op, attributes and outputs (both ops read only "dim").
void run_kernel_of(std::string_view name, const KernelCall& c, std::span<const Tensor> inputs) {
  const OpDef& op = c.runtime.op(name);
  const Device device = c.outputs[0].device();
  const KernelFn kernel = op.kernel(device.type, inputs[0].dtype());
  KILN_CHECK(kernel != nullptr, Status::unsupported, "op '", c.op.name, "' has no kernel for ",
             dtype_name(inputs[0].dtype()), " on ", to_string(device));
  kernel(KernelCall{c.runtime, c.op, inputs, c.outputs, c.attrs});
}

// ---- stack ----------------------------------------------------------------------------

// The new dim's position: stack of rank-r tensors takes -(r+1) to r.
int stack_dim(const OpDef& op, const Attrs& attrs, const Shape& part) {
  return normalize_dim(int(op.attr_int(attrs, "dim")), part.rank() + 1, op.name.c_str());
}

void stack_infer(InferCall& c) {
  KILN_CHECK(!c.inputs.empty(), Status::invalid_argument, "op '", c.op.name, "': needs at least one tensor");
  const Tensor& first = c.inputs[0];
  KILN_CHECK(first.rank() < kMaxDims, Status::invalid_argument, "op '", c.op.name, "': tensors of rank ",
             first.rank(), " leave no room for the new dim (at most ", kMaxDims, " dims)");
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    KILN_CHECK(c.inputs[i].shape() == first.shape(), Status::shape_mismatch, "op '", c.op.name, "': tensor ", i,
               " has shape ", to_string(c.inputs[i].shape()), " but tensor 0 has ", to_string(first.shape()),
               "; stacked tensors must have one shape");
    KILN_CHECK(c.inputs[i].dtype() == first.dtype(), Status::dtype_mismatch, "op '", c.op.name, "': tensor ", i,
               " is ", dtype_name(c.inputs[i].dtype()), " but tensor 0 is ", dtype_name(first.dtype()));
  }
  Shape out = first.shape();
  out.insert(stack_dim(c.op, c.attrs, first.shape()), int64_t(c.inputs.size()));
  c.outputs.push_back({out, first.dtype(), c.device});
}

void stack_kernel(const KernelCall& c) {
  const int dim = stack_dim(c.op, c.attrs, c.inputs[0].shape());
  std::vector<Tensor> parts;
  parts.reserve(c.inputs.size());
  for (const Tensor& in : c.inputs) {
    Shape shape = in.shape(), strides = in.strides();
    shape.insert(dim, 1);
    strides.insert(dim, 0);  // any stride serves a size-1 dim
    parts.push_back(in.view_as(shape, strides, in.offset()));
  }
  run_kernel_of("concat", c, parts);
}

// Tensor i's gradient: position i of the new dim.
std::vector<Tensor> stack_backward(const BackwardCall& c) {
  const Tensor& grad = c.grad_outputs[0];
  const int64_t dim = stack_dim(c.op, c.attrs, c.input_meta[0].shape);
  std::vector<Tensor> grads(c.input_meta.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!c.needs_input_grad[i]) continue;
    const Tensor slab = c.runtime.call1("narrow", {grad}, {{"dim", dim}, {"start", int64_t(i)}, {"length", 1}});
    grads[i] = c.runtime.contiguous(c.runtime.call1("squeeze", {slab}, {{"dim", std::vector<int64_t>{dim}}}));
  }
  return grads;
}

// ---- chunk ----------------------------------------------------------------------------

void chunk_infer(InferCall& c) {
  const Shape& shape = c.inputs[0].shape();
  KILN_CHECK(shape.rank() > 0, Status::invalid_argument, "op '", c.op.name, "': cannot chunk a scalar");
  const int dim = normalize_dim(int(c.op.attr_int(c.attrs, "dim")), shape.rank(), c.op.name.c_str());
  const int64_t chunks = c.op.attr_int(c.attrs, "chunks");
  KILN_CHECK(chunks > 0, Status::invalid_argument, "op '", c.op.name, "': chunks must be positive, got ", chunks);
  const int64_t total = shape[dim], size = (total + chunks - 1) / chunks;
  Shape piece = shape;
  for (int64_t start = 0; start < total; start += size) {
    piece[dim] = std::min(size, total - start);
    c.outputs.push_back({piece, c.inputs[0].dtype(), c.device});
  }
  if (total == 0) c.outputs.push_back({shape, c.inputs[0].dtype(), c.device});  // one empty piece, as torch.chunk
}

void chunk_kernel(const KernelCall& c) { run_kernel_of("split", c, c.inputs); }

std::vector<Tensor> chunk_backward(const BackwardCall& c) { return c.runtime.op("split").backward(c); }

}  // namespace

void register_stack_chunk_ops(OpRegistry& r) {
  OpDef stack;
  stack.name = "stack";
  stack.inputs = {{"tensors", false, true}};
  stack.attrs = {attr_int("dim", 0)};
  stack.infer = stack_infer;
  stack.backward = stack_backward;
  stack.accepts_strided = true;
  stack.saves_inputs = stack.saves_outputs = false;
  OpDef chunk;
  chunk.name = "chunk";
  chunk.inputs = {{"input"}};
  chunk.attrs = {attr_required("chunks", AttrType::integer), attr_int("dim", 0)};
  chunk.infer = chunk_infer;
  chunk.backward = chunk_backward;
  chunk.accepts_strided = true;
  chunk.saves_inputs = chunk.saves_outputs = false;
  stack.set_kernel(DeviceType::cpu, kAllDTypes, stack_kernel);
  chunk.set_kernel(DeviceType::cpu, kAllDTypes, chunk_kernel);
#ifdef KILN_WITH_CUDA
  stack.set_kernel(DeviceType::cuda, kAllDTypes, stack_kernel);
  chunk.set_kernel(DeviceType::cuda, kAllDTypes, chunk_kernel);
#endif
  r.add(std::move(stack));
  r.add(std::move(chunk));
}

}  // namespace kiln::shape
