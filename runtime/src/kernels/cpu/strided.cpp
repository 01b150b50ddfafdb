#include "kiln/kernels/cpu/strided.hpp"

namespace kiln::cpu {

Shape broadcast_strides(const Shape& from, const Shape& from_strides, const Shape& to) {
  Shape out;
  out.resize(to.rank(), 0);
  const int shift = to.rank() - from.rank();
  for (int d = 0; d < from.rank(); ++d) out[d + shift] = from[d] == 1 ? 0 : from_strides[d];
  return out;
}

}  // namespace kiln::cpu
