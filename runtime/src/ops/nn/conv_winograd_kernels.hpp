// The pieces of Winograd's F(4x4, 3x3) and F(2x2, 5x5) convolutions
// (conv_winograd.hpp): each block of outputs ("tile", 4x4 or 2x2) is
// computed from its 6x6 input patch d and the filter g (3x3 or 5x5) as
// Y = A^T [(G g G^T) . (B^T d B)] A  (Lavin and Gray's construction, both
// interpolating at 0, +-1, +-2 and infinity, so that B^T is the same matrix
// for both): 36 multiplications per channel pair where the direct form
// takes 144 (4x4 outputs of 3x3 filters) or 100 (2x2 outputs of 5x5). Over
// a chunk of tiles, each of the 36 positions of the 6x6 transforms is a
// matrix product over the channels, which is where the time goes.
//
// Layouts (channels padded to kBlock with zeros, so every loop runs whole
// vectors):
//   images      [n, h, w, channels]                    (channels-last)
//   transforms  [36][rows][channels]   a chunk's tiles, rows = count rounded
//                                      up to even, the extra rows zero; the
//                                      positions Chunk::position_stride apart
//   filters     [36][out / kBlock][in][kBlock]         (G g G^T, packed)
//   products    [36][in][out]                          (weight gradient)
//
// The vector functions run in AVX2 with FMA (the only CPUs kiln runs this on:
// oneDNN has its own Winograd kernels for AVX-512), the filter transforms
// sixteen output channels at a time.
#pragma once

#include <cstdint>

namespace kiln::nn::winograd {

constexpr int kPatch = 6;       // inputs per side of a tile's patch
constexpr int kPositions = 36;  // kPatch x kPatch
constexpr int kBlock = 16;      // output channels per product block; channel padding

inline int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Output tiles over channels-last images [n, h, w, channels] seen through
// zero padding of pad_h rows and pad_w columns, for filters of taps x taps
// (3 or 5); the output is out_h x out_w (sizes that are not multiples of the
// tile leave the last tiles part used).
struct Tiling {
  int64_t n, h, w, pad_h, pad_w, out_h, out_w;
  int taps;

  // Outputs per side of a tile: 4 for 3 taps, 2 for 5.
  int64_t tile() const { return kPatch + 1 - taps; }
  int64_t tiles_h() const { return (out_h + tile() - 1) / tile(); }
  int64_t tiles_w() const { return (out_w + tile() - 1) / tile(); }
  int64_t count() const { return n * tiles_h() * tiles_w(); }
};

// Tiles [first, first + count) in image order, held in `rows` rows.
struct Chunk {
  int64_t first, count, rows;

  Chunk(int64_t first_tile, int64_t tiles) : first(first_tile), count(tiles), rows(round_up(tiles, 2)) {}

  // Floats between the positions of a transform of `channels` channels: one
  // cache line more than its rows take, so that the 36 positions of a tile
  // (written and read together) do not fall into the same few cache sets.
  int64_t position_stride(int64_t channels) const { return rows * channels + kBlock; }
  // Floats of a whole transform.
  int64_t size(int64_t channels) const { return kPositions * position_stride(channels); }
};

// v = B^T d B of each tile's input patch; `zeros` holds `channels` zeros
// (read where the patch lies in the padding).
void transform_input(const Tiling& t, const float* x, int64_t channels, const float* zeros, const Chunk& c,
                     float* v);
// y = A^T m A (+ bias: `channels` values, or null) into the outputs the
// tiles cover, y being [n, out_h, out_w, channels].
void transform_output(const Tiling& t, const float* m, int64_t channels, const float* bias, const Chunk& c,
                      float* y);
// m = A dy A^T of each tile's output gradient (dy [n, out_h, out_w,
// channels], zero past its edges): the weight gradient's second factor.
void transform_grad_output(const Tiling& t, const float* dy, int64_t channels, const float* zeros, const Chunk& c,
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
