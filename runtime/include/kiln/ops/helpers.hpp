// Small pieces shared by op definitions: schema building, common checks with
// messages that name the op, and the reduction of a broadcast gradient.
#pragma once

#include <string>
#include <vector>

#include "kiln/error.hpp"
#include "kiln/ops/op_def.hpp"
#include "kiln/runtime.hpp"

namespace kiln {

// AttrSpec shorthands for schemas.
inline AttrSpec attr_int(std::string name, int64_t def) { return {std::move(name), AttrType::integer, def}; }
inline AttrSpec attr_real(std::string name, double def) { return {std::move(name), AttrType::real, def}; }
inline AttrSpec attr_bool(std::string name, bool def) { return {std::move(name), AttrType::boolean, def}; }
inline AttrSpec attr_ints(std::string name, std::vector<int64_t> def) {
  return {std::move(name), AttrType::ints, std::move(def)};
}
inline AttrSpec attr_string(std::string name, std::string def) {
  return {std::move(name), AttrType::string, std::move(def)};
}
inline AttrSpec attr_dtype(std::string name, DType def) { return {std::move(name), AttrType::dtype, def}; }
inline AttrSpec attr_required(std::string name, AttrType type) { return {std::move(name), type, int64_t(0), true}; }

// Throws dtype_mismatch unless every defined input has the dtype of input 0.
void check_same_dtype(const InferCall& c);
// Throws dtype_mismatch unless input i is floating point.
void check_floating(const InferCall& c, size_t i);
// Throws shape_mismatch unless input i has the given rank.
void check_rank(const InferCall& c, size_t i, int rank, const char* what);

// The gradient of a broadcast operand: `grad` summed down to `shape`.
// Returns grad itself when the shapes already agree.
Tensor sum_to(Runtime& rt, const Tensor& grad, const Shape& shape);

// Shape from an integer-list attribute, checked to be non-negative.
Shape shape_from_attr(const OpDef& op, const std::vector<int64_t>& dims, const char* what);

}  // namespace kiln
