// layer_norm and layer_norm_backward on a GPU, in f32 and f64 (the dtypes
// of the CPU op). Each row of the trailing normalized_shape elements is
// normalised by its own mean and biased variance (two passes), then scaled
// and shifted by weight and bias. The backward recomputes the statistics:
// one pass over rows gives the input gradient, one over columns the weight
// and bias gradients. Everything is computed in double, as the CPU kernel
// does: the per-row sums are few next to the element traffic.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "rows.cuh"
#include "kiln/runtime.hpp"

namespace kiln {
namespace {

using cuda::Team;

// The input seen as [rows, size], size = the product of normalized_shape.
struct NormRows {
  int64_t rows = 0, size = 0;
};

NormRows norm_rows(const KernelCall& c, const Shape& input) {
  int64_t size = 1;
  for (int64_t d : c.op.attr_ints(c.attrs, "normalized_shape")) size *= d;
  return {size ? input.numel() / size : 0, size};
}

// Mean and 1 / sqrt(variance + eps) of a row, for every lane.
template <class T>
__device__ void row_statistics(const Team& team, const T* row, int64_t size, double eps, double& mean,
                               double& invstd) {
  mean = team.fold(size, 0.0, cuda::Plus{}, [&](int64_t k) { return double(row[k]); }) / double(size);
  const double var = team.fold(size, 0.0, cuda::Plus{}, [&](int64_t k) {
    const double d = double(row[k]) - mean;
    return d * d;
  });
  invstd = 1.0 / sqrt(var / double(size) + eps);
}

template <class T>
struct NormRow {
  const T* x;
  const T* w;  // null: 1
  const T* b;  // null: 0
  T* y;
  int64_t size;
  double eps;
  __device__ void operator()(const Team& team, int64_t r) const {
    const T* row = x + r * size;
    double mean, invstd;
    row_statistics(team, row, size, eps, mean, invstd);
    for (int64_t k = team.lane; k < size; k += team.size) {
      const double v = (double(row[k]) - mean) * invstd;
      y[r * size + k] = T(v * (w ? double(w[k]) : 1.0) + (b ? double(b[k]) : 0.0));
    }
  }
};

template <class T>
const T* optional_data(std::span<const Tensor> inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined() ? inputs[i].data<T>() : nullptr;
}

struct LayerNormKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const NormRows n = norm_rows(c, c.inputs[0].shape());
    const NormRow<T> row{c.inputs[0].data<T>(), optional_data<T>(c.inputs, 1), optional_data<T>(c.inputs, 2),
                         c.outputs[0].data<T>(), n.size, c.op.attr_real(c.attrs, "eps")};
    cuda::run_rows("layer_norm", c.outputs[0].device().index, n.rows, n.size, row);
  }
};

// The input gradient of row r, coupled across the row by its statistics;
// the statistics are kept for the column pass.
template <class T>
struct NormGradRow {
  const T* g;
  const T* x;
  const T* w;
  T* gx;
  double* means;
  double* invstds;
  int64_t size;
  double eps;
  __device__ void operator()(const Team& team, int64_t r) const {
    const T* row = x + r * size;
    const T* grad = g + r * size;
    double mean, invstd;
    row_statistics(team, row, size, eps, mean, invstd);
    const auto gw = [&](int64_t k) { return double(grad[k]) * (w ? double(w[k]) : 1.0); };
    const double sum_gw = team.fold(size, 0.0, cuda::Plus{}, gw);
    const double sum_gw_xhat =
        team.fold(size, 0.0, cuda::Plus{}, [&](int64_t k) { return gw(k) * (double(row[k]) - mean) * invstd; });
    const double count = double(size);
    for (int64_t k = team.lane; k < size; k += team.size) {
      const double xhat = (double(row[k]) - mean) * invstd;
      gx[r * size + k] = T(invstd * (gw(k) - sum_gw / count - xhat * sum_gw_xhat / count));
    }
    if (team.lane == 0) {
      means[r] = mean;
      invstds[r] = invstd;
    }
  }
};

// Weight and bias gradients of column k: sums over the rows.
template <class T>
struct NormGradColumn {
  const T* g;
  const T* x;
  const double* means;
  const double* invstds;
  T* gw;
  T* gb;
  int64_t rows, size;
  __device__ void operator()(const Team& team, int64_t k) const {
    const double sum_g = team.fold(rows, 0.0, cuda::Plus{}, [&](int64_t r) { return double(g[r * size + k]); });
    const double sum_g_xhat = team.fold(rows, 0.0, cuda::Plus{}, [&](int64_t r) {
      return double(g[r * size + k]) * (double(x[r * size + k]) - means[r]) * invstds[r];
    });
    if (team.lane == 0) {
      gw[k] = T(sum_g_xhat);
      gb[k] = T(sum_g);
    }
  }
};

struct LayerNormBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& x = c.inputs[1];
    const NormRows n = norm_rows(c, x.shape());
    const int device = x.device().index;
    const Tensor means = c.runtime.empty({n.rows}, DType::f64, x.device());
    const Tensor invstds = c.runtime.empty({n.rows}, DType::f64, x.device());
    const NormGradRow<T> rows{c.inputs[0].data<T>(),  x.data<T>(),          optional_data<T>(c.inputs, 2),
                              c.outputs[0].data<T>(), means.data<double>(), invstds.data<double>(),
                              n.size,                 c.op.attr_real(c.attrs, "eps")};
    cuda::run_rows("layer_norm_backward", device, n.rows, n.size, rows);
    const NormGradColumn<T> columns{c.inputs[0].data<T>(), x.data<T>(), means.data<double>(), invstds.data<double>(),
                                    c.outputs[1].data<T>(), c.outputs[2].data<T>(), n.rows, n.size};
    cuda::run_rows("layer_norm_backward", device, n.size, n.rows, columns);
  }
};

}  // namespace

void register_cuda_layer_norm_kernels(OpRegistry& r) {
  cuda::set_kernels<LayerNormKernels>(r, "layer_norm", cuda::TypeList<float, double>{});
  cuda::set_kernels<LayerNormBackwardKernels>(r, "layer_norm_backward", cuda::TypeList<float, double>{});
}

}  // namespace kiln
