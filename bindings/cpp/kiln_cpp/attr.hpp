// Named attributes (kiln_attr) from C++ values, so that a configuration is
// an initializer list of name/value pairs:
//   kiln::Module(rt, "Conv2d", {{"in_channels", 1}, {"out_channels", 8}, {"kernel_size", {3, 3}},
//                               {"padding", 1}, {"bias", false}})
// The value's type picks the attribute's: integers, floating-point numbers,
// bool, lists of either ({3, 3}, {0.9, 0.999}, or vectors), strings, a
// kiln_dtype, a tensor.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/kiln.h"
#include "tensor.hpp"

namespace kiln {

// One attribute. It owns copies of its name, strings and lists; a tensor
// value stays the caller's and must live until the call that uses it.
class Attr {
 public:
  template <class Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  Attr(std::string name, Int value) : name_(std::move(name)), type_(KILN_ATTR_INT), int_(static_cast<int64_t>(value)) {}
  template <class Float, std::enable_if_t<std::is_floating_point_v<Float>, int> = 0>
  Attr(std::string name, Float value)
      : name_(std::move(name)), type_(KILN_ATTR_FLOAT), float_(static_cast<double>(value)) {}
  Attr(std::string name, bool value) : name_(std::move(name)), type_(KILN_ATTR_BOOL), int_(value) {}
  // A braced list: {3, 3} gives integers, {0.9, 0.999} floats.
  template <class Number, std::enable_if_t<std::is_arithmetic_v<Number> && !std::is_same_v<Number, bool>, int> = 0>
  Attr(std::string name, std::initializer_list<Number> values) : name_(std::move(name)) {
    if constexpr (std::is_integral_v<Number>) {
      type_ = KILN_ATTR_INTS;
      ints_.assign(values.begin(), values.end());
    } else {
      type_ = KILN_ATTR_FLOATS;
      floats_.assign(values.begin(), values.end());
    }
  }
  Attr(std::string name, std::vector<int64_t> values)
      : name_(std::move(name)), type_(KILN_ATTR_INTS), ints_(std::move(values)) {}
  Attr(std::string name, std::vector<double> values)
      : name_(std::move(name)), type_(KILN_ATTR_FLOATS), floats_(std::move(values)) {}
  Attr(std::string name, const char* value) : name_(std::move(name)), type_(KILN_ATTR_STRING), string_(value) {}
  Attr(std::string name, std::string value)
      : name_(std::move(name)), type_(KILN_ATTR_STRING), string_(std::move(value)) {}
  Attr(std::string name, kiln_dtype value) : name_(std::move(name)), type_(KILN_ATTR_DTYPE), dtype_(value) {}
  Attr(std::string name, const Tensor& value) : name_(std::move(name)), type_(KILN_ATTR_TENSOR), tensor_(value.get()) {}

  // The C attribute, pointing into this object: valid while it lives unchanged.
  kiln_attr c_attr() const {
    switch (type_) {
      case KILN_ATTR_INT: return kiln_attr_int(name_.c_str(), int_);
      case KILN_ATTR_FLOAT: return kiln_attr_float(name_.c_str(), float_);
      case KILN_ATTR_BOOL: return kiln_attr_bool(name_.c_str(), static_cast<int>(int_));
      case KILN_ATTR_INTS: return kiln_attr_ints(name_.c_str(), ints_.data(), ints_.size());
      case KILN_ATTR_FLOATS: return kiln_attr_floats(name_.c_str(), floats_.data(), floats_.size());
      case KILN_ATTR_STRING: return kiln_attr_string(name_.c_str(), string_.c_str());
      case KILN_ATTR_DTYPE: return kiln_attr_dtype(name_.c_str(), dtype_);
      case KILN_ATTR_TENSOR: return kiln_attr_tensor(name_.c_str(), tensor_);
    }
    return kiln_attr_int(name_.c_str(), int_);  // not reached: every type is handled above
  }

 private:
  std::string name_;
  kiln_attr_type type_;
  int64_t int_ = 0;  // also the bool
  double float_ = 0.0;
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
  std::string string_;
  kiln_dtype dtype_ = KILN_F32;
  kiln_tensor* tensor_ = nullptr;
};

// The attributes of one call, as the C API takes them. Built in place
// from a braced list or a vector; it keeps its own copies, so it can
// neither be copied nor moved (its C view points into them).
class AttrList {
 public:
  AttrList() = default;
  AttrList(std::initializer_list<Attr> attrs) : attrs_(attrs) { make_view(); }
  AttrList(std::vector<Attr> attrs) : attrs_(std::move(attrs)) { make_view(); }
  AttrList(const AttrList&) = delete;
  AttrList& operator=(const AttrList&) = delete;

  const kiln_attr* data() const noexcept { return view_.data(); }
  size_t size() const noexcept { return view_.size(); }

 private:
  void make_view() {
    view_.reserve(attrs_.size());
    for (const Attr& a : attrs_) view_.push_back(a.c_attr());
  }

  std::vector<Attr> attrs_;
  std::vector<kiln_attr> view_;
};

}  // namespace kiln
