// dw[o][c][kh][kw] = sum over n, y, x of dy[n][o][y][x] * x[n][c][y + kh - ph][x + kw - pw]:
// for each output channel o (a thread's share, two at a time), input
// channel c and filter row kh, one accumulator of eight lanes per filter
// column kw runs along the output rows, against the input rows shifted by
// kw. The input is copied once with its padding made of zeros, so the loops
// check no bounds.
#include "conv_grad_weight_few_channels.hpp"

#include <algorithm>
#include <cstring>

#include "kiln/kernels/cpu/lanes8.hpp"
#include "kiln/kernels/cpu/vector_isa.hpp"

namespace kiln::nn {
namespace {

using cpu::Lanes8;
using cpu::load8;
typedef int Ints8 __attribute__((vector_size(32)));
constexpr int64_t kMostChannels = 4, kTallest = 8, kWidest = 8;

// The input with its padding: [n][c][h + 2 pad_h][w + 2 pad_w], zeros
// outside the image.
struct PaddedInput {
  Tensor data;
  int64_t rows, cols;
};

PaddedInput padded_input(Runtime& rt, const Conv2dGeometry& g, const Tensor& input) {
  PaddedInput p{Tensor(), g.h + 2 * g.padding[0], g.w + 2 * g.padding[1]};
  p.data = rt.empty(Shape{g.n * g.c, p.rows, p.cols});
  const float* x = input.data<float>();
  float* out = p.data.data<float>();
  rt.thread_pool().parallel_for(g.n * g.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      float* dst = out + plane * p.rows * p.cols;
      std::memset(dst, 0, size_t(p.rows * p.cols) * sizeof(float));
      for (int64_t y = 0; y < g.h; ++y)
        std::memcpy(dst + (y + g.padding[0]) * p.cols + g.padding[1], x + (plane * g.h + y) * g.w,
                    size_t(g.w) * sizeof(float));
    }
  });
  return p;
}

struct Args {
  const Conv2dGeometry& g;
  const float* dy;
  const PaddedInput& x;
  float* dw;
};

// sums[q][kw] += the products of filter row kh's taps over image n's output
// rows of channel o + q (q < O) and its input rows of channel c, in
// accumulators that live in registers for the image; each input vector
// loaded serves the O outputs.
template <int KW, int O>
[[gnu::always_inline]] inline void add_image_row(const Args& a, int64_t n, int64_t o, int64_t c, int64_t kh,
                                                 Lanes8* const (&sums)[O]) {
  const Conv2dGeometry& g = a.g;
  const int64_t full = g.ow / 8 * 8, last = g.ow - 8;
  // A row's last values are its last eight, with the lanes the vectors
  // before took already masked out of both factors (rows are 8 long at
  // least): a load that stays inside the row, and exact zeros.
  Ints8 fresh;
  for (int l = 0; l < 8; ++l) fresh[l] = l + last >= full ? -1 : 0;
  Lanes8 acc[O][KW] = {};
  for (int64_t y = 0; y < g.oh; ++y) {
    const float* d[O];
    for (int q = 0; q < O; ++q) d[q] = a.dy + ((n * g.o + o + q) * g.oh + y) * g.ow;
    const float* x = a.x.data.data<float>() + ((n * g.c + c) * a.x.rows + y + kh) * a.x.cols;
    for (int64_t at = 0; at < full; at += 8) {
      Lanes8 dv[O];
      for (int q = 0; q < O; ++q) load8(dv[q], d[q] + at);
      for (int kw = 0; kw < KW; ++kw) {
        Lanes8 xv;
        load8(xv, x + at + kw);
        for (int q = 0; q < O; ++q) acc[q][kw] += dv[q] * xv;
      }
    }
    if (full == g.ow) continue;
    Lanes8 dv[O];
    for (int q = 0; q < O; ++q) {
      load8(dv[q], d[q] + last);
      dv[q] = Lanes8(Ints8(dv[q]) & fresh);
    }
    for (int kw = 0; kw < KW; ++kw) {
      Lanes8 xv;
      load8(xv, x + last + kw);
      xv = Lanes8(Ints8(xv) & fresh);
      for (int q = 0; q < O; ++q) acc[q][kw] += dv[q] * xv;
    }
  }
  for (int q = 0; q < O; ++q)
    for (int kw = 0; kw < KW; ++kw) sums[q][kw] += acc[q][kw];
}

// The filters of outputs [o, o + O). Image by image, so that its planes of
// dy and x stay in the core's L1 while every filter row passes over them;
// each row's accumulators stay in registers for the image.
template <int KW, int O>
[[gnu::always_inline]] inline void output_filters(const Args& a, int64_t o) {
  const Conv2dGeometry& g = a.g;
  Lanes8 sums[O][kMostChannels * kTallest][KW] = {};
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t kh = 0; kh < g.kh; ++kh) {
        Lanes8* rows[O];
        for (int q = 0; q < O; ++q) rows[q] = sums[q][c * g.kh + kh];
        add_image_row<KW, O>(a, n, o, c, kh, rows);
      }
  for (int q = 0; q < O; ++q)
    for (int64_t row = 0; row < g.c * g.kh; ++row)
      for (int kw = 0; kw < KW; ++kw) {
        float sum = 0;
        for (int l = 0; l < 8; ++l) sum += sums[q][row][kw][l];
        a.dw[((o + q) * g.c * g.kh + row) * g.kw + kw] = sum;
      }
}

// The filters of outputs [first_o, last_o), two at a time where their
// accumulators, the two output vectors and an input vector fit the 16 AVX2
// registers (filters up to 5 wide), which halves the input loads per
// multiply-add.
template <int KW>
KILN_AVX2_FMA void filters(const Args& a, int64_t first_o, int64_t last_o) {
  constexpr int kPair = KW <= 5 ? 2 : 1;
  int64_t o = first_o;
  for (; o + kPair <= last_o; o += kPair) output_filters<KW, kPair>(a, o);
  for (; o < last_o; ++o) output_filters<KW, 1>(a, o);
}

template <int... KW>
void filters_of_width(const Args& a, int64_t first_o, int64_t last_o, std::integer_sequence<int, KW...>) {
  ((a.g.kw == KW + 1 ? filters<KW + 1>(a, first_o, last_o) : void()), ...);
}

}  // namespace

bool few_channels_grad_weight_takes(const Conv2dGeometry& g, DType dtype) {
  return dtype == DType::f32 && g.groups == 1 && g.stride == std::array<int64_t, 2>{1, 1} &&
         g.dilation == std::array<int64_t, 2>{1, 1} && g.c <= kMostChannels && g.kh <= kTallest && g.kw <= kWidest && g.ow >= 8 &&
         cpu::vector_isa() != cpu::VectorIsa::plain;
}

void conv2d_backward_weight_few_channels(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                         const Tensor& input, Tensor& grad_weight) {
  const PaddedInput x = padded_input(rt, g, input);
  const Args a{g, grad_output.data<float>(), x, grad_weight.data<float>()};
  rt.thread_pool().parallel_for(g.o, 1, [&](int64_t begin, int64_t end) {
    filters_of_width(a, begin, end, std::make_integer_sequence<int, kWidest>());
  });
}

}  // namespace kiln::nn
