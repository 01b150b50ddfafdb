// The vector loops of Winograd's F(4x4, 3x3) and F(4x4, 5x5)
// (conv_winograd_kernels.hpp): every transform runs eight channels at a
// time (the filters' sixteen), each product keeps a 6 x 16 block of its
// result in twelve accumulators while the shared operand streams past, and
// the layout copies move 8x8 blocks of channels and columns, transposed in
// registers. Compiled for AVX2 with FMA, which the driver checks for.
#include "conv_winograd_kernels.hpp"

#include <algorithm>
#include <cstring>

#include "kiln/kernels/cpu/block_product.hpp"
#include "kiln/kernels/cpu/lanes8.hpp"

namespace kiln::nn::winograd {
namespace {

using cpu::block_product;
using cpu::Lanes8;
using cpu::load8;
using cpu::over_row_blocks;
using cpu::store8;

// Sixteen floats (two AVX2 vectors): the filter transforms' lanes, one per
// output channel of a product block.
typedef float Lanes16 __attribute__((vector_size(64)));

// Image n and the top-left output (y0, x0) of tile `index`.
struct TileAt {
  int64_t n, y0, x0;
};
TileAt tile_at(const Tiling& t, int64_t index) {
  const int64_t tiles_w = t.tiles_w(), tiles_h = t.tiles_h();
  const int64_t rest = index / tiles_w;
  return {rest / tiles_h, kTile * (rest % tiles_h), kTile * (index % tiles_w)};
}

// The extra rows of a chunk's transforms [P][rows][channels] are zero, so
// they add nothing to a weight gradient.
void zero_extra_rows(const Chunk& c, int64_t channels, float* v) {
  if (c.rows == c.count) return;
  for (int p = 0; p < c.positions; ++p)
    std::memset(v + p * c.position_stride(channels) + c.count * channels, 0,
                size_t((c.rows - c.count) * channels) * sizeof(float));
}

// A scheme's one-dimensional transforms, on values `step` apart (`in_step`
// and `out_step` where input and output differ); the two-dimensional ones
// apply them down the columns, then along the rows. A^T's rows are the
// powers 0 .. 3 of the points (infinity's column a one in the last row),
// G's rows the powers 0 .. taps - 1 over the interpolation's denominators
// (infinity's row picks the last tap), B^T's rows the coefficients of the
// products of (x - point) over all points but one.

// t[at] = a + b and t[at + step] = a - b: the transforms' rows for a point
// and its negative.
template <class V>
[[gnu::always_inline]] inline void sum_and_difference(const V& a, const V& b, V* t, int at, int step) {
  t[at] = a + b;
  t[at + step] = a - b;
}

// F(4x4, 3x3): points 0, 1, -1, 2, -2 and infinity; denominators 1/4, -1/6,
// -1/6, 1/24, 1/24.
struct ThreeTaps {
  static constexpr int kTaps = 3, kPatch = patch_of(kTaps), kPositions = kPatch * kPatch;

