// sort, argsort and topk along one dimension, as torch.sort, torch.argsort
// and torch.topk: values and int64 indices into that dimension. Sorting is
// stable (ties keep their input order) whatever "stable" says, which is one
// of the orders PyTorch allows for stable=false; topk's sorted=false allows
// any order and gets the sorted one. NaN ranks above every number
// (ordering.hpp). The gradient of the values goes back to where each came
// from: gather's backward with the indices.
#include <algorithm>
#include <numeric>

#include "common.hpp"
#include "families.hpp"
#include "sort_params.hpp"

namespace kiln::reduction {

SortParams sort_params(const OpDef& op, const Shape& shape, const Attrs& attrs) {
  const bool topk = op.attr_index("k") >= 0;
  SortParams p{dim_rows(op, shape, attrs), 0, op.attr_bool(attrs, topk ? "largest" : "descending")};
  p.k = topk ? op.attr_int(attrs, "k") : p.rows.n;
  return p;
}

namespace {

void sort_infer(InferCall& c) {
  check_ordered(c, 0);
  const Tensor& in = c.inputs[0];
  const SortParams p = sort_params(c.op, in.shape(), c.attrs);
  const DimRows& s = p.rows;
  const int64_t k = p.k;
  KILN_CHECK(k >= 0 && k <= s.n, Status::invalid_argument, "op '", c.op.name, "': k = ", k,
             " is out of range for dimension ", s.dim, " of size ", s.n, " (shape ", to_string(in.shape()),
             "; expected 0 to ", s.n, ")");
  Shape out = in.shape();
  if (out.rank() > 0) out[s.dim] = k;
  if (c.op.name != "argsort") c.outputs.push_back({out, in.dtype(), c.device});
  c.outputs.push_back({out, DType::i64, c.device});
}

// Orders each row's positions with a stable sort and writes the first k.
template <bool WithValues, class T>
void sort_kernel(const KernelCall& c) {
  const SortParams p = sort_params(c.op, c.inputs[0].shape(), c.attrs);
  const DimRows& s = p.rows;
  const int64_t k = p.k;
  const bool descending = p.descending;
  const T* x = c.inputs[0].data<T>();
  T* values = WithValues ? c.outputs[0].data<T>() : nullptr;
  int64_t* indices = c.outputs[WithValues ? 1 : 0].data<int64_t>();
  for_row_ranges(c.runtime.thread_pool(), s, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> order(size_t(s.n));
    for (int64_t r = begin; r < end; ++r) {
      const T* row = x + s.base(r);
      const auto key = [&](int64_t i) { return order_key(row[i * s.inner]); };
      std::iota(order.begin(), order.end(), int64_t(0));
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return descending ? ascending_before(key(b), key(a)) : ascending_before(key(a), key(b));
      });
      const int64_t out = s.base(r, k);
      for (int64_t j = 0; j < k; ++j) {
        indices[out + j * s.inner] = order[size_t(j)];
        if constexpr (WithValues) values[out + j * s.inner] = row[order[size_t(j)] * s.inner];
      }
    }
  });
}

std::vector<Tensor> sort_backward(const BackwardCall& c) {
  const Shape& in_shape = c.input_meta[0].shape;
  if (in_shape.rank() == 0) return {c.grad_outputs[0]};
  return {call_op1(c.runtime, "gather_backward", {c.grad_outputs[0], c.outputs[1]},
                   {{"input_shape", dims_of(in_shape)}, {"dim", int64_t(single_dim(c.op, c.attrs, in_shape))}})};
}

template <bool WithValues>
void add_sort_op(OpRegistry& r, std::string name, std::vector<AttrSpec> attrs) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"input"}};
  op.attrs = std::move(attrs);
  op.infer = sort_infer;
  if constexpr (WithValues) {
    op.backward = sort_backward;
    op.saves_inputs = false;
  }
  set_ordered_kernels(op, []<class T>() { return &sort_kernel<WithValues, T>; });
  r.add(std::move(op));
}

}  // namespace

void register_sort_ops(OpRegistry& r) {
  const auto sort_attrs = [] {
    return std::vector<AttrSpec>{attr_int("dim", -1), attr_bool("descending", false), attr_bool("stable", false)};
  };
  add_sort_op<true>(r, "sort", sort_attrs());
  add_sort_op<false>(r, "argsort", sort_attrs());
  add_sort_op<true>(r, "topk", {attr_required("k", AttrType::integer), attr_int("dim", -1), attr_bool("largest", true),
                                attr_bool("sorted", true)});
}

}  // namespace kiln::reduction
