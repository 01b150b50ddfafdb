#include "attention_shape.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/ops/helpers.hpp"

namespace kiln::nn {
namespace {

// The dims before the last two.
Shape leading_dims(const Shape& s) {
  Shape b = s;
  b.resize(s.rank() - 2);
  return b;
}

// The mask's strides against [batch dims..., L, S] (0 where it broadcasts),
// checked: each of its dims, aligned from the right, is 1 or the target's.
Shape mask_strides(const OpDef& op, const Shape& mask, const Shape& target) {
  KILN_CHECK(mask.rank() <= target.rank(), Status::shape_mismatch, "op '", op.name, "': attn_mask ",
             to_string(mask), " has more dims than the scores ", to_string(target));
  const Shape dense = contiguous_strides(mask);
  Shape strides;
  strides.resize(target.rank(), 0);
  const int skip = target.rank() - mask.rank();
  for (int d = 0; d < mask.rank(); ++d) {
    KILN_CHECK(mask[d] == target[skip + d] || mask[d] == 1, Status::shape_mismatch, "op '", op.name,
               "': attn_mask ", to_string(mask), " does not broadcast to the scores [..., L, S] = ", to_string(target));
    if (mask[d] != 1) strides[skip + d] = dense[d];
  }
  return strides;
}

}  // namespace

std::vector<AttrSpec> attention_attrs() {
  // A NaN scale is PyTorch's scale=None: every real value, 0 included, is a
  // scale someone may ask for.
  return {attr_real("dropout_p", 0.0), attr_bool("is_causal", false),
          attr_real("scale", std::numeric_limits<double>::quiet_NaN())};
}

AttentionShape attention_shape(const OpDef& op, const Attrs& attrs, const Tensor& query, const Tensor& key,
                               const Tensor& value, const Tensor& mask) {
  const Shape &q = query.shape(), &k = key.shape(), &v = value.shape();
  KILN_CHECK(q.rank() >= 2 && q.rank() == k.rank() && q.rank() == v.rank(), Status::shape_mismatch, "op '", op.name,
             "': query [..., L, E], key [..., S, E] and value [..., S, Ev] must have one rank, 2 or more; got query ",
             to_string(q), ", key ", to_string(k), ", value ", to_string(v));
  const int r = q.rank();
  KILN_CHECK(leading_dims(q) == leading_dims(k) && leading_dims(q) == leading_dims(v), Status::shape_mismatch, "op '",
             op.name, "': query ", to_string(q), ", key ", to_string(k), " and value ", to_string(v),
             " must have the same leading (batch) dims");
  KILN_CHECK(q[r - 1] == k[r - 1], Status::shape_mismatch, "op '", op.name, "': query ", to_string(q), " and key ",
             to_string(k), " must have the same last dim E");
  KILN_CHECK(k[r - 2] == v[r - 2], Status::shape_mismatch, "op '", op.name, "': key ", to_string(k), " and value ",
             to_string(v), " must have the same number of positions S");
  AttentionShape s;
  s.dropout = op.attr_real(attrs, "dropout_p");
  KILN_CHECK(s.dropout >= 0.0 && s.dropout < 1.0, Status::invalid_argument, "op '", op.name,
             "': dropout_p must be in [0, 1), got ", s.dropout);
  s.batch = leading_dims(q).numel();
  s.l = q[r - 2], s.s = k[r - 2], s.e = q[r - 1], s.ev = v[r - 1];
  const double scale = op.attr_real(attrs, "scale");
  KILN_CHECK(!std::isinf(scale), Status::invalid_argument, "op '", op.name,
             "': scale must be finite (or NaN, the default, for 1/sqrt(E)), got ", scale);
  s.scale = std::isnan(scale) ? 1.0 / std::sqrt(double(std::max<int64_t>(s.e, 1))) : scale;
  s.causal = op.attr_bool(attrs, "is_causal");
  s.mask = AttentionMask::none;
  if (!mask.defined()) return s;
  KILN_CHECK(!s.causal, Status::invalid_argument, "op '", op.name,
             "': give either attn_mask or is_causal, not both (as PyTorch)");
  KILN_CHECK(mask.dtype() == DType::boolean || mask.dtype() == query.dtype(), Status::dtype_mismatch, "op '",
             op.name, "': attn_mask must be bool (keep where true) or ", dtype_name(query.dtype()),
             " like query (added to the scores), got ", dtype_name(mask.dtype()));
  s.mask = mask.dtype() == DType::boolean ? AttentionMask::keep : AttentionMask::add;
  const Shape strides = mask_strides(op, mask.shape(), s.scores_shape(q));
  s.mask_row_stride = strides[r - 2];
  s.mask_col_stride = strides[r - 1];
  // Each flattened batch index, split into its coordinates from the last
  // batch dim backwards, gives its offset.
  s.mask_batch_offset.resize(size_t(s.batch));
  for (int64_t b = 0; b < s.batch; ++b) {
    int64_t rest = b, offset = 0;
    for (int d = r - 2; d-- > 0;) {
      offset += (rest % q[d]) * strides[d];
      rest /= q[d];
    }
    s.mask_batch_offset[size_t(b)] = offset;
  }
  return s;
}

Shape AttentionShape::output_shape(const Shape& query) const {
  Shape out = query;
  out[out.rank() - 1] = ev;
  return out;
}

Shape AttentionShape::scores_shape(const Shape& query) const {
  Shape scores = leading_dims(query);
  scores.push_back(l);
  scores.push_back(s);
  return scores;
}

}  // namespace kiln::nn
