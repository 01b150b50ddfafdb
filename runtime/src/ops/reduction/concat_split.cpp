// concat joins tensors along one dimension; split cuts one into chunks along
// a dimension. Each is the other's backward. Both move bits, so one kernel
// per element width serves every dtype, reading strided inputs directly.
#include <numeric>

#include "common.hpp"
#include "families.hpp"
#include "kiln/kernels/cpu/strided.hpp"

namespace kiln::reduction {
namespace {

// Address of element `start` along `dim` of t.
void* at_dim(const Tensor& t, int dim, int64_t start) {
  return static_cast<char*>(t.raw_data()) + start * t.strides()[dim] * int64_t(t.element_size());
}

// ---- concat(inputs...; dim) ---------------------------------------------------

// The dimension to join or cut along; a scalar has none.
int along_dim(const OpDef& op, const Attrs& attrs, const Shape& shape) {
  KILN_CHECK(shape.rank() > 0, Status::invalid_argument, "op '", op.name,
             "': needs tensors of rank 1 or more, got a scalar");
  return normalize_dim(int(op.attr_int(attrs, "dim")), shape.rank(), op.name.c_str());
}

void concat_infer(InferCall& c) {
  KILN_CHECK(!c.inputs.empty(), Status::invalid_argument, "op '", c.op.name, "': needs at least one input");
  check_same_dtype(c);
  const Tensor& first = c.inputs[0];
  const int dim = along_dim(c.op, c.attrs, first.shape());
  Shape out = first.shape();
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    const Shape& s = c.inputs[i].shape();
    bool fits = s.rank() == out.rank();
    for (int d = 0; fits && d < s.rank(); ++d) fits = d == dim || s[d] == out[d];
    KILN_CHECK(fits, Status::shape_mismatch, "op '", c.op.name, "': input ", i, " has shape ", to_string(s),
               " but input 0 has ", to_string(first.shape()), "; all sizes but dimension ", dim, " must agree");
    out[dim] += s[dim];
  }
  c.outputs.push_back({out, first.dtype(), c.device});
}

void concat_kernel(const KernelCall& c) {
  Tensor& out = c.outputs[0];
  const int dim = along_dim(c.op, c.attrs, c.inputs[0].shape());
  int64_t start = 0;
  for (const Tensor& in : c.inputs) {
    cpu::copy_strided(c.runtime.thread_pool(), out.element_size(), in.shape(), in.raw_data(), in.strides(),
                  at_dim(out, dim, start), out.strides());
    start += in.shape()[dim];
  }
}

std::vector<Tensor> concat_backward(const BackwardCall& c) {
  const int dim = along_dim(c.op, c.attrs, c.inputs[0].shape());
  std::vector<Tensor> grads(c.inputs.size());
  int64_t start = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const int64_t length = c.inputs[i].shape()[dim];
    if (c.needs_input_grad[i]) {
      const Tensor part = call_op1(c.runtime, "slice", {c.grad_outputs[0]},
                                   {{"dim", int64_t(dim)}, {"start", start}, {"end", start + length}});
      grads[i] = c.runtime.contiguous(part);
    }
    start += length;
  }
  return grads;
}

// ---- split(input; dim, sizes) -> one output per chunk ----------------------------

// sizes as torch.split: one size means chunks of that size (the last one
// smaller); several must add up to the dimension.
std::vector<int64_t> chunk_sizes(const OpDef& op, const Attrs& attrs, const Shape& shape, int dim) {
  const std::vector<int64_t>& sizes = op.attr_ints(attrs, "sizes");
  const int64_t total = shape[dim];
  KILN_CHECK(!sizes.empty(), Status::invalid_argument, "op '", op.name, "': sizes is empty");
  for (int64_t s : sizes)
    KILN_CHECK(s >= 0, Status::invalid_argument, "op '", op.name, "': chunk size ", s, " is negative");
  if (sizes.size() > 1) {
    const int64_t sum = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
    KILN_CHECK(sum == total, Status::shape_mismatch, "op '", op.name, "': chunk sizes add up to ", sum,
               " but dimension ", dim, " of ", to_string(shape), " has size ", total);
    return sizes;
  }
  const int64_t size = sizes[0];
  KILN_CHECK(size > 0 || total == 0, Status::invalid_argument, "op '", op.name,
             "': chunk size must be positive, got ", size);
  std::vector<int64_t> out;
  for (int64_t start = 0; start < total; start += size) out.push_back(std::min(size, total - start));
  if (out.empty()) out.push_back(0);
  return out;
}

void split_infer(InferCall& c) {
  const Shape& shape = c.inputs[0].shape();
  const int dim = along_dim(c.op, c.attrs, shape);
  for (int64_t size : chunk_sizes(c.op, c.attrs, shape, dim)) {
    Shape chunk = shape;
    chunk[dim] = size;
    c.outputs.push_back({chunk, c.inputs[0].dtype(), c.device});
  }
}

void split_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  const int dim = along_dim(c.op, c.attrs, in.shape());
  int64_t start = 0;
  for (Tensor& out : c.outputs) {
    cpu::copy_strided(c.runtime.thread_pool(), in.element_size(), out.shape(), at_dim(in, dim, start), in.strides(),
                  out.raw_data(), out.strides());
    start += out.shape()[dim];
  }
}

std::vector<Tensor> split_backward(const BackwardCall& c) {
  const int dim = along_dim(c.op, c.attrs, c.grad_outputs[0].shape());
  return {call_op(c.runtime, "concat", c.grad_outputs, {{"dim", int64_t(dim)}}).at(0)};
}

}  // namespace

void register_concat_split_ops(OpRegistry& r) {
  {
    OpDef op;
    op.name = "concat";
    op.inputs = {{"inputs", false, true}};
    op.attrs = {attr_int("dim", 0)};
    op.infer = concat_infer;
    op.backward = concat_backward;
    op.accepts_strided = true;
    op.saves_outputs = false;
    op.set_kernel(DeviceType::cpu, kAllDTypes, concat_kernel);
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "split";
    op.inputs = {{"input"}};
    op.attrs = {attr_int("dim", 0), attr_required("sizes", AttrType::ints)};
    op.infer = split_infer;
    op.backward = split_backward;
    op.accepts_strided = true;
    op.saves_inputs = op.saves_outputs = false;
    op.set_kernel(DeviceType::cpu, kAllDTypes, split_kernel);
    r.add(std::move(op));
  }
}

}  // namespace kiln::reduction
