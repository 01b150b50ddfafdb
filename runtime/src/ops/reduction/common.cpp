#include "common.hpp"

namespace kiln::reduction {

std::vector<Tensor> call_op(Runtime& rt, std::string_view name, std::span<const Tensor> inputs, NamedAttrs attrs) {
  const OpDef& op = rt.op(name);
  return rt.call(op, inputs, op.make_attrs(attrs));
}

void check_index_dtype(const InferCall& c, size_t i) {
  const DType t = c.inputs[i].dtype();
  KILN_CHECK(t == DType::i64 || t == DType::i32, Status::dtype_mismatch, "op '", c.op.name, "': input ", i, " ('",
             c.op.inputs[std::min(i, c.op.inputs.size() - 1)].name, "') must hold indices (i64 or i32), got ",
             dtype_name(t));
}

LossReduction parse_loss_reduction(const OpDef& op, const Attrs& attrs) {
  const std::string& r = op.attr_string(attrs, "reduction");
  if (r == "mean") return LossReduction::mean;
  if (r == "sum") return LossReduction::sum;
  if (r == "none") return LossReduction::none;
  throw_error(Status::invalid_argument,
              str_cat("op '", op.name, "': unknown reduction '", r, "' (expected mean, sum or none)"));
}

Shape loss_output_shape(LossReduction r, const Shape& elements) {
  return r == LossReduction::none ? elements : Shape{};
}

}  // namespace kiln::reduction
