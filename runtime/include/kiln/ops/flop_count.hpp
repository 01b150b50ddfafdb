// FLOPs of the op calls a thread made, from the ops that declare theirs
// (OpDef::flops): a training step reads the count before and after itself
// to know the arithmetic it did, backward included (autograd runs backward
// on the thread that asked for it). Loader workers count on their own
// threads, so their transforms are not charged to the model.
#pragma once

#include "kiln/tensor.hpp"

namespace kiln {

// Since the thread started; only differences mean something.
double flops_counted_on_this_thread();

// The dispatcher's: adds a call's FLOPs.
void count_flops_on_this_thread(double flops);

// Lives while the dispatcher runs the kernel of an op that declares its
// FLOPs: an op its kernel calls in turn (an attention made of matmuls) is
// part of the declared count, and must not be counted again.
class CountedOpScope {
 public:
  CountedOpScope();
  ~CountedOpScope();
  CountedOpScope(const CountedOpScope&) = delete;
  CountedOpScope& operator=(const CountedOpScope&) = delete;
  // False inside another counted op's kernel.
  bool outermost() const { return outermost_; }

 private:
  bool outermost_;
};

// Declared counts of the common shapes of arithmetic: 2 * out * k for a
// product with inner size k (matmul, linear, bmm).
double product_flops(double output_elements, double inner_size);
// A convolution: each element on its output side (the output, or the
// output's gradient; the input of a transposed convolution) meets every
// weight of one of the weight's first-dimension slices.
double convolution_flops(const Tensor& output_side, const Tensor& weight);

}  // namespace kiln
