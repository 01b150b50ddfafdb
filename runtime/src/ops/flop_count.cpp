#include "kiln/ops/flop_count.hpp"

namespace kiln {
namespace {

thread_local double tls_flops = 0.0;

}  // namespace

double flops_counted_on_this_thread() { return tls_flops; }

void count_flops_on_this_thread(double flops) { tls_flops += flops; }

double product_flops(double output_elements, double inner_size) { return 2.0 * output_elements * inner_size; }

}  // namespace kiln
