// batch_norm and batch_norm_backward on a GPU, with kiln's own kernels
// rather than cuDNN's: cuDNN's batch norm wants f32 scale, bias and running
// statistics for f16/bf16 data (kiln keeps them in the input's dtype), has
// no backward for evaluation mode (statistics taken as constants), requires
// weight and bias, and refuses eps below 1e-5. The semantics are the CPU
// kernel's (norm_batch.cpp): statistics in double, the biased variance to
// normalise, the unbiased one for the running estimate; the backward
// recomputes the statistics.
#include <algorithm>

#include "cuda_kernels.hpp"
#include "element.cuh"
#include "kiln/runtime.hpp"
#include "launch.cuh"
#include "stream.hpp"
#include "../../memory/cuda/device_guard.hpp"
#include "../../ops/nn/norm_ops.hpp"

namespace kiln {
namespace {

constexpr int kThreads = 256;

// The input seen as [outer, channels, inner] (inner = 1 for [N, C]).
struct ChannelLayout {
  int64_t outer, channels, inner;

  explicit ChannelLayout(const Shape& s) : outer(s[0]), channels(s[1]), inner(1) {
    for (int d = 2; d < s.rank(); ++d) inner *= s[d];
  }
  __host__ __device__ int64_t count() const { return outer * inner; }  // values per channel
  // The k-th value of channel c.
  __device__ int64_t offset(int64_t c, int64_t k) const { return ((k / inner) * channels + c) * inner + k % inner; }
  __device__ int64_t channel_of(int64_t i) const { return (i / inner) % channels; }
};

// Sums a and b over the block; every thread gets the totals.
__device__ void block_sum(double& a, double& b) {
  __shared__ double sa[kThreads], sb[kThreads];
  __syncthreads();  // a previous call's totals have been read
  sa[threadIdx.x] = a;
  sb[threadIdx.x] = b;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) {
      sa[threadIdx.x] += sa[threadIdx.x + s];
      sb[threadIdx.x] += sb[threadIdx.x + s];
    }
    __syncthreads();
  }
  a = sa[0];
  b = sb[0];
}

template <class T>
__device__ double load(const T* p, int64_t i) {
  return cuda::convert<double>(p[i]);
}

// One block per channel (looping when there are more channels than blocks):
// the mean, then the biased variance around it.
template <class T>
__global__ void batch_statistics(const T* x, ChannelLayout l, double* mean, double* var) {
  const double n = double(l.count());
  for (int64_t c = blockIdx.x; c < l.channels; c += gridDim.x) {
    double sum = 0.0, unused = 0.0;
    for (int64_t k = threadIdx.x; k < l.count(); k += blockDim.x) sum += load(x, l.offset(c, k));
    block_sum(sum, unused);
    const double m = sum / n;
    double squares = 0.0;
    for (int64_t k = threadIdx.x; k < l.count(); k += blockDim.x) {
      const double d = load(x, l.offset(c, k)) - m;
      squares += d * d;
    }
    block_sum(squares, unused);
    if (threadIdx.x == 0) {
      mean[c] = m;
      var[c] = squares / n;
    }
  }
}

template <class T>
__global__ void running_statistics(const T* running_mean, const T* running_var, int64_t channels, double* mean,
                                   double* var) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < channels; c += int64_t(gridDim.x) * blockDim.x) {
    mean[c] = load(running_mean, c);
    var[c] = load(running_var, c);
  }
}

__device__ double inverse_std(double var, double eps) { return 1.0 / sqrt(var + eps); }

template <class T>
__global__ void normalize(const T* x, ChannelLayout l, const double* mean, const double* var, double eps,
                          const T* weight, const T* bias, T* y, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = l.channel_of(i);
    const double scale = inverse_std(var[c], eps) * (weight ? load(weight, c) : 1.0);
    const double shift = (bias ? load(bias, c) : 0.0) - mean[c] * scale;
    y[i] = cuda::convert<T>(load(x, i) * scale + shift);
  }
}

