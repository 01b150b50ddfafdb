#include "ops/torch/known_differences.hpp"

namespace kiln::test {
namespace {

constexpr KnownDifference kDifferences[] = {
    {"matmul", "vector @ matrix", "kiln's matmul takes operands of rank 2 or more and refuses 1-D ones with a message"},
    {"pow", "edge values, exponent 0.5",
     "PyTorch computes x ** 0.5 as sqrt(x), so (-inf) ** 0.5 is NaN; kiln follows C's pow and gives inf"},
    {"relu", "edge values, f32", "f32 runs oneDNN's relu, which gives 0 for NaN (f64 keeps NaN, as PyTorch does)"},
    {"gelu", "edge values, f32", "PyTorch's f32 gelu gives NaN for inf (its f64 gives inf, as kiln does in both)"},
};

}  // namespace

std::span<const KnownDifference> known_differences() { return kDifferences; }

const KnownDifference* find_known_difference(std::string_view op, std::string_view label) {
  for (const KnownDifference& d : kDifferences)
    if (d.op == op && d.label == label) return &d;
  return nullptr;
}

}  // namespace kiln::test
