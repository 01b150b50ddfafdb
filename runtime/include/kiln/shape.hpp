// Shape: up to 8 dimensions stored inline, so building and comparing shapes on
// the dispatch path never allocates.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace kiln {

inline constexpr int kMaxDims = 8;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);  // throws past kMaxDims dims

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  // Python-style index: -1 is the last dimension. Throws when out of range.
  int64_t at(int i) const { return dims_[normalize_dim(i)]; }
  int normalize_dim(int i) const;
  int64_t numel() const;
  const int64_t* begin() const { return dims_; }
  const int64_t* end() const { return dims_ + rank_; }
  const int64_t* data() const { return dims_; }
  std::span<const int64_t> span() const { return {dims_, size_t(rank_)}; }

  void push_back(int64_t d);  // throws past kMaxDims dims
  void erase(int i);
  void insert(int i, int64_t d);
  void resize(int rank, int64_t fill = 1);

  friend bool operator==(const Shape& a, const Shape& b);

 private:
  int64_t dims_[kMaxDims] = {};
  int rank_ = 0;
};

std::string to_string(const Shape& s);  // "[2, 3]"

// Row-major strides of a contiguous tensor of this shape, in elements.
Shape contiguous_strides(const Shape& s);

// Wraps a possibly negative dimension index into [0, rank); the message names
// the op when out of range.
int normalize_dim(int dim, int rank, const char* op_name);

// The shape two operands broadcast to, NumPy rules; throws naming the op.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op_name);

}  // namespace kiln
