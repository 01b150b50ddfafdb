// FLOPs of the op calls a thread made, from the ops that declare theirs
// (OpDef::flops): a training step reads the count before and after itself
// to know the arithmetic it did, backward included (autograd runs backward
// on the thread that asked for it). Loader workers count on their own
// threads, so their transforms are not charged to the model.
#pragma once

namespace kiln {

// Since the thread started; only differences mean something.
double flops_counted_on_this_thread();

// The dispatcher's: adds a call's FLOPs.
void count_flops_on_this_thread(double flops);

// Declared counts of the common shapes of arithmetic: 2 * out * k for a
// product with inner size k (matmul, linear), and for a convolution
// 2 * output elements * weight elements per output channel.
double product_flops(double output_elements, double inner_size);

}  // namespace kiln
