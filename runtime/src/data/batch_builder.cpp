// Stacking examples into preallocated batch tensors.
#include "kiln/data/batch_builder.hpp"

#include <cstring>

#include "kiln/error.hpp"
#include "kiln/kernels/cpu/strided.hpp"

namespace kiln::data {
namespace {

std::string field_names(const NamedTensors& fields) {
  if (fields.empty()) return "no fields";
  std::string names = "fields";
  for (size_t i = 0; i < fields.size(); ++i) names.append(i ? ", '" : " '").append(fields[i].name).append("'");
  return names;
}

std::string layout_text(DType dtype, const Shape& shape) { return str_cat(dtype_name(dtype), to_string(shape)); }
std::string layout_text(const Tensor& t) { return layout_text(t.dtype(), t.shape()); }

// The shape of one row of a batch tensor: its shape without the batch dimension.
Shape row_shape(const Tensor& batch) {
  Shape shape = batch.shape();
  shape.erase(0);
  return shape;
}

// Copies the elements of `src` (any layout, on the CPU) row-major to `dst`.
void copy_dense(const Tensor& src, void* dst) {
  if (src.is_contiguous()) {
    std::memcpy(dst, src.raw_data(), src.nbytes());
    return;
  }
  const size_t elem = src.element_size();
  const auto* from = static_cast<const char*>(src.raw_data());
  auto* to = static_cast<char*>(dst);
  cpu::for_each_offset2(src.shape(), src.strides(), contiguous_strides(src.shape()), 0, src.numel(),
                        [&](int64_t, int64_t src_offset, int64_t dst_offset) {
                          std::memcpy(to + dst_offset * int64_t(elem), from + src_offset * int64_t(elem), elem);
                        });
}

}  // namespace

BatchBuilder::BatchBuilder(int64_t batch_size, std::shared_ptr<Allocator> memory)
    : batch_size_(batch_size), memory_(std::move(memory)) {}

void BatchBuilder::allocate_like(const NamedTensors& first) {
  batch_.reserve(first.size());
  for (const NamedTensor& field : first) {
    KILN_CHECK(field.tensor.device().is_cpu(), Status::device_mismatch, "field '", field.name, "' of example ",
               first_index_, " is on ", to_string(field.tensor.device()), "; examples hold CPU tensors");
    Shape shape = field.tensor.shape();
    KILN_CHECK(shape.rank() < kMaxDims, Status::shape_mismatch, "field '", field.name, "' of example ", first_index_,
               " is ", layout_text(field.tensor), "; a batch adds a dimension, so examples may have at most ",
               kMaxDims - 1);
    shape.insert(0, batch_size_);
    batch_.push_back({field.name, Tensor::empty(shape, field.tensor.dtype(), memory_)});
  }
}

void BatchBuilder::check_fields(int64_t index, const NamedTensors& example) const {
  bool same_names = example.size() == batch_.size();
  for (size_t f = 0; same_names && f < example.size(); ++f) same_names = example[f].name == batch_[f].name;
  KILN_CHECK(same_names, Status::invalid_argument, "example ", index, " has ", field_names(example), ", example ",
             first_index_, " of the same batch has ", field_names(batch_),
             "; the examples of a batch must have the same fields");
  for (size_t f = 0; f < example.size(); ++f) {
    const Tensor& got = example[f].tensor;
    const Shape want = row_shape(batch_[f].tensor);
    const DType want_dtype = batch_[f].tensor.dtype();
    if (got.shape() == want && got.dtype() == want_dtype) continue;
    throw_error(got.dtype() == want_dtype ? Status::shape_mismatch : Status::dtype_mismatch,
                str_cat("field '", example[f].name, "' of example ", index, " is ", layout_text(got), ", of example ",
                        first_index_, " in the same batch ", layout_text(want_dtype, want),
                        "; the examples of a batch must agree in shape and dtype to be stacked"));
  }
}

void BatchBuilder::add(int64_t index, const NamedTensors& example) {
  KILN_CHECK(rows_ < batch_size_, Status::internal, "example ", index, " added to a full batch of ", batch_size_);
  if (rows_ == 0) {
    first_index_ = index;
    allocate_like(example);
  } else {
    check_fields(index, example);
  }
  for (size_t f = 0; f < example.size(); ++f) {
    const Tensor& field = example[f].tensor;
    copy_dense(field, static_cast<char*>(batch_[f].tensor.raw_data()) + rows_ * int64_t(field.nbytes()));
  }
  ++rows_;
}

NamedTensors BatchBuilder::finish() {
  KILN_CHECK(rows_ == batch_size_, Status::internal, "a batch of ", batch_size_, " finished with ", rows_,
             " examples");
  return std::move(batch_);
}

}  // namespace kiln::data
