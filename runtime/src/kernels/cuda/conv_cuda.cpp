// conv2d and its backward ops (conv2d_grad_input, conv2d_grad_weight) on a
// GPU through cuDNN's convolution API, grouped and depthwise forms included.
// cuDNN's heuristics choose the algorithm once per shape, dtype and GPU; the
// choice and its workspace size are kept for the life of the process, and
// the workspace comes from the runtime's allocator for the device. The bias
// is added afterwards by conv_bias.cu, in every dtype alike.
#include <array>
#include <map>
#include <mutex>
#include <optional>

#include "../../memory/cuda/device_guard.hpp"
#include "../../ops/nn/conv_geometry.hpp"
#include "conv_bias.hpp"
#include "cuda_kernels.hpp"
#include "cudnn_descriptors.hpp"
#include "cudnn_error.hpp"
#include "handle_cache.hpp"
#include "kiln/ops/registry.hpp"
#include "kiln/runtime.hpp"
#include "stream.hpp"

namespace kiln {
namespace {

using nn::Conv2dGeometry;

enum class ConvPass : uint8_t { forward, grad_input, grad_weight };

const char* pass_name(ConvPass p) {
  switch (p) {
    case ConvPass::forward: return "forward";
    case ConvPass::grad_input: return "backward data";
    case ConvPass::grad_weight: return "backward filter";
  }
  return "";
}

// f16 asks for tensor cores (accumulating in f32); f32 may use them (as
// TF32) only when allowed, and then cuDNN's default math picks them, as it
// does for bf16.
cudnnMathType_t requested_math(DType dtype, bool tf32) {
  if (dtype == DType::f16) return CUDNN_TENSOR_OP_MATH;
  if (dtype == DType::f32 && !tf32) return CUDNN_FMA_MATH;
  return CUDNN_DEFAULT_MATH;
}

bool math_allowed(cudnnMathType_t math, DType dtype, bool tf32) {
  return dtype != DType::f32 || tf32 || math == CUDNN_FMA_MATH;
}

struct AlgoKey {
  int device;
  DType dtype;
  bool tf32;
  ConvPass pass;
  std::array<int64_t, 8> dims;  // n, c, h, w, o, kh, kw, groups
  std::array<int64_t, 6> window;  // stride, padding, dilation
  auto operator<=>(const AlgoKey&) const = default;
};

struct ConvAlgo {
  int algo;
  cudnnMathType_t math;
  size_t workspace_bytes;
};

// The descriptors of one call: input x, weight w, output y, the convolution.
struct ConvDescriptors {
  ConvDescriptors(const Conv2dGeometry& g, DType dtype, bool tf32)
      : x(dtype, g.n, g.c, g.h, g.w),
        w(dtype, g.o, g.c_per_group(), g.kh, g.kw),
        y(dtype, g.n, g.o, g.oh, g.ow),
        conv(dtype, g.padding, g.stride, g.dilation, g.groups) {
    conv.set_math(requested_math(dtype, tf32));
  }

  cuda::TensorDescriptor x;
  cuda::FilterDescriptor w;
  cuda::TensorDescriptor y;
  cuda::ConvolutionDescriptor conv;
};

// The best-ranked algorithm cuDNN can run here in the math allowed, with
// the descriptors' math type set to it.
template <class Perf, class WorkspaceFn>
std::optional<ConvAlgo> first_usable(const Perf* perf, int found, ConvDescriptors& d, DType dtype, bool tf32,
                                     WorkspaceFn workspace_bytes) {
  for (int i = 0; i < found; ++i) {
    const Perf& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS || !math_allowed(p.mathType, dtype, tf32)) continue;
    d.conv.set_math(p.mathType);
    size_t bytes = 0;
    if (workspace_bytes(p.algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    return ConvAlgo{int(p.algo), p.mathType, bytes};
  }
  return std::nullopt;
}

std::optional<ConvAlgo> choose(cudnnHandle_t h, ConvDescriptors& d, ConvPass pass, DType dtype, bool tf32) {
  int found = 0;
  switch (pass) {
    case ConvPass::forward: {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      KILN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
                       "cudnnGetConvolutionForwardAlgorithm_v7");
      return first_usable(perf, found, d, dtype, tf32, [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
        return cudnnGetConvolutionForwardWorkspaceSize(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), algo, bytes);
      });
    }
    case ConvPass::grad_input: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf),
                       "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      return first_usable(perf, found, d, dtype, tf32, [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
        return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), algo,
                                                            bytes);
      });
    }
    case ConvPass::grad_weight: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
                                                                     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found,
                                                                     perf),
                       "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
      return first_usable(perf, found, d, dtype, tf32, [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), algo,
                                                              bytes);
      });
    }
  }
  return std::nullopt;
}

