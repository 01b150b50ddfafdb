// The pieces of Winograd's F(4x4, 3x3) and F(4x4, 5x5) convolutions
// (conv_winograd.hpp): each 4x4 block of outputs ("tile") is computed from
// its input patch d (6x6 for 3x3 filters, 8x8 for 5x5) and the filter g as
// Y = A^T [(G g G^T) . (B^T d B)] A  (Lavin and Gray's construction,
// interpolating at 0, +-1, +-2 and infinity, and at +-1/2 too for 5x5): 36
// multiplications per channel pair where the direct form takes 144 (3x3),
// 64 where it takes 400 (5x5). Over a chunk of tiles, each position of the
// transforms is a matrix product over the channels, which is where the time
// goes.
//
// Layouts (channels padded to kBlock with zeros, so every loop runs whole
// vectors; P the positions, 36 or 64):
//   images      [n, h, w, channels]   (channels-last; outputs are written
//                                      into [n, c, h, w] directly)
//   transforms  [P][rows][channels]    a chunk's tiles, rows = count rounded
//                                      up to even, the extra rows zero; the
//                                      positions Chunk::position_stride apart
//   filters     [P][out / kBlock][in][kBlock]          (G g G^T, packed)
//   products    [P][in][out]                           (weight gradient)
//
// The vector functions run in AVX2 with FMA (on AVX-512 CPUs too: on AMD's
// Zen 4, whose AVX-512 multiply-adds are two AVX2 ones, they are as fast),
// the filter transforms sixteen output channels at a time.
#pragma once

#include <cstdint>

namespace kiln::nn::winograd {

constexpr int kTile = 4;    // outputs per side of a tile
constexpr int kBlock = 16;  // output channels per product block; channel padding

// Inputs per side of a tile's patch for filters of `taps` per side (3 or 5),
// and the positions of its transforms.
constexpr int patch_of(int taps) { return kTile + taps - 1; }
constexpr int positions_of(int taps) { return patch_of(taps) * patch_of(taps); }

inline int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Output tiles over channels-last images [n, h, w, channels] seen through
// zero padding of pad_h rows and pad_w columns, for filters of taps x taps
// (3 or 5); the output is out_h x out_w (sizes that are not multiples of the
// tile leave the last tiles part used).
struct Tiling {
  int64_t n, h, w, pad_h, pad_w, out_h, out_w;
  int taps;

  int64_t tiles_h() const { return (out_h + kTile - 1) / kTile; }
  int64_t tiles_w() const { return (out_w + kTile - 1) / kTile; }
  int64_t count() const { return n * tiles_h() * tiles_w(); }
  int positions() const { return positions_of(taps); }
};

// Tiles [first, first + count) in image order, held in `rows` rows of
// transforms with `positions` positions.
struct Chunk {
  int64_t first, count, rows;
  int positions;

  Chunk(int64_t first_tile, int64_t tiles, int transform_positions)
      : first(first_tile), count(tiles), rows(round_up(tiles, 2)), positions(transform_positions) {}

  // Floats between the positions of a transform of `channels` channels: one
  // cache line more than its rows take, so that the positions of a tile
  // (written and read together) do not fall into the same few cache sets.
  int64_t position_stride(int64_t channels) const { return rows * channels + kBlock; }
  // Floats of a whole transform.
  int64_t size(int64_t channels) const { return positions * position_stride(channels); }
};

// The inputs' layout change, rows [first_row, last_row) of the n * h rows
// of images [n, c, h, w] (c >= 8): into channels-last [n, h, w, padded]
// with zeros in the channels past c.
struct Planes {
  int64_t n, c, h, w, padded;
};
void to_channels_last(const Planes& p, const float* x, int64_t first_row, int64_t last_row, float* y);

// v = B^T d B of each tile's input patch; `zeros` holds `channels` zeros
// (read where the patch lies in the padding).
void transform_input(const Tiling& t, const float* x, int64_t channels, const float* zeros, const Chunk& c,
                     float* v);
// y = A^T m A (+ bias: `channels` values, or null) into the outputs the
// tiles cover, y being images [n, outs, out_h, out_w] (outs <= channels,
// the rest padding).
void transform_output(const Tiling& t, const float* m, int64_t channels, int64_t outs, const float* bias,
                      const Chunk& c, float* y);
// m = A dy A^T of each tile's output gradient (dy images [n, outs, out_h,
// out_w], zero past their edges and in the channels from outs to
// `channels`): the weight gradient's second factor.
void transform_grad_output(const Tiling& t, const float* dy, int64_t channels, int64_t outs, const Chunk& c,
                           float* m);

// m[p][r][o] = sum_i v[p][r][i] u[p][o / kBlock][i][o % kBlock].
void multiply_tiles(const float* v, const float* u, const Chunk& c, int64_t in, int64_t out, float* m);
// du[p][i][o] += sum_r v[p][r][i] m[p][r][o].
void accumulate_weight_products(const float* v, const float* m, const Chunk& c, int64_t in, int64_t out, float* du);

// The packed G g G^T of filters [first_out, last_out) < out_padded of w
// [outs, ins, taps, taps] (of w [ins, outs, taps, taps] rotated by 180
// degrees when `flipped`: the filters of the input gradient), zero for the
// padding channels past outs and ins.
struct Filters {
  const float* w;
  int64_t outs, ins;
  bool flipped;
  int64_t out_padded, in_padded;
  int taps;
};
// first_out and last_out are multiples of kBlock.
void transform_filters(const Filters& f, int64_t first_out, int64_t last_out, float* u);

// dw[o][i] = G^T (sum over `parts` of du[part][.][i][o]) G for outputs o in
// [first_out, last_out) (multiples of kBlock, or outs) of dw [outs, ins,
// taps, taps]; the parts of du (in_padded x out_padded channels) are
// part_size floats apart.
struct Products {
  const float* du;
  int parts;
  int64_t part_size, in_padded, out_padded;
  int taps;
};
void filters_from_products(const Products& p, int64_t outs, int64_t ins, int64_t first_out, int64_t last_out,
                           float* dw);

}  // namespace kiln::nn::winograd
