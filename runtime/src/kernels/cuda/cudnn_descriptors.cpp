#include "cudnn_descriptors.hpp"

#include <limits>

#include "cudnn_error.hpp"

namespace kiln::cuda {

cudnnDataType_t cudnn_data_type(DType t) {
  switch (t) {
    case DType::f64: return CUDNN_DATA_DOUBLE;
    case DType::f16: return CUDNN_DATA_HALF;
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

int cudnn_int(int64_t value, const char* what) {
  KILN_CHECK(value <= std::numeric_limits<int>::max(), Status::unsupported, what, " is ", value,
             ", more than cuDNN can address (", std::numeric_limits<int>::max(), ")");
  return int(value);
}

TensorDescriptor::TensorDescriptor(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int dims[4] = {cudnn_int(n, "a batch"), cudnn_int(c, "a channel count"), cudnn_int(h, "a height"),
                       cudnn_int(w, "a width")};
  KILN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_), "cudnnCreateTensorDescriptor");
  const cudnnStatus_t status =
      cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, cudnn_data_type(dtype), dims[0], dims[1], dims[2], dims[3]);
  if (status != CUDNN_STATUS_SUCCESS) cudnnDestroyTensorDescriptor(desc_);
  KILN_CUDNN_CHECK(status, "describing a [", n, ", ", c, ", ", h, ", ", w, "] ", dtype_name(dtype), " tensor to cuDNN");
}

FilterDescriptor::FilterDescriptor(DType dtype, int64_t o, int64_t c, int64_t kh, int64_t kw) {
  const int dims[4] = {cudnn_int(o, "an output channel count"), cudnn_int(c, "a channel count"),
                       cudnn_int(kh, "a kernel height"), cudnn_int(kw, "a kernel width")};
  KILN_CUDNN_CHECK(cudnnCreateFilterDescriptor(&desc_), "cudnnCreateFilterDescriptor");
  const cudnnStatus_t status = cudnnSetFilter4dDescriptor(desc_, cudnn_data_type(dtype), CUDNN_TENSOR_NCHW, dims[0],
                                                          dims[1], dims[2], dims[3]);
  if (status != CUDNN_STATUS_SUCCESS) cudnnDestroyFilterDescriptor(desc_);
  KILN_CUDNN_CHECK(status, "describing a [", o, ", ", c, ", ", kh, ", ", kw, "] ", dtype_name(dtype),
                   " filter to cuDNN");
}

ConvolutionDescriptor::ConvolutionDescriptor(DType dtype, const std::array<int64_t, 2>& padding,
                                             const std::array<int64_t, 2>& stride,
                                             const std::array<int64_t, 2>& dilation, int64_t groups) {
  const int window[6] = {cudnn_int(padding[0], "a padding"),   cudnn_int(padding[1], "a padding"),
                         cudnn_int(stride[0], "a stride"),     cudnn_int(stride[1], "a stride"),
                         cudnn_int(dilation[0], "a dilation"), cudnn_int(dilation[1], "a dilation")};
  const int group_count = cudnn_int(groups, "a group count");
  KILN_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc_), "cudnnCreateConvolutionDescriptor");
  const cudnnDataType_t compute = dtype == DType::f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  cudnnStatus_t status = cudnnSetConvolution2dDescriptor(desc_, window[0], window[1], window[2], window[3], window[4],
                                                         window[5], CUDNN_CROSS_CORRELATION, compute);
  if (status == CUDNN_STATUS_SUCCESS) status = cudnnSetConvolutionGroupCount(desc_, group_count);
  if (status != CUDNN_STATUS_SUCCESS) cudnnDestroyConvolutionDescriptor(desc_);
  KILN_CUDNN_CHECK(status, "describing a convolution with ", groups, " group(s) to cuDNN");
}

void ConvolutionDescriptor::set_math(cudnnMathType_t math) const {
  KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(desc_, math), "setting the math type of a cuDNN convolution");
}

}  // namespace kiln::cuda
