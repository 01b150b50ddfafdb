#include "ordering.hpp"

#include "kiln/error.hpp"
#include "kiln/shape.hpp"

namespace kiln::reduction {

void check_ordered(const InferCall& c, size_t i) {
  const DType t = c.inputs[i].dtype();
  KILN_CHECK(t != DType::boolean, Status::dtype_mismatch, "op '", c.op.name, "': input ", i,
             " must be a number type (floating or integer), got ", dtype_name(t));
}

int single_dim(const OpDef& op, const Attrs& attrs, const Shape& shape, const char* name) {
  return normalize_dim(int(op.attr_int(attrs, name)), shape.rank(), op.name.c_str());
}

}  // namespace kiln::reduction
