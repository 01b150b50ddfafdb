#include "kiln/ops/helpers.hpp"

namespace kiln {

void check_same_dtype(const InferCall& c) {
  const Tensor* first = nullptr;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Tensor& t = c.inputs[i];
    if (!t.defined()) continue;
    if (!first) {
      first = &t;
      continue;
    }
    KILN_CHECK(t.dtype() == first->dtype(), Status::dtype_mismatch, "op '", c.op.name, "': input ", i, " is ",
               dtype_name(t.dtype()), " but input 0 is ", dtype_name(first->dtype()),
               "; inputs must share one dtype (cast first)");
  }
}

void check_floating(const InferCall& c, size_t i) {
  KILN_CHECK(is_floating(c.inputs[i].dtype()), Status::dtype_mismatch, "op '", c.op.name, "': input ", i, " ('",
             c.op.inputs[std::min(i, c.op.inputs.size() - 1)].name, "') must be floating point, got ",
             dtype_name(c.inputs[i].dtype()));
}

void check_rank(const InferCall& c, size_t i, int rank, const char* what) {
  KILN_CHECK(c.inputs[i].rank() == rank, Status::shape_mismatch, "op '", c.op.name, "': input ", i, " ('",
             c.op.inputs[std::min(i, c.op.inputs.size() - 1)].name, "') must be ", what, " (rank ", rank,
             "), got shape ", to_string(c.inputs[i].shape()));
}

Tensor sum_to(Runtime& rt, const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const OpDef& op = rt.op("sum_to");
  return rt.call1(op, {grad}, op.make_attrs({{"shape", std::vector<int64_t>(shape.begin(), shape.end())}}));
}

Shape shape_from_attr(const OpDef& op, const std::vector<int64_t>& dims, const char* what) {
  KILN_CHECK(dims.size() <= size_t(kMaxDims), Status::invalid_argument, "op '", op.name, "': ", what, " has ",
             dims.size(), " dimensions; at most ", kMaxDims, " are supported");
  for (int64_t d : dims)
    KILN_CHECK(d >= 0, Status::invalid_argument, "op '", op.name, "': ", what, " has a negative dimension");
  return Shape(std::span<const int64_t>(dims));
}

}  // namespace kiln
