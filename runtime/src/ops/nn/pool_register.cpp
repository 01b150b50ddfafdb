#include "nn_ops.hpp"
#include "pool_ops.hpp"

namespace kiln {

void register_pool_ops(OpRegistry& r) {
  nn::register_max_pool_ops(r);
  nn::register_avg_pool_ops(r);
  nn::register_pool1d_ops(r);
}

}  // namespace kiln
