// The pooling ops, registered by register_pool_ops (pool_register.cpp).
#pragma once

namespace kiln {
class OpRegistry;
}

namespace kiln::nn {

void register_max_pool_ops(OpRegistry& r);  // max_pool2d, max_pool2d_backward
void register_avg_pool_ops(OpRegistry& r);  // avg_pool2d, adaptive_avg_pool2d and their backward ops
void register_pool1d_ops(OpRegistry& r);    // max_pool1d, avg_pool1d (after the 2-d pools, whose kernels they run)

}  // namespace kiln::nn
