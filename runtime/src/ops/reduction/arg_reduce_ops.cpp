// The reductions that find where the extreme is: max_dim and min_dim (values
// and int64 indices along one dim, torch.max(x, dim) and torch.min(x, dim)),
// and argmax and argmin (indices only; without a dim, into the flattened
// tensor). Ties give the first index; a NaN wins (ordering.hpp).
#include "arg_geometry.hpp"
#include "common.hpp"
#include "families.hpp"
#include "ordering.hpp"

namespace kiln::reduction {
namespace {

void arg_infer(InferCall& c) {
  check_ordered(c, 0);
  const Tensor& in = c.inputs[0];
  const ReduceGeometry g = arg_geometry(c.op, in, c.attrs);
  KILN_CHECK(g.reduced_count > 0, Status::invalid_argument, "op '", c.op.name,
             "': cannot find an extreme among zero elements (input of shape ", to_string(in.shape()), ")");
  if (c.op.attrs[0].type == AttrType::integer) c.outputs.push_back({g.output_shape, in.dtype(), c.device});
  c.outputs.push_back({g.output_shape, DType::i64, c.device});
}

// Writes the index of each output's extreme (counted along the reduced dims
// in row-major order) and, for max_dim/min_dim, its value.
template <bool Largest, bool WithValues, class T>
void arg_kernel(const KernelCall& c) {
  const ReduceGeometry g = arg_geometry(c.op, c.inputs[0], c.attrs);
  const T* x = c.inputs[0].data<T>();
  T* values = WithValues ? c.outputs[0].data<T>() : nullptr;
  int64_t* indices = c.outputs[WithValues ? 1 : 0].data<int64_t>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    int64_t k = 0, best = 0, best_offset = base;
    for_each_reduced(g, base, [&](int64_t i) {
      if (k > 0 && beats<Largest>(order_key(x[i]), order_key(x[best_offset]))) {
        best = k;
        best_offset = i;
      }
      ++k;
    });
    indices[o] = best;
    if constexpr (WithValues) values[o] = x[best_offset];
  });
}

// The gradient goes to the chosen element only (torch.max(x, dim) does not
// split it among ties): gather's backward with the indices as the index.
std::vector<Tensor> extreme_dim_backward(const BackwardCall& c) {
  const Shape& in_shape = c.input_meta[0].shape;
  const int dim = single_dim(c.op, c.attrs, in_shape);
  Tensor grad = c.grad_outputs[0], indices = c.outputs[1];
  if (!c.op.attr_bool(c.attrs, "keepdim") && in_shape.rank() > 0) {
    std::vector<int64_t> kept = dims_of(in_shape);
    kept[size_t(dim)] = 1;
    grad = call_op1(c.runtime, "reshape", {grad}, {{"shape", kept}});
    indices = call_op1(c.runtime, "reshape", {indices}, {{"shape", kept}});
  }
  if (in_shape.rank() == 0) return {grad};
  return {call_op1(c.runtime, "gather_backward", {grad, indices},
                   {{"input_shape", dims_of(in_shape)}, {"dim", int64_t(dim)}})};
}

template <bool Largest, bool WithValues>
void add_arg_op(OpRegistry& r, std::string name) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"input"}};
  op.attrs = {WithValues ? attr_required("dim", AttrType::integer) : attr_ints("dim", {}), attr_bool("keepdim", false)};
  op.infer = arg_infer;
  op.accepts_strided = true;
  if constexpr (WithValues) {
    op.backward = extreme_dim_backward;
    op.saves_inputs = false;
  }
  set_ordered_kernels(op, []<class T>() { return &arg_kernel<Largest, WithValues, T>; });
  r.add(std::move(op));
}

}  // namespace

ReduceGeometry arg_geometry(const OpDef& op, const Tensor& input, const Attrs& attrs) {
  const bool keepdim = op.attr_bool(attrs, "keepdim");
  if (op.attrs[0].type == AttrType::integer)
    return reduce_geometry(op, input.shape(), input.strides(), {op.attr_int(attrs, "dim")}, keepdim);
  const std::vector<int64_t>& dim = op.attr_ints(attrs, "dim");
  KILN_CHECK(dim.size() <= 1, Status::invalid_argument, "op '", op.name,
             "': 'dim' takes at most one dimension (none: the flattened tensor), got ", dim.size());
  return reduce_geometry(op, input.shape(), input.strides(), dim, keepdim);
}

void register_arg_reduce_ops(OpRegistry& r) {
  add_arg_op<true, true>(r, "max_dim");
  add_arg_op<false, true>(r, "min_dim");
  add_arg_op<true, false>(r, "argmax");
  add_arg_op<false, false>(r, "argmin");
}

}  // namespace kiln::reduction
