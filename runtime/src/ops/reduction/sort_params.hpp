// What sort, argsort and topk are asked for, read from their attributes;
// shared by their CPU and CUDA kernels.
#pragma once

#include "dim_rows.hpp"

namespace kiln::reduction {

struct SortParams {
  DimRows rows;     // along the sorted dim
  int64_t k = 0;    // elements kept per row: topk's k, else the whole row
  bool descending;  // topk's largest, sort's and argsort's descending
};

SortParams sort_params(const OpDef& op, const Shape& shape, const Attrs& attrs);

}  // namespace kiln::reduction