  // B^T (six inputs):
  template <class V>
  [[gnu::always_inline]] static void input_1d(const V* d, int step, V* t) {
    const V a = d[4 * step] - 4.0f * d[2 * step], b = d[3 * step] - 4.0f * d[step];
    const V c = d[4 * step] - d[2 * step], e = 2.0f * (d[3 * step] - d[step]);
    t[0] = 4.0f * d[0] - 5.0f * d[2 * step] + d[4 * step];
    sum_and_difference(a, b, t, step, step);
    sum_and_difference(c, e, t, 3 * step, step);
    t[5 * step] = 4.0f * d[step] - 5.0f * d[3 * step] + d[5 * step];
  }
  // A^T (six products to four outputs):
  template <class V>
  [[gnu::always_inline]] static void output_1d(const V* m, int in_step, V* y, int out_step) {
    const V p = m[in_step] + m[2 * in_step], q = m[in_step] - m[2 * in_step];
    const V r = m[3 * in_step] + m[4 * in_step], s = m[3 * in_step] - m[4 * in_step];
    y[0] = m[0] + p + r;
    y[out_step] = q + 2.0f * s;
    y[2 * out_step] = p + 4.0f * r;
    y[3 * out_step] = q + 8.0f * s + m[5 * in_step];
  }
  // A (four output gradients to six):
  template <class V>
  [[gnu::always_inline]] static void grad_output_1d(const V* e, int in_step, V* h, int out_step) {
    const V even = e[0] + e[2 * in_step], odd = e[in_step] + e[3 * in_step];
    const V even4 = e[0] + 4.0f * e[2 * in_step], odd2 = 2.0f * e[in_step] + 8.0f * e[3 * in_step];
    h[0] = e[0];
    sum_and_difference(even, odd, h, out_step, out_step);
    sum_and_difference(even4, odd2, h, 3 * out_step, out_step);
    h[5 * out_step] = e[3 * in_step];
  }
  // G (three filter taps to six):
  template <class V>
  [[gnu::always_inline]] static void filter_1d(const V* g, int in_step, V* u, int out_step) {
    const V sum = g[0] + g[2 * in_step], middle = g[in_step];
    u[0] = 0.25f * g[0];
    u[out_step] = (-1.0f / 6) * (sum + middle);
    u[2 * out_step] = (-1.0f / 6) * (sum - middle);
    const V quarter = (1.0f / 24) * g[0] + (1.0f / 6) * g[2 * in_step];
    u[3 * out_step] = quarter + (1.0f / 12) * middle;
    u[4 * out_step] = quarter - (1.0f / 12) * middle;
    u[5 * out_step] = g[2 * in_step];
  }
  // G^T (six products to three filter taps):
  template <class V>
  [[gnu::always_inline]] static void filter_grad_1d(const V* h, int in_step, V* g, int out_step) {
    const V sum12 = h[in_step] + h[2 * in_step], dif12 = h[2 * in_step] - h[in_step];
    const V sum34 = h[3 * in_step] + h[4 * in_step], dif34 = h[3 * in_step] - h[4 * in_step];
    g[0] = 0.25f * h[0] - (1.0f / 6) * sum12 + (1.0f / 24) * sum34;
    g[out_step] = (1.0f / 6) * dif12 + (1.0f / 12) * dif34;
    g[2 * out_step] = (1.0f / 6) * (sum34 - sum12) + h[5 * in_step];
  }
};

// F(4x4, 5x5): points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity; denominators
// 1 (B^T's first row and G's taken with the opposite sign), -2/9, -2/9,
// 1/90, 1/90, 32/45, 32/45.
struct FiveTaps {
  static constexpr int kTaps = 5, kPatch = patch_of(kTaps), kPositions = kPatch * kPatch;

