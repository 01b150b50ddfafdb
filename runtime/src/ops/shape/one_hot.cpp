// one_hot(input; num_classes): i64 class indices [...] -> i64 [..., classes]
// with a 1 at each index, as torch.nn.functional.one_hot; num_classes -1
// takes the largest index + 1. The indices are read on the host first (a
// copy from the GPU, which waits for it) to find that maximum and to check
// every index, then scatter writes the ones on the input's device: an op
// made of other ops, through the hook view ops use.
#include <algorithm>

#include "families.hpp"
#include "kiln/ops/helpers.hpp"

namespace kiln::shape {
namespace {

Tensor one_hot_compose(Runtime& rt, const Tensor& in, const Attrs& attrs, const OpDef& op) {
  KILN_CHECK(in.dtype() == DType::i64, Status::dtype_mismatch, "op '", op.name,
             "': input must hold i64 class indices, got ", dtype_name(in.dtype()));
  KILN_CHECK(in.rank() < kMaxDims, Status::invalid_argument, "op '", op.name, "': indices of rank ", in.rank(),
             " leave no room for the class dimension (at most ", kMaxDims, " dims)");
  int64_t classes = attrs.integer(0);
  KILN_CHECK(classes >= -1, Status::invalid_argument, "op '", op.name,
             "': num_classes must be -1 (the largest index + 1) or at least 0, got ", classes);
  const Tensor dense = rt.contiguous(in);
  const Tensor host = in.device().is_cpu() ? dense : rt.contiguous(rt.call1("to", {dense}, {{"device", "cpu"}}));
  const int64_t* begin = host.data<int64_t>();
  const int64_t* end = begin + host.numel();
  if (classes == -1) {
    KILN_CHECK(begin != end, Status::invalid_argument, "op '", op.name,
               "': num_classes -1 takes the largest index + 1, and there are no indices");
    classes = *std::max_element(begin, end) + 1;
  }
  for (const int64_t* p = begin; p != end; ++p)
    KILN_CHECK(*p >= 0 && *p < classes, Status::invalid_argument, "op '", op.name, "': class index ", *p,
               " is out of range for ", classes, " classes (expected 0 <= index < ", classes, ")");

  Shape out = in.shape(), index_shape = in.shape();
  out.push_back(classes);
  index_shape.push_back(1);
  const Tensor index = dense.view_as(index_shape, contiguous_strides(index_shape), dense.offset());
  const Tensor zeros = rt.full(out, 0.0, DType::i64, in.device());
  const Tensor ones = rt.full(index_shape, 1.0, DType::i64, in.device());
  return rt.call1("scatter", {zeros, index, ones}, {{"dim", -1}});
}

}  // namespace

void register_one_hot_ops(OpRegistry& r) {
  OpDef op;
  op.name = "one_hot";
  op.inputs = {{"input"}};
  op.attrs = {attr_int("num_classes", -1)};
  op.view = one_hot_compose;
  op.accepts_strided = true;
  op.saves_inputs = op.saves_outputs = false;
  r.add(std::move(op));
}

}  // namespace kiln::shape
