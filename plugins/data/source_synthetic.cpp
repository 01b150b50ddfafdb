// "synthetic": random examples computed from (seed, index) alone, for tests
// and benchmarks. input: values uniform in [0, 1) (f32 or f64) or in 0..255
// (u8) of the given shape; target: an i64 class in [0, num_classes).
#include <cmath>
#include <memory>

#include "random.hpp"
#include "sources.hpp"

namespace kiln_data {
namespace {

struct Synthetic {
  kiln_runtime* runtime;
  int64_t length;
  std::vector<int64_t> shape;
  int64_t num_classes;
  uint64_t seed;
  kiln_dtype dtype;
  uint64_t blocks_per_example;  // Philox blocks of the input, and one for the target
};

template <class T>
void fill_input(const Synthetic& s, uint64_t first_counter, T* out, int64_t n) {
  uint32_t block[4];
  for (int64_t i = 0; i < n; ++i) {
    if (i % 4 == 0) host->philox(s.seed, first_counter + uint64_t(i / 4), block);
    const uint32_t word = block[i % 4];
    if constexpr (sizeof(T) == 1)
      out[i] = T(word >> 24);
    else
      out[i] = T(uniform_float(word));
  }
}

kiln_status synthetic_create(void*, kiln_runtime* rt, const kiln_attr* config, size_t, void** state) {
  return guard([&] {
    auto s = std::make_unique<Synthetic>(Synthetic{rt, config[0].value.i, config_ints(config[1]), config[2].value.i,
                                                   uint64_t(config[3].value.i), config[4].value.dtype, 0});
    if (s->length < 0) fail(KILN_ERR_INVALID_ARGUMENT, "'length' is ", s->length, "; expected >= 0");
    if (s->num_classes < 1 || s->num_classes > INT32_MAX)
      fail(KILN_ERR_INVALID_ARGUMENT, "'num_classes' is ", s->num_classes, "; expected 1 .. 2^31-1");
    if (s->shape.size() > KILN_MAX_DIMS)
      fail(KILN_ERR_INVALID_ARGUMENT, "'shape' has ", s->shape.size(), " dimensions; at most ", KILN_MAX_DIMS);
    long double elements = 1;  // in long double: the product of bad dimensions may not fit an int64_t
    for (int64_t d : s->shape) {
      if (d < 0) fail(KILN_ERR_INVALID_ARGUMENT, "'shape' is ", shape_text(s->shape), "; dimensions must be >= 0");
      elements *= static_cast<long double>(d);
    }
    if (s->dtype != KILN_F32 && s->dtype != KILN_F64 && s->dtype != KILN_U8)
      fail(KILN_ERR_UNSUPPORTED, "'dtype' is ", dtype_name(s->dtype), "; expected f32, f64 or u8");
    // Each example takes its own Philox blocks: one per 4 input values, and one for the target.
    const long double blocks = std::floor((elements + 3) / 4) + 1;
    if (elements > 0x1p40L || blocks * static_cast<long double>(s->length) > 0x1p63L)
      fail(KILN_ERR_INVALID_ARGUMENT, "'length' ", s->length, " of ", shape_text(s->shape),
           " examples is more than one seed's random stream holds");
    s->blocks_per_example = uint64_t(blocks);
    *state = s.release();
  });
}

kiln_status synthetic_length(void* state, int64_t* out) {
  *out = static_cast<const Synthetic*>(state)->length;
  return KILN_OK;
}

kiln_status synthetic_get(void* state, int64_t index, kiln_example* out) {
  return guard([&] {
    const auto& s = *static_cast<const Synthetic*>(state);
    const uint64_t first = uint64_t(index) * s.blocks_per_example;
    TensorRef input = tensor_empty(s.runtime, s.shape, s.dtype);
    void* data = nullptr;
    check(host->tensor_address(input.get(), &data), "synthetic input");
    visit_dtype(s.dtype, "synthetic input",
                [&](auto zero) { fill_input(s, first, static_cast<decltype(zero)*>(data), numel(s.shape)); });
    const int64_t label = int64_t(uniform_below(philox_word(s.seed, first + s.blocks_per_example - 1),
                                                uint64_t(s.num_classes)));
    TensorRef target = tensor_from_bytes(s.runtime, &label, {}, KILN_I64);
    check(host->example_set(out, "input", input.get()), "setting 'input'");
    check(host->example_set(out, "target", target.get()), "setting 'target'");
  });
}

void synthetic_destroy(void* state) { delete static_cast<Synthetic*>(state); }

}  // namespace

kiln_status register_synthetic_source(kiln_registrar* r) {
  static const kiln_attr_spec config[] = {
      {kiln_attr_int("length", 0), 1, "number of examples"},
      {kiln_attr_ints("shape", nullptr, 0), 1, "shape of each input"},
      {kiln_attr_int("num_classes", 10), 0, "targets are in [0, num_classes)"},
      {kiln_attr_int("seed", 0), 0, "the same seed and index always give the same example"},
      {kiln_attr_dtype("dtype", KILN_F32), 0, "f32 or f64 (uniform in [0, 1)) or u8 (0..255)"},
  };
  kiln_data_source_type type{};
  type.size = sizeof type;
  type.name = "synthetic";
  type.config = config;
  type.n_config = 5;
  type.create = synthetic_create;
  type.length = synthetic_length;
  type.get = synthetic_get;
  type.destroy = synthetic_destroy;
  return host->register_data_source(r, &type);
}

}  // namespace kiln_data