  // B^T (eight inputs):
  template <class V>
  [[gnu::always_inline]] static void input_1d(const V* d, int step, V* t) {
    const V d1 = d[step], d2 = d[2 * step], d3 = d[3 * step], d4 = d[4 * step], d5 = d[5 * step];
    const V d6 = d[6 * step];
    const V even1 = d2 + d6 - 4.25f * d4, odd1 = d1 + d5 - 4.25f * d3;
    const V even2 = 0.25f * d2 - 1.25f * d4 + d6, odd2 = 0.5f * d1 - 2.5f * d3 + 2.0f * d5;
    const V even3 = 4.0f * d2 - 5.0f * d4 + d6, odd3 = 2.0f * d1 - 2.5f * d3 + 0.5f * d5;
    t[0] = d[0] - d6 + 5.25f * (d4 - d2);
    sum_and_difference(even1, odd1, t, step, step);
    sum_and_difference(even2, odd2, t, 3 * step, step);
    sum_and_difference(even3, odd3, t, 5 * step, step);
    t[7 * step] = d[7 * step] - d1 + 5.25f * (d3 - d5);
  }
  // A^T (eight products to four outputs):
  template <class V>
  [[gnu::always_inline]] static void output_1d(const V* m, int in_step, V* y, int out_step) {
    const V sum12 = m[in_step] + m[2 * in_step], dif12 = m[in_step] - m[2 * in_step];
    const V sum34 = m[3 * in_step] + m[4 * in_step], dif34 = m[3 * in_step] - m[4 * in_step];
    const V sum56 = m[5 * in_step] + m[6 * in_step], dif56 = m[5 * in_step] - m[6 * in_step];
    y[0] = m[0] + sum12 + sum34 + sum56;
    y[out_step] = dif12 + 2.0f * dif34 + 0.5f * dif56;
    y[2 * out_step] = sum12 + 4.0f * sum34 + 0.25f * sum56;
    y[3 * out_step] = dif12 + 8.0f * dif34 + 0.125f * dif56 + m[7 * in_step];
  }
  // A (four output gradients to eight):
  template <class V>
  [[gnu::always_inline]] static void grad_output_1d(const V* e, int in_step, V* h, int out_step) {
    const V e0 = e[0], e1 = e[in_step], e2 = e[2 * in_step], e3 = e[3 * in_step];
    const V even = e0 + e2, odd = e1 + e3;
    const V even4 = e0 + 4.0f * e2, odd2 = 2.0f * e1 + 8.0f * e3;
    const V even_quarter = e0 + 0.25f * e2, odd_half = 0.5f * e1 + 0.125f * e3;
    h[0] = e0;
    sum_and_difference(even, odd, h, out_step, out_step);
    sum_and_difference(even4, odd2, h, 3 * out_step, out_step);
    sum_and_difference(even_quarter, odd_half, h, 5 * out_step, out_step);
    h[7 * out_step] = e3;
  }
  // G (five filter taps to eight):
  template <class V>
  [[gnu::always_inline]] static void filter_1d(const V* g, int in_step, V* u, int out_step) {
    const V g0 = g[0], g1 = g[in_step], g2 = g[2 * in_step], g3 = g[3 * in_step], g4 = g[4 * in_step];
    const V even = g0 + g2 + g4, odd = g1 + g3;
    const V even4 = g0 + 4.0f * g2 + 16.0f * g4, odd2 = 2.0f * g1 + 8.0f * g3;
    const V even_half = 16.0f * g0 + 4.0f * g2 + g4, odd_half = 8.0f * g1 + 2.0f * g3;
    u[0] = g0;
    u[out_step] = (-2.0f / 9) * (even + odd);
    u[2 * out_step] = (-2.0f / 9) * (even - odd);
    u[3 * out_step] = (1.0f / 90) * (even4 + odd2);
    u[4 * out_step] = (1.0f / 90) * (even4 - odd2);
    u[5 * out_step] = (2.0f / 45) * (even_half + odd_half);
    u[6 * out_step] = (2.0f / 45) * (even_half - odd_half);
    u[7 * out_step] = g4;
  }
  // G^T (eight products to five filter taps):
  template <class V>
  [[gnu::always_inline]] static void filter_grad_1d(const V* h, int in_step, V* g, int out_step) {
    const V sum12 = h[in_step] + h[2 * in_step], dif12 = h[in_step] - h[2 * in_step];
    const V sum34 = h[3 * in_step] + h[4 * in_step], dif34 = h[3 * in_step] - h[4 * in_step];
    const V sum56 = h[5 * in_step] + h[6 * in_step], dif56 = h[5 * in_step] - h[6 * in_step];
    g[0] = h[0] - (2.0f / 9) * sum12 + (1.0f / 90) * sum34 + (32.0f / 45) * sum56;
    g[out_step] = (-2.0f / 9) * dif12 + (1.0f / 45) * dif34 + (16.0f / 45) * dif56;
    g[2 * out_step] = (-2.0f / 9) * sum12 + (2.0f / 45) * sum34 + (8.0f / 45) * sum56;
    g[3 * out_step] = (-2.0f / 9) * dif12 + (4.0f / 45) * dif34 + (4.0f / 45) * dif56;
    g[4 * out_step] = (-2.0f / 9) * sum12 + (8.0f / 45) * sum34 + (2.0f / 45) * sum56 + h[7 * in_step];
  }
};

// m = m^T for an 8x8 block held as eight rows.
[[gnu::always_inline]] inline void transpose8(Lanes8 (&m)[8]) {
  Lanes8 pairs[8], quads[8];
  for (int k = 0; k < 8; k += 2) {
    pairs[k] = __builtin_shufflevector(m[k], m[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    pairs[k + 1] = __builtin_shufflevector(m[k], m[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int k = 0; k < 8; k += 4)
    for (int half = 0; half < 2; ++half) {
      quads[k + 2 * half] = __builtin_shufflevector(pairs[k + half], pairs[k + 2 + half], 0, 1, 8, 9, 4, 5, 12, 13);
      quads[k + 2 * half + 1] =
          __builtin_shufflevector(pairs[k + half], pairs[k + 2 + half], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int k = 0; k < 4; ++k) {
    m[k] = __builtin_shufflevector(quads[k], quads[k + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    m[k + 4] = __builtin_shufflevector(quads[k], quads[k + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// The first channel or column of 8x8 block `start` of a row of `size`
// (>= 8): the last block is moved back to end at the edge, so it overlaps
// the one before and writes some values twice, alike.
inline int64_t block_start(int64_t start, int64_t size) { return std::min(start, size - 8); }

// The scheme's transforms of whole chunks (and of filters), which the
// functions of the header choose between by the filters' taps.
template <class S>
KILN_AVX2_FMA void input_tiles(const Tiling& t, const float* x, int64_t channels, const float* zeros,
                                   const Chunk& c, float* v) {
  constexpr int kPatch = S::kPatch, kPositions = S::kPositions;
  const int64_t plane = c.position_stride(channels);
  for (int64_t r = 0; r < c.count; ++r) {
    const TileAt at = tile_at(t, c.first + r);
    const float* patch[kPositions];
    for (int i = 0; i < kPatch; ++i)
      for (int j = 0; j < kPatch; ++j) {
        const int64_t y = at.y0 - t.pad_h + i, x_ = at.x0 - t.pad_w + j;
        const bool inside = y >= 0 && y < t.h && x_ >= 0 && x_ < t.w;
        patch[i * kPatch + j] = inside ? x + ((at.n * t.h + y) * t.w + x_) * channels : zeros;
      }
    float* out = v + r * channels;
    for (int64_t ch = 0; ch < channels; ch += 8) {
      Lanes8 d[kPositions], s[kPositions];
      for (int k = 0; k < kPositions; ++k) load8(d[k], patch[k] + ch);
      for (int j = 0; j < kPatch; ++j) S::input_1d(d + j, kPatch, s + j);                 // B^T d
      for (int i = 0; i < kPatch; ++i) S::input_1d(s + i * kPatch, 1, d + i * kPatch);  // (B^T d) B
      for (int k = 0; k < kPositions; ++k) store8(out + k * plane + ch, d[k]);
    }
  }
  zero_extra_rows(c, channels, v);
}

// Stores a tile's outputs o (position i * kTile + j, a lane per channel
// first .. first + 7) into images y [n, channels, out_h, out_w] at `at`,
// the element of channel `first` at the tile's top-left, through two 8x8
// transposes (rows 0 and 1, then 2 and 3: each channel's two rows of four in
// one vector). A part-used tile stores `lanes` channels, `rows` rows and
// `cols` columns of it.
[[gnu::always_inline]] inline void store_tile(const Tiling& t, const Lanes8 (&o)[kTile * kTile], int64_t lanes,
                                              int64_t rows, int64_t cols, float* at) {
  const int64_t plane = t.out_h * t.out_w;
  const size_t row_bytes = size_t(cols) * sizeof(float);
  for (int half = 0; half < 2 && 2 * half < rows; ++half) {
    Lanes8 m[8];
    for (int k = 0; k < 8; ++k) m[k] = o[8 * half + k];
    transpose8(m);
    const bool second_row = 2 * half + 1 < rows;
    for (int64_t k = 0; k < lanes; ++k) {
      float* row = at + k * plane + 2 * half * t.out_w;
      const char* values = reinterpret_cast<const char*>(&m[k]);
      if (cols == kTile) {
        std::memcpy(row, values, kTile * sizeof(float));
        if (second_row) std::memcpy(row + t.out_w, values + kTile * sizeof(float), kTile * sizeof(float));
      } else {
        std::memcpy(row, values, row_bytes);
        if (second_row) std::memcpy(row + t.out_w, values + kTile * sizeof(float), row_bytes);
      }
    }
  }
}

template <class S>
KILN_AVX2_FMA void output_tiles(const Tiling& t, const float* m, int64_t channels, int64_t outs,
                                    const float* bias, const Chunk& c, float* y) {
  constexpr int kPatch = S::kPatch, kPositions = S::kPositions;
  const int64_t plane = c.position_stride(channels);
  for (int64_t r = 0; r < c.count; ++r) {
    const TileAt at = tile_at(t, c.first + r);
    const int64_t rows = std::min<int64_t>(kTile, t.out_h - at.y0), cols = std::min<int64_t>(kTile, t.out_w - at.x0);
    const float* in = m + r * channels;
    for (int64_t ch = 0; ch < outs; ch += 8) {
      Lanes8 p[kPositions], q[kTile * kPatch], o[kTile * kTile], b = {};
      if (bias) load8(b, bias + ch);
      for (int k = 0; k < kPositions; ++k) load8(p[k], in + k * plane + ch);
      for (int j = 0; j < kPatch; ++j) S::output_1d(p + j, kPatch, q + j, kPatch);           // A^T m
      for (int i = 0; i < kTile; ++i) S::output_1d(q + i * kPatch, 1, o + i * kTile, 1);  // (A^T m) A
      for (Lanes8& v : o) v += b;
      store_tile(t, o, std::min<int64_t>(8, outs - ch), rows, cols,
                 y + ((at.n * outs + ch) * t.out_h + at.y0) * t.out_w + at.x0);
    }
  }
}

// The inverse of store_tile: e (position i * kTile + j, a lane per channel
// first .. first + 7) from images dy [n, channels, out_h, out_w] at `at`,
// zero past the `lanes` channels, `rows` rows and `cols` columns there.
[[gnu::always_inline]] inline void load_tile(const Tiling& t, const float* at, int64_t lanes, int64_t rows,
                                             int64_t cols, Lanes8 (&e)[kTile * kTile]) {
  const int64_t plane = t.out_h * t.out_w;
  const size_t row_bytes = size_t(cols) * sizeof(float);
  for (int half = 0; half < 2; ++half) {
    Lanes8 m[8] = {};
    for (int64_t k = 0; k < lanes; ++k)
      for (int row = 0; row < 2 && 2 * half + row < rows; ++row) {
        char* to = reinterpret_cast<char*>(&m[k]) + row * kTile * sizeof(float);
        const float* from = at + k * plane + (2 * half + row) * t.out_w;
        if (cols == kTile) std::memcpy(to, from, kTile * sizeof(float));  // one move, not a call
        else std::memcpy(to, from, row_bytes);
      }
    transpose8(m);
    for (int k = 0; k < 8; ++k) e[8 * half + k] = m[k];
  }
}

template <class S>
KILN_AVX2_FMA void grad_output_tiles(const Tiling& t, const float* dy, int64_t channels, int64_t outs,
                                         const Chunk& c, float* m) {
  constexpr int kPatch = S::kPatch, kPositions = S::kPositions;
  const int64_t plane = c.position_stride(channels);
  for (int64_t r = 0; r < c.count; ++r) {
    const TileAt at = tile_at(t, c.first + r);
    const int64_t rows = std::min<int64_t>(kTile, t.out_h - at.y0), cols = std::min<int64_t>(kTile, t.out_w - at.x0);
    float* out = m + r * channels;
    for (int64_t ch = 0; ch < channels; ch += 8) {
      Lanes8 e[kTile * kTile], h[kPatch * kTile], k[kPositions];
      const int64_t lanes = std::clamp<int64_t>(outs - ch, 0, 8);  // none in the padding channels
      load_tile(t, lanes > 0 ? dy + ((at.n * outs + ch) * t.out_h + at.y0) * t.out_w + at.x0 : dy, lanes, rows,
                cols, e);
      for (int j = 0; j < kTile; ++j) S::grad_output_1d(e + j, kTile, h + j, kTile);         // A dy
      for (int i = 0; i < kPatch; ++i) S::grad_output_1d(h + i * kTile, 1, k + i * kPatch, 1);  // (A dy) A^T
      for (int i = 0; i < kPositions; ++i) store8(out + i * plane + ch, k[i]);
    }
  }
  zero_extra_rows(c, channels, m);
}

template <class S>
KILN_AVX2_FMA void filter_transforms(const Filters& f, int64_t first_out, int64_t last_out, float* u) {
  constexpr int kTaps = S::kTaps, kArea = kTaps * kTaps, kPatch = S::kPatch, kPositions = S::kPositions;
  const int64_t blocks = f.out_padded / kBlock, plane = blocks * f.in_padded * kBlock;
  for (int64_t ob = first_out / kBlock; ob < last_out / kBlock; ++ob)
    for (int64_t i = 0; i < f.in_padded; ++i) {
      Lanes16 g[kArea] = {}, t[kPatch * kTaps], w[kPositions];
      for (int l = 0; l < kBlock; ++l) {
        const int64_t o = ob * kBlock + l;
        if (o >= f.outs || i >= f.ins) continue;
        const float* taps = f.flipped ? f.w + (i * f.outs + o) * kArea : f.w + (o * f.ins + i) * kArea;
        for (int k = 0; k < kArea; ++k) g[k][l] = taps[f.flipped ? kArea - 1 - k : k];
      }
      for (int j = 0; j < kTaps; ++j) S::filter_1d(g + j, kTaps, t + j, kTaps);            // G g
      for (int r = 0; r < kPatch; ++r) S::filter_1d(t + kTaps * r, 1, w + r * kPatch, 1);  // (G g) G^T
      float* at = u + (ob * f.in_padded + i) * kBlock;
      for (int k = 0; k < kPositions; ++k) std::memcpy(at + k * plane, &w[k], sizeof w[k]);
    }
}

template <class S>
KILN_AVX2_FMA void filters_of_products(const Products& p, int64_t outs, int64_t ins, int64_t first_out,
                                           int64_t last_out, float* dw) {
  constexpr int kTaps = S::kTaps, kArea = kTaps * kTaps, kPatch = S::kPatch, kPositions = S::kPositions;
  const int64_t plane = p.in_padded * p.out_padded;
  for (int64_t o0 = first_out; o0 < last_out; o0 += kBlock)
    for (int64_t i = 0; i < ins; ++i) {
      Lanes16 d[kPositions] = {}, s[kTaps * kPatch], g[kArea];
      for (int part = 0; part < p.parts; ++part) {
        const float* at = p.du + part * p.part_size + i * p.out_padded + o0;
        for (int k = 0; k < kPositions; ++k) {
          Lanes16 x;
          std::memcpy(&x, at + k * plane, sizeof x);
          d[k] += x;
        }
      }
      for (int j = 0; j < kPatch; ++j) S::filter_grad_1d(d + j, kPatch, s + j, kPatch);       // G^T d
      for (int r = 0; r < kTaps; ++r) S::filter_grad_1d(s + r * kPatch, 1, g + kTaps * r, 1);  // (G^T d) G
      for (int64_t o = o0; o < std::min(o0 + kBlock, outs); ++o)
        for (int k = 0; k < kArea; ++k) dw[(o * ins + i) * kArea + k] = g[k][o - o0];
    }
}

}  // namespace

KILN_AVX2_FMA void to_channels_last(const Planes& p, const float* x, int64_t first_row, int64_t last_row,
                                        float* y) {
  for (int64_t row = first_row; row < last_row; ++row) {
    const int64_t n = row / p.h, r = row % p.h;
    const float* in = x + (n * p.c * p.h + r) * p.w;  // channel k's row at in + k * h * w
    float* out = y + row * p.w * p.padded;
    if (p.w < 8) {
      for (int64_t x0 = 0; x0 < p.w; ++x0)
        for (int64_t k = 0; k < p.c; ++k) out[x0 * p.padded + k] = in[k * p.h * p.w + x0];
    } else {
      for (int64_t c0 = 0; c0 < p.c; c0 += 8)
        for (int64_t x0 = 0; x0 < p.w; x0 += 8) {
          const int64_t c1 = block_start(c0, p.c), x1 = block_start(x0, p.w);
          Lanes8 m[8];
          for (int k = 0; k < 8; ++k) load8(m[k], in + (c1 + k) * p.h * p.w + x1);
          transpose8(m);
          for (int k = 0; k < 8; ++k) store8(out + (x1 + k) * p.padded + c1, m[k]);
        }
    }
    if (p.padded != p.c)
      for (int64_t x0 = 0; x0 < p.w; ++x0)
        std::memset(out + x0 * p.padded + p.c, 0, size_t(p.padded - p.c) * sizeof(float));
  }
}

KILN_AVX2_FMA void multiply_tiles(const float* v, const float* u, const Chunk& c, int64_t in, int64_t out,
                                      float* m) {
  const int64_t blocks = out / kBlock;
  for (int p = 0; p < c.positions; ++p) {
    const float* vp = v + p * c.position_stride(in);
    float* mp = m + p * c.position_stride(out);
    for (int64_t ob = 0; ob < blocks; ++ob) {
      const float* filter = u + (p * blocks + ob) * in * kBlock;
      over_row_blocks(c.rows, [&]<int R>(int64_t r) {
        block_product<R, false>(in, vp + r * in, in, 1, filter, kBlock, mp + r * out + ob * kBlock, out);
      });
    }
  }
}

KILN_AVX2_FMA void accumulate_weight_products(const float* v, const float* m, const Chunk& c, int64_t in,
                                                  int64_t out, float* du) {
  for (int p = 0; p < c.positions; ++p) {
    const float* vp = v + p * c.position_stride(in);
    const float* mp = m + p * c.position_stride(out);
    float* dp = du + p * in * out;
    for (int64_t o = 0; o < out; o += kBlock)
      over_row_blocks(in, [&]<int R>(int64_t i) {
        block_product<R, true>(c.rows, vp + i, 1, in, mp + o, out, dp + i * out + o, out);
      });
  }
}

void transform_input(const Tiling& t, const float* x, int64_t channels, const float* zeros, const Chunk& c,
                     float* v) {
  (t.taps == 3 ? input_tiles<ThreeTaps> : input_tiles<FiveTaps>)(t, x, channels, zeros, c, v);
}

void transform_output(const Tiling& t, const float* m, int64_t channels, int64_t outs, const float* bias,
                      const Chunk& c, float* y) {
  (t.taps == 3 ? output_tiles<ThreeTaps> : output_tiles<FiveTaps>)(t, m, channels, outs, bias, c, y);
}

void transform_grad_output(const Tiling& t, const float* dy, int64_t channels, int64_t outs, const Chunk& c,
                           float* m) {
  (t.taps == 3 ? grad_output_tiles<ThreeTaps> : grad_output_tiles<FiveTaps>)(t, dy, channels, outs, c, m);
}

void transform_filters(const Filters& f, int64_t first_out, int64_t last_out, float* u) {
  (f.taps == 3 ? filter_transforms<ThreeTaps> : filter_transforms<FiveTaps>)(f, first_out, last_out, u);
}

void filters_from_products(const Products& p, int64_t outs, int64_t ins, int64_t first_out, int64_t last_out,
                           float* dw) {
  (p.taps == 3 ? filters_of_products<ThreeTaps> : filters_of_products<FiveTaps>)(p, outs, ins, first_out, last_out,
                                                                                 dw);
}

}  // namespace kiln::nn::winograd
