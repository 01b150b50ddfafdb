// Plain-loop matrix product over doubles, the reference for the matmul and
// linear tests: out[batch..., m, n] = sum_k a[batch..., m, k] * b[batch..., k, n],
// with a's and b's batch dims broadcast (right-aligned, size 1 repeats).
#pragma once

#include <vector>

#include "kiln/shape.hpp"

namespace kiln::test {

// Row-major index into an operand of shape `s` for output batch coordinates
// `batch` (of the output's batch rank) and matrix position (row, col).
inline int64_t operand_index(const Shape& s, const std::vector<int64_t>& batch, int64_t row, int64_t col) {
  const int rank = s.rank();
  const int offset = int(batch.size()) - (rank - 2);
  int64_t index = 0;
  for (int d = 0; d < rank - 2; ++d) index = index * s[d] + (s[d] == 1 ? 0 : batch[size_t(d + offset)]);
  return (index * s[rank - 2] + row) * s[rank - 1] + col;
}

inline std::vector<double> reference_matmul(const std::vector<double>& a, const Shape& as, const std::vector<double>& b,
                                            const Shape& bs, const Shape& out) {
  const int rank = out.rank();
  const int64_t m_size = out[rank - 2], n_size = out[rank - 1], k_size = as[as.rank() - 1];
  std::vector<double> result;
  std::vector<int64_t> batch(size_t(rank - 2), 0);
  const int64_t batches = out.numel() / (m_size * n_size);
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi;
    for (int d = rank - 3; d >= 0; --d) {
      batch[size_t(d)] = rest % out[d];
      rest /= out[d];
    }
    for (int64_t m = 0; m < m_size; ++m)
      for (int64_t n = 0; n < n_size; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < k_size; ++k)
          acc += a[size_t(operand_index(as, batch, m, k))] * b[size_t(operand_index(bs, batch, k, n))];
        result.push_back(acc);
      }
  }
  return result;
}

}  // namespace kiln::test
