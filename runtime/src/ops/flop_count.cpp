#include "kiln/ops/flop_count.hpp"

namespace kiln {
namespace {

thread_local double tls_flops = 0.0;
thread_local bool tls_in_counted_op = false;

}  // namespace

double flops_counted_on_this_thread() { return tls_flops; }

void count_flops_on_this_thread(double flops) { tls_flops += flops; }

CountedOpScope::CountedOpScope() : outermost_(!tls_in_counted_op) { tls_in_counted_op = true; }

CountedOpScope::~CountedOpScope() { tls_in_counted_op = !outermost_; }

double product_flops(double output_elements, double inner_size) { return 2.0 * output_elements * inner_size; }

double convolution_flops(const Tensor& output_side, const Tensor& weight) {
  return product_flops(double(output_side.numel()), double(weight.numel()) / double(weight.shape()[0]));
}

}  // namespace kiln
