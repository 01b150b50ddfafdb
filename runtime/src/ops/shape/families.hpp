// The groups of ops this folder registers; register.cpp calls each in turn.
#pragma once

#include "kiln/ops/registry.hpp"

namespace kiln::shape {

void register_view_ops(OpRegistry& r);         // squeeze, unsqueeze, flatten, narrow
void register_remap_ops(OpRegistry& r);        // flip, roll, repeat, pad, tril, triu
void register_masked_fill_ops(OpRegistry& r);  // masked_fill

}  // namespace kiln::shape