template <class T>
__global__ void update_running(const double* mean, const double* var, int64_t channels, double momentum,
                               double unbias, T* running_mean, T* running_var) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < channels; c += int64_t(gridDim.x) * blockDim.x) {
    running_mean[c] = cuda::convert<T>((1 - momentum) * load(running_mean, c) + momentum * mean[c]);
    running_var[c] = cuda::convert<T>((1 - momentum) * load(running_var, c) + momentum * var[c] * unbias);
  }
}

// Per channel: sum of g and of g * (x - mean), which are grad_bias and
// (scaled by the inverse std) grad_weight, and what grad_input needs.
template <class T>
__global__ void gradient_sums(const T* g, const T* x, ChannelLayout l, const double* mean, const double* var,
                              double eps, double* sum_g, double* sum_g_centred, T* grad_weight, T* grad_bias) {
  for (int64_t c = blockIdx.x; c < l.channels; c += gridDim.x) {
    double sg = 0.0, sgc = 0.0;
    for (int64_t k = threadIdx.x; k < l.count(); k += blockDim.x) {
      const int64_t at = l.offset(c, k);
      const double gv = load(g, at);
      sg += gv;
      sgc += gv * (load(x, at) - mean[c]);
    }
    block_sum(sg, sgc);
    if (threadIdx.x == 0) {
      sum_g[c] = sg;
      sum_g_centred[c] = sgc;
      grad_bias[c] = cuda::convert<T>(sg);
      grad_weight[c] = cuda::convert<T>(sgc * inverse_std(var[c], eps));
    }
  }
}

// Training: the batch mean and variance depend on every input too, which
// subtracts the gradient's mean and its projection on x_hat.
template <class T>
__global__ void grad_input(const T* g, const T* x, ChannelLayout l, const double* mean, const double* var, double eps,
                           const T* weight, const double* sum_g, const double* sum_g_centred, bool training, T* out,
                           int64_t n) {
  const double count = double(l.count());
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = l.channel_of(i);
    const double invstd = inverse_std(var[c], eps);
    const double scale = invstd * (weight ? load(weight, c) : 1.0);
    const double g_mean = training ? sum_g[c] / count : 0.0;
    const double centred_coef = training ? sum_g_centred[c] * invstd * invstd / count : 0.0;
    out[i] = cuda::convert<T>(scale * (load(g, i) - g_mean - (load(x, i) - mean[c]) * centred_coef));
  }
}

unsigned channel_blocks(int64_t channels) { return unsigned(std::clamp<int64_t>(channels, 1, int64_t(1) << 16)); }

template <class T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// Per-channel doubles on the device, from the runtime's allocator.
class ChannelScratch {
 public:
  ChannelScratch(Runtime& rt, Device device, int64_t channels, int arrays)
      : memory_(rt.allocator(device)->allocate(size_t(channels * arrays) * sizeof(double))), channels_(channels) {}
  double* array(int i) const { return static_cast<double*>(memory_.get()) + i * channels_; }

 private:
  DataPtr memory_;
  int64_t channels_;
};

// Fills scratch arrays 0 and 1 with the mean and biased variance to use.
template <class T>
void statistics(const T* x, const ChannelLayout& l, const Tensor& running_mean, const Tensor& running_var,
                bool training, const ChannelScratch& s, cudaStream_t stream) {
  if (training)
    batch_statistics<T><<<channel_blocks(l.channels), kThreads, 0, stream>>>(x, l, s.array(0), s.array(1));
  else
    running_statistics<T><<<cuda::grid_size(l.channels), cuda::kBlockSize, 0, stream>>>(
        running_mean.data<T>(), running_var.data<T>(), l.channels, s.array(0), s.array(1));
  KILN_CUDA_CHECK_LAUNCH("the batch norm statistics kernel");
}

