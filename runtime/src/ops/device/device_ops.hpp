// The ops that move tensors between devices; register_device_ops (in
// register.cpp) adds them to a runtime's registry.
#pragma once

namespace kiln {

class OpRegistry;

void register_to_op(OpRegistry& r);  // "to": a contiguous copy on another device

}  // namespace kiln
