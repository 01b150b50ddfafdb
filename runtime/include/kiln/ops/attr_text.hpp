// Attribute values as text, for listings of ops (kiln_op_attr_get, `kiln ops`).
#pragma once

#include <string>

#include "kiln/ops/attrs.hpp"

namespace kiln {

// A value as listings show it: 2, 0.5, true, [1, 1], "mean", f32. Reals take
// the shortest text that reads back as the same double.
std::string attr_value_text(const AttrValue& value);

}  // namespace kiln
