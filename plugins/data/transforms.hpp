// The transforms of the kiln-data plugin, and what they share: reading a
// field of an example as contiguous CPU data, and the callbacks of a type
// built from a small class. Kernels are plain loops: transforms run on the
// data pipeline's worker threads, one example per thread.
#pragma once

#include <string>
#include <vector>

#include "support.hpp"

namespace kiln_data {

kiln_status register_to_float(kiln_registrar* r);
kiln_status register_normalize(kiln_registrar* r);
kiln_status register_random_crop(kiln_registrar* r);
kiln_status register_random_hflip(kiln_registrar* r);
kiln_status register_one_hot(kiln_registrar* r);

// A field of an example as a contiguous CPU tensor.
struct FieldTensor {
  TensorRef tensor;
  kiln_tensor_desc desc;
  std::vector<int64_t> shape;
  void* data;
};

// The field `name` of `ex`; a missing field or one not on the CPU fails
// naming `transform`.
FieldTensor read_field(kiln_example* ex, const std::string& name, const char* transform);
// A new contiguous CPU tensor and its data.
FieldTensor new_field_tensor(kiln_runtime* rt, const std::vector<int64_t>& shape, kiln_dtype dtype);
void write_field(kiln_example* ex, const std::string& name, const FieldTensor& t);

// Registers a transform whose state is a `State`, built as
// State(runtime, config) and applied as state.apply(example, seed) const;
// what either throws becomes the callback's error.
template <class State>
kiln_status register_transform(kiln_registrar* r, const char* name, const kiln_attr_spec* config, size_t n_config) {
  kiln_transform_type type{};
  type.size = sizeof type;
  type.name = name;
  type.config = config;
  type.n_config = n_config;
  type.create = [](void*, kiln_runtime* rt, const kiln_attr* c, size_t, void** state) {
    return guard([&] { *state = new State(rt, c); });
  };
  type.apply = [](void* state, kiln_example* ex, uint64_t seed) {
    return guard([&] { static_cast<const State*>(state)->apply(ex, seed); });
  };
  type.destroy = [](void* state) { delete static_cast<State*>(state); };
  return host->register_transform(r, &type);
}

}  // namespace kiln_data
