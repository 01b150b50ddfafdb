#include "kiln/kernels/cpu/strided.hpp"

#include <cstring>

namespace kiln::cpu {

Shape broadcast_strides(const Shape& from, const Shape& from_strides, const Shape& to) {
  Shape out;
  out.resize(to.rank(), 0);
  const int shift = to.rank() - from.rank();
  for (int d = 0; d < from.rank(); ++d) out[d + shift] = from[d] == 1 ? 0 : from_strides[d];
  return out;
}

namespace {

// The same walk over fewer dims: size-1 dims dropped, and each dim merged
// into the one before it where both layouts step over it whole. Longer
// runs, fewer odometer steps.
void coalesce(Shape& shape, Shape& a, Shape& b) {
  Shape s, sa, sb;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] == 1) continue;
    const int last = s.rank() - 1;
    if (last >= 0 && sa[last] == a[d] * shape[d] && sb[last] == b[d] * shape[d]) {
      s[last] *= shape[d];
      sa[last] = a[d];
      sb[last] = b[d];
      continue;
    }
    s.push_back(shape[d]);
    sa.push_back(a[d]);
    sb.push_back(b[d]);
  }
  shape = s;
  a = sa;
  b = sb;
}

template <class Word>
void copy_words(ThreadPool& pool, const Shape& shape, const Word* src, const Shape& src_strides, Word* dst,
                const Shape& dst_strides) {
  const int last = shape.rank() - 1;
  const int64_t step_src = last >= 0 ? src_strides[last] : 1, step_dst = last >= 0 ? dst_strides[last] : 1;
  pool.parallel_for(shape.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
    for_each_runs<2>(shape, {src_strides, dst_strides}, begin, end,
                     [&](int64_t, const std::array<int64_t, 2>& off, int64_t run) {
      const int64_t from = off[0], to = off[1];
      if (step_src == 1 && step_dst == 1) {
        std::memcpy(dst + to, src + from, size_t(run) * sizeof(Word));
        return;
      }
      for (int64_t k = 0; k < run; ++k) dst[to + k * step_dst] = src[from + k * step_src];
    });
  });
}

}  // namespace

void copy_strided(ThreadPool& pool, size_t width, const Shape& shape, const void* src, const Shape& src_strides,
                  void* dst, const Shape& dst_strides) {
  Shape s = shape, sa = src_strides, sb = dst_strides;
  coalesce(s, sa, sb);
  switch (width) {
    case 1:
      copy_words(pool, s, static_cast<const uint8_t*>(src), sa, static_cast<uint8_t*>(dst), sb);
      break;
    case 2:
      copy_words(pool, s, static_cast<const uint16_t*>(src), sa, static_cast<uint16_t*>(dst), sb);
      break;
    case 4:
      copy_words(pool, s, static_cast<const uint32_t*>(src), sa, static_cast<uint32_t*>(dst), sb);
      break;
    default:
      copy_words(pool, s, static_cast<const uint64_t*>(src), sa, static_cast<uint64_t*>(dst), sb);
      break;
  }
}

}  // namespace kiln::cpu