struct BatchNormForward {
  // Inputs: input, weight, bias, running_mean, running_var.
  template <class T>
  static void kernel(const KernelCall& c) {
    const Tensor& x = c.inputs[0];
    Tensor& y = c.outputs[0];
    const ChannelLayout l(x.shape());
    if (l.channels == 0) return;
    const Tensor running_mean = nn::optional_input(c.inputs, 3), running_var = nn::optional_input(c.inputs, 4);
    const bool training = c.op.attr_bool(c.attrs, "training");
    const double eps = c.op.attr_real(c.attrs, "eps");
    const int device = y.device().index;
    CudaDeviceGuard guard(device);
    const cudaStream_t stream = cuda::compute_stream(device);
    const ChannelScratch scratch(c.runtime, y.device(), l.channels, 2);
    statistics<T>(x.data<T>(), l, running_mean, running_var, training, scratch, stream);
    if (y.numel() > 0) {
      normalize<T><<<cuda::grid_size(y.numel()), cuda::kBlockSize, 0, stream>>>(
          x.data<T>(), l, scratch.array(0), scratch.array(1), eps, data_or_null<T>(nn::optional_input(c.inputs, 1)),
          data_or_null<T>(nn::optional_input(c.inputs, 2)), y.data<T>(), y.numel());
      KILN_CUDA_CHECK_LAUNCH("the batch norm kernel for ", describe(x));
    }
    if (training && running_mean.defined()) {
      const double unbias = double(l.count()) / double(l.count() - 1);
      update_running<T><<<cuda::grid_size(l.channels), cuda::kBlockSize, 0, stream>>>(
          scratch.array(0), scratch.array(1), l.channels, c.op.attr_real(c.attrs, "momentum"), unbias,
          running_mean.data<T>(), running_var.data<T>());
      KILN_CUDA_CHECK_LAUNCH("the batch norm running statistics kernel");
    }
  }
};

struct BatchNormBackward {
  // Inputs: grad_output, input, weight, running_mean, running_var.
  // Outputs: grad_input, grad_weight, grad_bias.
  template <class T>
  static void kernel(const KernelCall& c) {
    const Tensor& g = c.inputs[0];
    const Tensor& x = c.inputs[1];
    const ChannelLayout l(x.shape());
    if (l.channels == 0) return;
    const bool training = c.op.attr_bool(c.attrs, "training");
    const double eps = c.op.attr_real(c.attrs, "eps");
    const int device = x.device().index;
    CudaDeviceGuard guard(device);
    const cudaStream_t stream = cuda::compute_stream(device);
    const ChannelScratch scratch(c.runtime, x.device(), l.channels, 4);
    statistics<T>(x.data<T>(), l, nn::optional_input(c.inputs, 3), nn::optional_input(c.inputs, 4), training, scratch,
                  stream);
    gradient_sums<T><<<channel_blocks(l.channels), kThreads, 0, stream>>>(
        g.data<T>(), x.data<T>(), l, scratch.array(0), scratch.array(1), eps, scratch.array(2), scratch.array(3),
        c.outputs[1].data<T>(), c.outputs[2].data<T>());
    KILN_CUDA_CHECK_LAUNCH("the batch norm gradient sums kernel for ", describe(x));
    const int64_t n = x.numel();
    if (n == 0) return;
    grad_input<T><<<cuda::grid_size(n), cuda::kBlockSize, 0, stream>>>(
        g.data<T>(), x.data<T>(), l, scratch.array(0), scratch.array(1), eps,
        data_or_null<T>(nn::optional_input(c.inputs, 2)), scratch.array(2), scratch.array(3), training,
        c.outputs[0].data<T>(), n);
    KILN_CUDA_CHECK_LAUNCH("the batch norm input gradient kernel for ", describe(x));
  }
};

}  // namespace

void register_cuda_batch_norm_kernels(OpRegistry& r) {
  cuda::set_kernels<BatchNormForward>(r, "batch_norm", cuda::FloatTypes{});
  cuda::set_kernels<BatchNormBackward>(r, "batch_norm_backward", cuda::FloatTypes{});
}

}  // namespace kiln
