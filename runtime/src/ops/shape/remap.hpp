// Ops whose every output element is one input element picked by position, or
// a constant: flip, roll, repeat, pad, tril and triu. Each describes itself
// as a Remap (for every output dim, how an output coordinate finds the input
// coordinate), which the CPU and the CUDA kernels both run through
// source_offset(): written once, so both devices pick the same elements.
// The backward of repeat and pad adds each output gradient into the input
// element it came from, through the same map.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kiln/ops/op_def.hpp"
#include "kiln/shape.hpp"
#include "kiln/util/host_device.hpp"

namespace kiln::shape {

// How one output coordinate o becomes an input coordinate i in [0, size);
// `shift` is subtracted first.
enum class DimRule : uint8_t {
  keep,          // i = o
  flip,          // i = size - 1 - o
  wrap,          // i = (o - shift) mod size (roll; repeat with shift 0)
  fill_outside,  // i = o - shift, the fill value where that is outside
  reflect,       // i = o - shift, mirrored at both ends without repeating the edge
  replicate,     // i = o - shift, clamped to the edge
};

enum class Triangle : uint8_t { none, lower, upper };

struct DimMap {
  DimRule rule = DimRule::keep;
  int64_t size = 1;  // of the input
  int64_t shift = 0;
};

struct Remap {
  int rank = 0;
  int64_t out_sizes[kMaxDims] = {};
  int64_t in_strides[kMaxDims] = {};  // of the dense input, in elements
  DimMap dims[kMaxDims] = {};
  // tril / triu: over the last two dims, keep (row, col) when col - row is
  // at most (lower) or at least (upper) `diagonal`; fill the rest.
  Triangle triangle = Triangle::none;
  int64_t diagonal = 0;

  // The input element of output element `o` (row-major), or -1 for the fill.
  KILN_HOST_DEVICE int64_t source_offset(int64_t o) const {
    int64_t offset = 0, col = 0, row = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = o % out_sizes[d];
      o /= out_sizes[d];
      if (d == rank - 1) col = c;
      if (d == rank - 2) row = c;
      const DimMap& m = dims[d];
      int64_t i = c - m.shift;
      switch (m.rule) {
        case DimRule::keep: i = c; break;
        case DimRule::flip: i = m.size - 1 - c; break;
        case DimRule::wrap: i = ((i % m.size) + m.size) % m.size; break;
        case DimRule::fill_outside:
          if (i < 0 || i >= m.size) return -1;
          break;
        case DimRule::reflect:
          if (i < 0) i = -i;
          if (i >= m.size) i = 2 * (m.size - 1) - i;
          break;
        case DimRule::replicate: i = i < 0 ? 0 : (i >= m.size ? m.size - 1 : i); break;
      }
      offset += i * in_strides[d];
    }
    if (triangle == Triangle::lower && col - row > diagonal) return -1;
    if (triangle == Triangle::upper && col - row < diagonal) return -1;
    return offset;
  }
};

// The map of a call of flip, roll, repeat, pad, tril or triu (or of
// repeat_backward / pad_backward, whose attributes include the forward's)
// on an input of shape `input`; checks the attributes against the shape.
Remap build_remap(const OpDef& op, const Attrs& attrs, const Shape& input);
// The output shape of that call: the map's, except for roll without dims,
// whose map runs over the flattened tensor.
Shape remap_output_shape(const OpDef& op, const Remap& map, const Shape& input);
// The value written where the map has no input element (pad's `value`, 0
// for tril and triu).
double remap_fill_value(const OpDef& op, const Attrs& attrs);

// A fill value as element type T, converted as "full" converts its value.
template <class T>
T fill_as(double value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return from_float<T>(float(value));
  else if constexpr (std::is_same_v<T, bool>) return value != 0.0;
  else return static_cast<T>(value);
}

}  // namespace kiln::shape
