#include "reduce_geometry.hpp"

#include "kiln/error.hpp"

namespace kiln::reduction {

ReduceGeometry reduce_geometry(const OpDef& op, const Shape& shape, const Shape& strides,
                               const std::vector<int64_t>& dims, bool keepdim) {
  const int rank = shape.rank();
  bool reduced[kMaxDims] = {};
  for (int64_t d : dims) {
    const int i = normalize_dim(int(d), rank, op.name.c_str());
    KILN_CHECK(!reduced[i], Status::invalid_argument, "op '", op.name, "': dimension ", d,
               " appears more than once in dims for a tensor of shape ", to_string(shape));
    reduced[i] = true;
  }
  ReduceGeometry g;
  for (int i = 0; i < rank; ++i) {
    const bool r = dims.empty() || reduced[i];
    if (r) {
      g.reduced_shape.push_back(shape[i]);
      g.reduced_strides.push_back(strides[i]);
      g.reduced_count *= shape[i];
      if (keepdim) g.output_shape.push_back(1);
    } else {
      g.kept_shape.push_back(shape[i]);
      g.kept_strides.push_back(strides[i]);
      g.output_shape.push_back(shape[i]);
    }
  }
  // The trailing reduced dims with row-major strides (dims of size 1 can
  // have any stride) make one run; dense when they are all of them.
  int first_of_run = g.reduced_shape.rank();
  while (first_of_run > 0) {
    const int i = first_of_run - 1;
    if (g.reduced_shape[i] != 1 && g.reduced_strides[i] != g.inner_run) break;
    g.inner_run *= g.reduced_shape[i];
    first_of_run = i;
  }
  g.reduced_dense = first_of_run == 0;
  for (int i = 0; i < first_of_run; ++i) {
    g.outer_shape.push_back(g.reduced_shape[i]);
    g.outer_strides.push_back(g.reduced_strides[i]);
  }
  const int64_t kept = g.kept_shape.numel();
  if (kept > 1 && g.kept_strides == contiguous_strides(g.kept_shape)) {
    const Shape row_strides = contiguous_strides(g.reduced_shape);
    bool rows = true;  // the reduced dims step over whole rows of the kept ones
    for (int i = 0; i < g.reduced_shape.rank(); ++i)
      rows = rows && (g.reduced_shape[i] == 1 || g.reduced_strides[i] == row_strides[i] * kept);
    if (rows) g.columns = kept;
  }
  return g;
}

ReduceGeometry reduce_geometry(const OpDef& op, const Shape& shape, const Shape& strides, const Attrs& attrs) {
  return reduce_geometry(op, shape, strides, op.attr_ints(attrs, "dims"), op.attr_bool(attrs, "keepdim"));
}

}  // namespace kiln::reduction
