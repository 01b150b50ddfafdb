// Reading back attribute values written as kiln's listings write them
// (kiln/ops/attr_text.hpp): 2, 0.5, inf, nan, true, [1, -1], [0.5, 2],
// "mean", f32. The op's schema says which type to read.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/ops/op_def.hpp"

namespace kiln::test {

// Throws kiln::Error(invalid_argument) naming the text and the type expected.
AttrValue parse_attr_value(std::string_view text, AttrType type);

// The attributes of a call of `op` from (name, text) pairs, defaults filled
// in; an attribute the schema does not have is an error naming it.
Attrs parse_attrs(const OpDef& op, const std::vector<std::pair<std::string, std::string>>& given);

}  // namespace kiln::test
