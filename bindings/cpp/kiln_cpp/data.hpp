// The pieces of the input pipeline before the loader, each move-only (the C
// API has no retain for them): kiln::Example (named CPU tensors, also what
// a safetensors file holds), kiln::DataSource and kiln::Transform.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attr.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "kiln/kiln.h"
#include "runtime.hpp"
#include "tensor.hpp"

namespace kiln {

class Example : public detail::UniqueHandle<kiln_example, kiln_example_release> {
 public:
  // An example without fields.
  explicit Example(const Runtime& rt) {
    kiln_example* ex = nullptr;
    check(kiln_example_create(rt.get(), &ex));
    *this = adopt(ex);
  }
  explicit Example(std::nullptr_t) noexcept {}
  // Takes over the caller's handle.
  static Example adopt(kiln_example* ex) noexcept { return Example(ex); }

  // Every tensor of a safetensors file, as CPU tensors in the file's order.
  static Example load_safetensors(const Runtime& rt, const std::string& path) {
    kiln_example* ex = nullptr;
    check(kiln_safetensors_load(rt.get(), path.c_str(), &ex));
    return adopt(ex);
  }
  // Writes the fields under their names (atomically: see kiln.h).
  void save_safetensors(const std::string& path) const { check(kiln_safetensors_save(get(), path.c_str())); }

  // Sets or replaces a field.
  void set(const std::string& name, const Tensor& t) { check(kiln_example_set(get(), name.c_str(), t.get())); }
  // A field; KILN_ERR_NOT_FOUND when the example has none of that name.
  Tensor field(const std::string& name) const {
    kiln_tensor* t = nullptr;
    check(kiln_example_get(get(), name.c_str(), &t));
    return Tensor::adopt(t);
  }

  size_t size() const {
    size_t count = 0;
    check(kiln_example_field_count(get(), &count));
    return count;
  }
  std::vector<NamedTensor> fields() const {
    return detail::named_tensors(get(), kiln_example_field_count, kiln_example_field);
  }

 private:
  explicit Example(kiln_example* ex) noexcept : UniqueHandle(ex) {}
};

class DataSource : public detail::UniqueHandle<kiln_data_source, kiln_data_source_release> {
 public:
  // A source of a registered type ("idx", "npy", "tensors", "synthetic", ...);
  // files are read or checked here.
  DataSource(const Runtime& rt, const std::string& type, const AttrList& config = {}) {
    kiln_data_source* src = nullptr;
    check(kiln_data_source_create(rt.get(), type.c_str(), config.data(), config.size(), &src));
    *this = adopt(src);
  }
  explicit DataSource(std::nullptr_t) noexcept {}
  // Takes over the caller's handle.
  static DataSource adopt(kiln_data_source* src) noexcept { return DataSource(src); }

  int64_t size() const {
    int64_t length = 0;
    check(kiln_data_source_length(get(), &length));
    return length;
  }
  // Example `index`, 0 <= index < size(); safe from several threads at once.
  Example at(int64_t index) const {
    kiln_example* ex = nullptr;
    check(kiln_data_source_get(get(), index, &ex));
    return Example::adopt(ex);
  }

 private:
  explicit DataSource(kiln_data_source* src) noexcept : UniqueHandle(src) {}
};

class Transform : public detail::UniqueHandle<kiln_transform, kiln_transform_release> {
 public:
  // A transform of a registered type ("to_float", "normalize", ...).
  Transform(const Runtime& rt, const std::string& type, const AttrList& config = {}) {
    kiln_transform* tr = nullptr;
    check(kiln_transform_create(rt.get(), type.c_str(), config.data(), config.size(), &tr));
    *this = adopt(tr);
  }
  explicit Transform(std::nullptr_t) noexcept {}
  // Takes over the caller's handle.
  static Transform adopt(kiln_transform* tr) noexcept { return Transform(tr); }

  // Transforms `ex` in place; random choices come from `seed` alone.
  void apply(Example& ex, uint64_t seed) const { check(kiln_transform_apply(get(), ex.get(), seed)); }

 private:
  explicit Transform(kiln_transform* tr) noexcept : UniqueHandle(tr) {}
};

}  // namespace kiln
