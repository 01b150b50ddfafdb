#include "kiln/shape.hpp"

#include <algorithm>

#include "kiln/error.hpp"

namespace kiln {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  KILN_CHECK(dims.size() <= size_t(kMaxDims), Status::invalid_argument, "a shape has at most ", kMaxDims,
             " dimensions, got ", dims.size());
  rank_ = int(dims.size());
  std::copy(dims.begin(), dims.end(), dims_);
}

int Shape::normalize_dim(int i) const { return kiln::normalize_dim(i, rank_, "shape"); }

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= dims_[i];
  return n;
}

void Shape::push_back(int64_t d) {
  KILN_CHECK(rank_ < kMaxDims, Status::invalid_argument, "a shape has at most ", kMaxDims, " dimensions");
  dims_[rank_++] = d;
}

void Shape::erase(int i) {
  std::copy(dims_ + i + 1, dims_ + rank_, dims_ + i);
  --rank_;
  dims_[rank_] = 0;
}

void Shape::insert(int i, int64_t d) {
  KILN_CHECK(rank_ < kMaxDims, Status::invalid_argument, "a shape has at most ", kMaxDims, " dimensions");
  std::copy_backward(dims_ + i, dims_ + rank_, dims_ + rank_ + 1);
  dims_[i] = d;
  ++rank_;
}

void Shape::resize(int rank, int64_t fill) {
  KILN_CHECK(rank >= 0 && rank <= kMaxDims, Status::invalid_argument, "a shape has at most ", kMaxDims,
             " dimensions");
  for (int i = rank_; i < rank; ++i) dims_[i] = fill;
  for (int i = rank; i < kMaxDims; ++i) dims_[i] = 0;
  rank_ = rank;
}

bool operator==(const Shape& a, const Shape& b) {
  return a.rank_ == b.rank_ && std::equal(a.dims_, a.dims_ + a.rank_, b.dims_);
}

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (int i = 0; i < s.rank(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

Shape contiguous_strides(const Shape& s) {
  Shape strides;
  strides.resize(s.rank());
  int64_t acc = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    strides[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
  return strides;
}

int normalize_dim(int dim, int rank, const char* op_name) {
  const int r = std::max(rank, 1);  // a 0-d tensor accepts dim 0 and -1
  KILN_CHECK(dim >= -r && dim < r, Status::invalid_argument, "op '", op_name, "': dimension ", dim,
             " is out of range for a tensor of rank ", rank, " (expected ", -r, " to ", r - 1, ")");
  return dim < 0 ? dim + r : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op_name) {
  const int rank = std::max(a.rank(), b.rank());
  Shape out;
  out.resize(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    KILN_CHECK(da == db || da == 1 || db == 1, Status::shape_mismatch, "op '", op_name, "': shapes ",
               to_string(a), " and ", to_string(b), " cannot be broadcast (dimension ", i, ": ", da,
               " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace kiln
