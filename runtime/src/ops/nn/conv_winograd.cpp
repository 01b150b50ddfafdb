// The Winograd convolutions' driver: channels-last copies of the operands,
// the filter transforms, and the tiles split into chunks
// over the runtime's threads. A chunk is transformed, multiplied and
// transformed back while its transforms are still in the core's caches.
#include "conv_winograd.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "conv_winograd_kernels.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/kernels/cpu/vector_isa.hpp"

namespace kiln::nn {
namespace {

using namespace winograd;

// Below this many tiles the transformed filters (36 or 64 x c x o floats, made and
// read on every call, and for the weight gradient summed per worker) cost
// more than the products save: ResNet-18's [32, 512, 4, 4] layers (32
// tiles) took 1.2 to 4 times as long as oneDNN's direct kernels, its [32,
// 256, 8, 8] ones (128 tiles) 0.45 to 0.75 times (`kiln_bench convs`).
constexpr int64_t kFewestTiles = 128;

// Channel counts are padded to whole product blocks.
int64_t padded(int64_t channels) { return round_up(channels, kBlock); }

// The images of an NCHW shape, with their channels padded.
Planes planes_of(const Shape& nchw) { return {nchw[0], nchw[1], nchw[2], nchw[3], padded(nchw[1])}; }

// An NCHW tensor's channels-last copy, zeros in the padding channels, split
// over the threads by rows. kiln's own copy rather than a oneDNN reorder:
// that ran on OpenMP's threads, which then spun on the cores this path's
// next kernels needed (a sixth of the 5x5 layer's time went to that).
Tensor channels_last(Runtime& rt, const Tensor& nchw) {
  const Planes p = planes_of(nchw.shape());
  Tensor out = rt.empty(Shape{p.n, p.h, p.w, p.padded});
  const float* x = nchw.data<float>();
  float* y = out.data<float>();
  rt.thread_pool().parallel_for(p.n * p.h, std::max<int64_t>(1, cpu::kElementGrain / (p.w * p.padded)),
                                [&](int64_t begin, int64_t end) { to_channels_last(p, x, begin, end, y); });
  return out;
}

// Tiles per chunk: 36 of 36 positions (six blocks of the products' six
// rows) kept a 64- or 128-channel chunk's transforms in a core's L2 and ran
// fastest of 18 to 66, while each block of filters loaded still serves 36
// tiles; as many tile positions (rounded down to six tiles) with 64
// positions; fewer when a worker would otherwise be left without a chunk.
int64_t chunk_tiles(int64_t tiles, int positions, int workers) {
  constexpr int64_t kChunkTilePositions = 36 * 36;
  const int64_t most = kChunkTilePositions / positions / 6 * 6;
  const int64_t per_worker = (tiles + workers - 1) / workers;
  return std::min(most, round_up(per_worker, 6));
}

// The packed transforms of f's filters, split over the threads by output.
Tensor transformed_filters(Runtime& rt, const Filters& f) {
  Tensor u = rt.empty(Shape{positions_of(f.taps), f.out_padded, f.in_padded});
  float* data = u.data<float>();
  rt.thread_pool().parallel_for(f.out_padded / kBlock, 1, [&](int64_t begin, int64_t end) {
    transform_filters(f, begin * kBlock, end * kBlock, data);
  });
  return u;
}

// y = the convolution of channels-last x (in channels) with transformed
// filters u (out channels, padded) plus bias (padded, or undefined), y
// being NCHW with its own channel count.
void forward_tiles(Runtime& rt, const Tiling& t, const Tensor& x, int64_t in, const Tensor& u, int64_t out,
                   const Tensor& bias, Tensor& y) {
  ThreadPool& pool = rt.thread_pool();
  const int64_t tiles = t.count(), per_chunk = chunk_tiles(tiles, t.positions(), pool.num_workers());
  const int64_t chunks = (tiles + per_chunk - 1) / per_chunk;
  const int64_t workers = std::min<int64_t>(pool.num_workers(), chunks);
  const Chunk largest(0, per_chunk, t.positions());
  const int64_t v_size = largest.size(in), m_size = largest.size(out);
  const Tensor scratch = rt.empty(Shape{workers, v_size + m_size});
  const Tensor no_input = rt.full(Shape{in}, 0.0);
  const float* bias_data = bias.defined() ? bias.data<float>() : nullptr;
  std::atomic<int64_t> next{0};
  pool.parallel_for(workers, 1, [&](int64_t begin, int64_t end) {
    for (int64_t worker = begin; worker < end; ++worker) {
      float* v = scratch.data<float>() + worker * (v_size + m_size);
      float* m = v + v_size;
      for (int64_t c = next++; c < chunks; c = next++) {
        const Chunk chunk(c * per_chunk, std::min(per_chunk, tiles - c * per_chunk), t.positions());
        transform_input(t, x.data<float>(), in, no_input.data<float>(), chunk, v);
        multiply_tiles(v, u.data<float>(), chunk, in, out, m);
        transform_output(t, m, out, y.dim(1), bias_data, chunk, y.data<float>());
      }
    }
  });
}

// The filters' taps per side, which choose the scheme.
int taps_of(const Conv2dGeometry& g) { return int(g.kh); }

}  // namespace

bool winograd_takes(const Runtime& rt, const Conv2dGeometry& g, DType dtype) {
  const int taps = taps_of(g);
  return dtype == DType::f32 && (taps == 3 || taps == 5) && g.kw == taps &&
         g.stride == std::array<int64_t, 2>{1, 1} && g.dilation == std::array<int64_t, 2>{1, 1} && g.groups == 1 &&
         g.padding[0] < taps && g.padding[1] < taps && g.c >= kBlock && g.o >= kBlock &&
         Tiling{g.n, g.h, g.w, 0, 0, g.oh, g.ow, taps}.count() >= kFewestTiles &&
         !rt.options().direct_convolutions &&
         cpu::vector_isa() != cpu::VectorIsa::plain;
}

void conv2d_forward_winograd(Runtime& rt, const Conv2dGeometry& g, const Tensor& input, const Tensor& weight,
                             const Tensor& bias, Tensor& output) {
  const int64_t in = padded(g.c), out = padded(g.o);
  const Tiling t{g.n, g.h, g.w, g.padding[0], g.padding[1], g.oh, g.ow, taps_of(g)};
  const Tensor u = transformed_filters(rt, Filters{weight.data<float>(), g.o, g.c, false, out, in, taps_of(g)});
  Tensor padded_bias;
  if (bias.defined()) {
    padded_bias = rt.full(Shape{out}, 0.0);
    std::memcpy(padded_bias.raw_data(), bias.raw_data(), bias.nbytes());
  }
  forward_tiles(rt, t, channels_last(rt, input), in, u, out, padded_bias, output);
}

void conv2d_backward_input_winograd(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                    const Tensor& weight, Tensor& grad_input) {
  // The input gradient is the forward convolution of the output gradient
  // (o channels) by the filters rotated 180 degrees with in and out swapped,
  // padded by taps - 1 - padding: its output is the input's size again.
  const int taps = taps_of(g);
  const int64_t in = padded(g.o), out = padded(g.c);
  const Tiling t{g.n, g.oh, g.ow, taps - 1 - g.padding[0], taps - 1 - g.padding[1], g.h, g.w, taps};
  const Tensor u = transformed_filters(rt, Filters{weight.data<float>(), g.c, g.o, true, out, in, taps});
  forward_tiles(rt, t, channels_last(rt, grad_output), in, u, out, Tensor(), grad_input);
}

void conv2d_backward_weight_winograd(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                     const Tensor& input, Tensor& grad_weight) {
  ThreadPool& pool = rt.thread_pool();
  const int64_t in = padded(g.c), out = padded(g.o);
  const Tiling t{g.n, g.h, g.w, g.padding[0], g.padding[1], g.oh, g.ow, taps_of(g)};
  const Tensor x = channels_last(rt, input);
  const float* dy = grad_output.data<float>();  // read as NCHW by the transform
  const int64_t tiles = t.count(), per_chunk = chunk_tiles(tiles, t.positions(), pool.num_workers());
  const int64_t chunks = (tiles + per_chunk - 1) / per_chunk;
  // Each worker sums its own share of the chunks, always the same share, so
  // the gradient is the same from run to run; the shares are added at the end.
  const int parts = int(std::min<int64_t>(pool.num_workers(), chunks));
  const int64_t part_size = t.positions() * in * out;
  const Chunk largest(0, per_chunk, t.positions());
  const int64_t v_size = largest.size(in), m_size = largest.size(out);
  const Tensor products = rt.full(Shape{parts * part_size}, 0.0);
  const Tensor scratch = rt.empty(Shape{parts, v_size + m_size});
  const Tensor no_input = rt.full(Shape{in}, 0.0);
  pool.parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      float* v = scratch.data<float>() + part * (v_size + m_size);
      float* m = v + v_size;
      for (int64_t c = part * chunks / parts; c < (part + 1) * chunks / parts; ++c) {
        const Chunk chunk(c * per_chunk, std::min(per_chunk, tiles - c * per_chunk), t.positions());
        transform_input(t, x.data<float>(), in, no_input.data<float>(), chunk, v);
        transform_grad_output(t, dy, out, g.o, chunk, m);
        accumulate_weight_products(v, m, chunk, in, out, products.data<float>() + part * part_size);
      }
    }
  });
  const Products p{products.data<float>(), parts, part_size, in, out, taps_of(g)};
  pool.parallel_for(out / kBlock, 1, [&](int64_t begin, int64_t end) {
    filters_from_products(p, g.o, g.c, begin * kBlock, std::min(end * kBlock, g.o), grad_weight.data<float>());
  });
}

}  // namespace kiln::nn
