// group_norm and group_norm_backward on a GPU, in f32 and f64 (the dtypes of
// the CPU op), with the CPU's formulas and in double as it does. Each row
// (one sample's group of channels, norm_group.hpp) is folded by a team:
// statistics in two passes, then the normalised values or the input
// gradient. The weight and bias gradients fold each channel's values over
// the samples in a second pass, from the row statistics the first kept.
#include "cuda_kernels.hpp"
#include "element.cuh"
#include "rows.cuh"
#include "kiln/runtime.hpp"
#include "../../ops/nn/norm_group.hpp"

namespace kiln {
namespace {

using cuda::Team;
using nn::GroupLayout;

// Mean and 1 / sqrt(variance + eps) of row r, for every lane.
template <class T>
__device__ void row_statistics(const Team& team, const GroupLayout& l, const T* x, int64_t r, double eps,
                               double& mean, double& invstd) {
  const T* row = x + r * l.row_size();
  const int64_t size = l.row_size();
  mean = team.fold(size, 0.0, cuda::Plus{}, [&](int64_t k) { return double(row[k]); }) / double(size);
  const double var = team.fold(size, 0.0, cuda::Plus{}, [&](int64_t k) {
    const double d = double(row[k]) - mean;
    return d * d;
  });
  invstd = 1.0 / sqrt(var / double(size) + eps);
}

template <class T>
const T* optional_data(std::span<const Tensor> inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined() ? inputs[i].data<T>() : nullptr;
}

template <class T>
struct NormRow {
  const T* x;
  const T* w;  // null: 1
  const T* b;  // null: 0
  T* y;
  GroupLayout l;
  double eps;
  __device__ void operator()(const Team& team, int64_t r) const {
    double mean, invstd;
    row_statistics(team, l, x, r, eps, mean, invstd);
    for (int64_t k = team.lane; k < l.row_size(); k += team.size) {
      const int64_t i = r * l.row_size() + k, ch = l.channel(r, k);
      y[i] = T((double(x[i]) - mean) * invstd * (w ? double(w[ch]) : 1.0) + (b ? double(b[ch]) : 0.0));
    }
  }
};

struct GroupNormKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const GroupLayout l = nn::group_layout(c.op, c.attrs, c.inputs[0].shape());
    const NormRow<T> row{c.inputs[0].data<T>(), optional_data<T>(c.inputs, 1), optional_data<T>(c.inputs, 2),
                         c.outputs[0].data<T>(), l, c.op.attr_real(c.attrs, "eps")};
    cuda::run_rows("group_norm", c.outputs[0].device().index, l.rows(), l.row_size(), row);
  }
};

// The input gradient of row r; the statistics are kept for the channel pass.
template <class T>
struct NormGradRow {
  const T* g;
  const T* x;
  const T* w;
  T* gx;
  double* means;
  double* invstds;
  GroupLayout l;
  double eps;
  __device__ void operator()(const Team& team, int64_t r) const {
    double mean, invstd;
    row_statistics(team, l, x, r, eps, mean, invstd);
    const int64_t row = r * l.row_size(), size = l.row_size();
    const auto gw = [&](int64_t k) { return double(g[row + k]) * (w ? double(w[l.channel(r, k)]) : 1.0); };
    const double sum_gw = team.fold(size, 0.0, cuda::Plus{}, gw);
    const double sum_gw_xhat =
        team.fold(size, 0.0, cuda::Plus{}, [&](int64_t k) { return gw(k) * (double(x[row + k]) - mean) * invstd; });
    const double count = double(size);
    for (int64_t k = team.lane; k < size; k += team.size) {
      const double xhat = (double(x[row + k]) - mean) * invstd;
      gx[row + k] = T(invstd * (gw(k) - sum_gw / count - xhat * sum_gw_xhat / count));
    }
    if (team.lane == 0) {
      means[r] = mean;
      invstds[r] = invstd;
    }
  }
};

// Weight and bias gradients of channel ch: sums over its values.
template <class T>
struct NormGradChannel {
  const T* g;
  const T* x;
  const double* means;
  const double* invstds;
  T* gw;
  T* gb;
  GroupLayout l;
  __device__ void operator()(const Team& team, int64_t ch) const {
    const int64_t n = l.channel_count();
    const double sum_g = team.fold(n, 0.0, cuda::Plus{}, [&](int64_t j) { return double(g[l.channel_offset(ch, j)]); });
    const double sum_g_xhat = team.fold(n, 0.0, cuda::Plus{}, [&](int64_t j) {
      const int64_t i = l.channel_offset(ch, j), r = l.channel_row(ch, j);
      return double(g[i]) * (double(x[i]) - means[r]) * invstds[r];
    });
    if (team.lane == 0) {
      gw[ch] = T(sum_g_xhat);
      gb[ch] = T(sum_g);
    }
  }
};

struct GroupNormBackwardKernels {
  template <class T> static void kernel(const KernelCall& c) {
    const Tensor& x = c.inputs[1];
    const GroupLayout l = nn::group_layout(c.op, c.attrs, x.shape());
    const int device = x.device().index;
    const Tensor means = c.runtime.empty({l.rows()}, DType::f64, x.device());
    const Tensor invstds = c.runtime.empty({l.rows()}, DType::f64, x.device());
    const NormGradRow<T> rows{c.inputs[0].data<T>(),  x.data<T>(),          optional_data<T>(c.inputs, 2),
                              c.outputs[0].data<T>(), means.data<double>(), invstds.data<double>(),
                              l,                      c.op.attr_real(c.attrs, "eps")};
    cuda::run_rows("group_norm_backward", device, l.rows(), l.row_size(), rows);
    const NormGradChannel<T> channels{c.inputs[0].data<T>(),  x.data<T>(),           means.data<double>(),
                                      invstds.data<double>(), c.outputs[1].data<T>(), c.outputs[2].data<T>(), l};
    cuda::run_rows("group_norm_backward", device, l.channels, l.channel_count(), channels);
  }
};

}  // namespace

void register_cuda_group_norm_kernels(OpRegistry& r) {
  cuda::set_kernels<GroupNormKernels>(r, "group_norm", cuda::TypeList<float, double>{});
  cuda::set_kernels<GroupNormBackwardKernels>(r, "group_norm_backward", cuda::TypeList<float, double>{});
}

}  // namespace kiln
