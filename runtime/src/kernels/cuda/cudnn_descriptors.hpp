// cuDNN descriptors owned by RAII wrappers, the dtype mapping and the
// scaling factors cuDNN takes by pointer. Tensors reach kiln's kernels dense,
// so every descriptor here is a packed NCHW one.
#pragma once

#include <cudnn.h>

#include <array>
#include <cstdint>

#include "kiln/dtype.hpp"

namespace kiln::cuda {

cudnnDataType_t cudnn_data_type(DType t);

// cuDNN counts in int; larger sizes are refused with a message naming `what`.
int cudnn_int(int64_t value, const char* what);

class TensorDescriptor {
 public:
  TensorDescriptor(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w);
  ~TensorDescriptor() { cudnnDestroyTensorDescriptor(desc_); }
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

class FilterDescriptor {
 public:
  FilterDescriptor(DType dtype, int64_t o, int64_t c, int64_t kh, int64_t kw);
  ~FilterDescriptor() { cudnnDestroyFilterDescriptor(desc_); }
  FilterDescriptor(const FilterDescriptor&) = delete;
  FilterDescriptor& operator=(const FilterDescriptor&) = delete;
  cudnnFilterDescriptor_t get() const { return desc_; }

 private:
  cudnnFilterDescriptor_t desc_ = nullptr;
};

// A 2-d cross-correlation (what deep learning calls convolution) with its
// compute type (double for f64, float otherwise) and math type.
class ConvolutionDescriptor {
 public:
  ConvolutionDescriptor(DType dtype, const std::array<int64_t, 2>& padding, const std::array<int64_t, 2>& stride,
                        const std::array<int64_t, 2>& dilation, int64_t groups);
  ~ConvolutionDescriptor() { cudnnDestroyConvolutionDescriptor(desc_); }
  ConvolutionDescriptor(const ConvolutionDescriptor&) = delete;
  ConvolutionDescriptor& operator=(const ConvolutionDescriptor&) = delete;
  cudnnConvolutionDescriptor_t get() const { return desc_; }
  void set_math(cudnnMathType_t math) const;

 private:
  cudnnConvolutionDescriptor_t desc_ = nullptr;
};

// alpha and beta of a cuDNN call: double for f64 data, float otherwise.
class Scaling {
 public:
  Scaling(DType dtype, double alpha, double beta)
      : f64_(dtype == DType::f64), alpha64_(alpha), beta64_(beta), alpha32_(float(alpha)), beta32_(float(beta)) {}
  const void* alpha() const { return f64_ ? static_cast<const void*>(&alpha64_) : &alpha32_; }
  const void* beta() const { return f64_ ? static_cast<const void*>(&beta64_) : &beta32_; }

 private:
  bool f64_;
  double alpha64_, beta64_;
  float alpha32_, beta32_;
};

}  // namespace kiln::cuda
