// The shapes of scaled_dot_product_attention, validated once from its inputs
// and attributes; shared by the op, its backward and their kernels.
//   query [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev]
// with the same leading (batch) dims on all three, flattened to B here.
// attn_mask, optional, broadcasts to [..., L, S]: bool keeps where true, a
// floating mask (query's dtype) is added to the scores. is_causal keeps
// key j for query i where j <= i. scale NaN (the default) stands for
// PyTorch's scale=None, 1/sqrt(E); any other value is used as it is, 0
// included. dropout_p in [0, 1) drops each attention weight with that
// probability and scales the kept ones by 1 / (1 - dropout_p).
#pragma once

#include <vector>

#include "kiln/ops/op_def.hpp"

namespace kiln::nn {

enum class AttentionMask : uint8_t { none, keep, add };  // absent, bool, floating

struct AttentionShape {
  int64_t batch, l, s, e, ev;
  double scale;    // the attribute, or 1/sqrt(E) when it is NaN
  double dropout;  // dropout_p
  bool causal;
  AttentionMask mask;
  // Where the mask element of (batch b, query i, key j) lies in the dense
  // mask: mask_batch_offset[b] + i * mask_row_stride + j * mask_col_stride
  // (a stride of 0 along a broadcast dim).
  std::vector<int64_t> mask_batch_offset;
  int64_t mask_row_stride = 0, mask_col_stride = 0;

  Shape output_shape(const Shape& query) const;  // query's with the last dim Ev
  Shape scores_shape(const Shape& query) const;  // query's leading dims, then L, S
  int64_t mask_index(int64_t b, int64_t i, int64_t j) const {
    return mask_batch_offset[size_t(b)] + i * mask_row_stride + j * mask_col_stride;
  }
};

// Checks the inputs ({query, key, value, attn_mask (may be undefined)}) and
// the attributes; throws naming the op, what it got and what it expected.
AttentionShape attention_shape(const OpDef& op, const Attrs& attrs, const Tensor& query, const Tensor& key,
                               const Tensor& value, const Tensor& mask);

// The attributes of the op; its backward's are these, then attn_mask_grad.
std::vector<AttrSpec> attention_attrs();

}  // namespace kiln::nn