std::string describe(const Conv2dGeometry& g, DType dtype) {
  return str_cat(dtype_name(dtype), " input ", to_string(g.input_shape()), ", weight ", to_string(g.weight_shape()),
                 ", stride [", g.stride[0], ", ", g.stride[1], "], padding [", g.padding[0], ", ", g.padding[1],
                 "], dilation [", g.dilation[0], ", ", g.dilation[1], "], groups ", g.groups);
}

// Chosen once per key; the descriptors' math type is set to the choice.
ConvAlgo algorithm_for(cudnnHandle_t h, ConvDescriptors& d, const AlgoKey& key, const Conv2dGeometry& g) {
  static std::mutex mutex;
  static std::map<AlgoKey, ConvAlgo> chosen;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = chosen.find(key);
  if (it == chosen.end()) {
    const std::optional<ConvAlgo> algo = choose(h, d, key.pass, key.dtype, key.tf32);
    KILN_CHECK(algo.has_value(), Status::unsupported, "cuDNN has no convolution ", pass_name(key.pass),
               " algorithm for ", describe(g, key.dtype), " on cuda:", key.device);
    it = chosen.emplace(key, *algo).first;
  }
  d.conv.set_math(it->second.math);
  return it->second;
}

// What every convolution call on the GPU holds while it runs: the device,
// cuDNN's handle, the descriptors, and the algorithm of its pass with a
// workspace from the runtime's allocator.
class ConvCall {
 public:
  ConvCall(const KernelCall& c, const Conv2dGeometry& g)
      : device_(c.outputs[0].device().index),
        dtype_(c.outputs[0].dtype()),
        tf32_(c.runtime.options().allow_tf32),
        runtime_(c.runtime),
        geometry_(g),
        guard_(device_),
        handle_(cuda::cudnn_handle(device_)),
        descriptors_(g, dtype_, tf32_),
        scaling_(dtype_, 1.0, 0.0) {}

  cudnnHandle_t handle() const { return handle_.get(); }
  const ConvDescriptors& descriptors() const { return descriptors_; }
  const cuda::Scaling& scaling() const { return scaling_; }
  void* workspace() const { return workspace_.get(); }
  size_t workspace_bytes() const { return workspace_bytes_; }

  // Chooses (or recalls) the algorithm of `pass` and allocates its workspace.
  int prepare(ConvPass pass) {
    const Conv2dGeometry& g = geometry_;
    const AlgoKey key{device_,
                      dtype_,
                      tf32_,
                      pass,
                      {g.n, g.c, g.h, g.w, g.o, g.kh, g.kw, g.groups},
                      {g.stride[0], g.stride[1], g.padding[0], g.padding[1], g.dilation[0], g.dilation[1]}};
    const ConvAlgo algo = algorithm_for(handle(), descriptors_, key, g);
    workspace_bytes_ = algo.workspace_bytes;
    if (workspace_bytes_ > 0) workspace_ = runtime_.allocator(Device::cuda(device_))->allocate(workspace_bytes_);
    return algo.algo;
  }

 private:
  int device_;
  DType dtype_;
  bool tf32_;
  Runtime& runtime_;
  Conv2dGeometry geometry_;
  CudaDeviceGuard guard_;
  cuda::HandleLease<cudnnHandle_t> handle_;
  ConvDescriptors descriptors_;
  cuda::Scaling scaling_;
  size_t workspace_bytes_ = 0;
  DataPtr workspace_;
};

// Nothing to convolve: an empty batch, or no channels. cuDNN refuses
// descriptors with a zero size, so these never reach it.
bool any_empty(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    if (t->numel() == 0) return true;
  return false;
}

