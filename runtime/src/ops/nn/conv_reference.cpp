// conv2d as direct loops over f64: the reference the oneDNN path is tested
// against, and the kernels gradcheck differentiates. Each work item owns the
// outputs it writes (an output plane, an input plane, one filter), so the
// loops parallelise without atomics.
#include "conv_kernels.hpp"

namespace kiln::nn {
namespace {

// Input coordinate read by output coordinate `out` through kernel tap `k`.
inline int64_t input_coord(int64_t out, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  return out * stride - pad + k * dil;
}

}  // namespace

void conv2d_forward_reference(Runtime& rt, const Conv2dGeometry& g, const Tensor& input, const Tensor& weight,
                              const Tensor& bias, Tensor& output) {
  const double* x = input.data<double>();
  const double* w = weight.data<double>();
  const double* b = bias.defined() ? bias.data<double>() : nullptr;
  double* y = output.data<double>();
  const int64_t cg = g.c_per_group();
  rt.thread_pool().parallel_for(g.n * g.o, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / g.o, o = plane % g.o, c0 = (o / g.o_per_group()) * cg;
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          double acc = b ? b[o] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              const int64_t iy = input_coord(oy, ky, g.stride[0], g.padding[0], g.dilation[0]);
              if (iy < 0 || iy >= g.h) continue;
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t ix = input_coord(ox, kx, g.stride[1], g.padding[1], g.dilation[1]);
                if (ix < 0 || ix >= g.w) continue;
                acc += x[((n * g.c + c0 + ci) * g.h + iy) * g.w + ix] * w[((o * cg + ci) * g.kh + ky) * g.kw + kx];
              }
            }
          y[(plane * g.oh + oy) * g.ow + ox] = acc;
        }
    }
  });
}

// Gathers, for each input element, the output elements whose window covers it.
void conv2d_backward_input_reference(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                     const Tensor& weight, Tensor& grad_input) {
  const double* gy = grad_output.data<double>();
  const double* w = weight.data<double>();
  double* gx = grad_input.data<double>();
  const int64_t cg = g.c_per_group(), og = g.o_per_group();
  rt.thread_pool().parallel_for(g.n * g.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / g.c, c = plane % g.c, group = c / cg, ci = c % cg;
      for (int64_t iy = 0; iy < g.h; ++iy)
        for (int64_t ix = 0; ix < g.w; ++ix) {
          double acc = 0.0;
          for (int64_t ky = 0; ky < g.kh; ++ky) {
            const int64_t ny = iy + g.padding[0] - ky * g.dilation[0];  // = oy * stride
            if (ny < 0 || ny % g.stride[0] != 0 || ny / g.stride[0] >= g.oh) continue;
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t nx = ix + g.padding[1] - kx * g.dilation[1];
              if (nx < 0 || nx % g.stride[1] != 0 || nx / g.stride[1] >= g.ow) continue;
              for (int64_t o = group * og; o < (group + 1) * og; ++o)
                acc += gy[((n * g.o + o) * g.oh + ny / g.stride[0]) * g.ow + nx / g.stride[1]] *
                       w[((o * cg + ci) * g.kh + ky) * g.kw + kx];
            }
          }
          gx[(plane * g.h + iy) * g.w + ix] = acc;
        }
    }
  });
}

// Each filter o sums grad_output[:, o] against the input windows it saw.
void conv2d_backward_weight_reference(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                      const Tensor& input, Tensor& grad_weight) {
  const double* gy = grad_output.data<double>();
  const double* x = input.data<double>();
  double* gw = grad_weight.data<double>();
  const int64_t cg = g.c_per_group();
  rt.thread_pool().parallel_for(g.o, 1, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const int64_t c0 = (o / g.o_per_group()) * cg;
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t ky = 0; ky < g.kh; ++ky)
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            double acc = 0.0;
            for (int64_t n = 0; n < g.n; ++n)
              for (int64_t oy = 0; oy < g.oh; ++oy) {
                const int64_t iy = input_coord(oy, ky, g.stride[0], g.padding[0], g.dilation[0]);
                if (iy < 0 || iy >= g.h) continue;
                for (int64_t ox = 0; ox < g.ow; ++ox) {
                  const int64_t ix = input_coord(ox, kx, g.stride[1], g.padding[1], g.dilation[1]);
                  if (ix < 0 || ix >= g.w) continue;
                  acc += gy[((n * g.o + o) * g.oh + oy) * g.ow + ox] * x[((n * g.c + c0 + ci) * g.h + iy) * g.w + ix];
                }
              }
            gw[((o * cg + ci) * g.kh + ky) * g.kw + kx] = acc;
          }
    }
  });
}

}  // namespace kiln::nn