void zero(Tensor& t) {
  const int device = t.device().index;
  CudaDeviceGuard guard(device);
  KILN_CUDA_CHECK(cudaMemsetAsync(t.raw_data(), 0, t.nbytes(), cuda::compute_stream(device)), "zeroing ",
                  describe(t));
}

void conv2d_cuda(const KernelCall& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& w = c.inputs[1];
  const Tensor bias = c.inputs.size() > 2 ? c.inputs[2] : Tensor();
  Tensor& y = c.outputs[0];
  if (y.numel() == 0) return;
  const Conv2dGeometry g = nn::conv2d_geometry(c.op, c.attrs, x.shape(), w.shape());
  if (any_empty({&x, &w})) {
    zero(y);
  } else {
    ConvCall call(c, g);
    const ConvDescriptors& d = call.descriptors();
    const auto algo = cudnnConvolutionFwdAlgo_t(call.prepare(ConvPass::forward));
    KILN_CUDNN_CHECK(cudnnConvolutionForward(call.handle(), call.scaling().alpha(), d.x.get(), x.raw_data(), d.w.get(),
                                             w.raw_data(), d.conv.get(), algo, call.workspace(), call.workspace_bytes(),
                                             call.scaling().beta(), d.y.get(), y.raw_data()),
                     "cudnnConvolutionForward for ", describe(g, y.dtype()));
  }
  if (bias.defined()) cuda::add_channel_bias(y, bias);
}

// conv2d_grad_input(grad_output, weight), attribute input_shape.
void grad_input_cuda(const KernelCall& c) {
  const Tensor& dy = c.inputs[0];
  const Tensor& w = c.inputs[1];
  Tensor& dx = c.outputs[0];
  if (dx.numel() == 0) return;
  const Conv2dGeometry g = nn::conv2d_geometry(c.op, c.attrs, dx.shape(), w.shape());
  if (any_empty({&dy, &w})) return zero(dx);
  ConvCall call(c, g);
  const ConvDescriptors& d = call.descriptors();
  const auto algo = cudnnConvolutionBwdDataAlgo_t(call.prepare(ConvPass::grad_input));
  KILN_CUDNN_CHECK(cudnnConvolutionBackwardData(call.handle(), call.scaling().alpha(), d.w.get(), w.raw_data(),
                                                d.y.get(), dy.raw_data(), d.conv.get(), algo, call.workspace(),
                                                call.workspace_bytes(), call.scaling().beta(), d.x.get(),
                                                dx.raw_data()),
                   "cudnnConvolutionBackwardData for ", describe(g, dx.dtype()));
}

// conv2d_grad_weight(grad_output, input), attribute weight_shape.
void grad_weight_cuda(const KernelCall& c) {
  const Tensor& dy = c.inputs[0];
  const Tensor& x = c.inputs[1];
  Tensor& dw = c.outputs[0];
  if (dw.numel() == 0) return;
  const Conv2dGeometry g = nn::conv2d_geometry(c.op, c.attrs, x.shape(), dw.shape());
  if (any_empty({&dy, &x})) return zero(dw);
  ConvCall call(c, g);
  const ConvDescriptors& d = call.descriptors();
  const auto algo = cudnnConvolutionBwdFilterAlgo_t(call.prepare(ConvPass::grad_weight));
  KILN_CUDNN_CHECK(cudnnConvolutionBackwardFilter(call.handle(), call.scaling().alpha(), d.x.get(), x.raw_data(),
                                                  d.y.get(), dy.raw_data(), d.conv.get(), algo, call.workspace(),
                                                  call.workspace_bytes(), call.scaling().beta(), d.w.get(),
                                                  dw.raw_data()),
                   "cudnnConvolutionBackwardFilter for ", describe(g, dw.dtype()));
}

}  // namespace

void register_cuda_conv_kernels(OpRegistry& r) {
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    r.set_kernel("conv2d", DeviceType::cuda, t, conv2d_cuda);
    r.set_kernel("conv2d_grad_input", DeviceType::cuda, t, grad_input_cuda);
    r.set_kernel("conv2d_grad_weight", DeviceType::cuda, t, grad_weight_cuda);
  }
}

}  // namespace kiln
