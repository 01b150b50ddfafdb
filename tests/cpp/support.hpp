// What the tests of the C++ wrapper share: a runtime, a small two-class
// problem in a data source, and checks of the errors the wrapper throws.
#pragma once

#include <kiln/kiln.h>
#include <catch2/catch.hpp>
#include <cstdint>
#include <initializer_list>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

namespace kiln_test {

// A runtime with the core plugins from the build tree, one thread, seeded.
inline kiln::Runtime make_runtime(uint64_t seed = 1) {
  kiln::RuntimeOptions o;
  o.seed = seed;
  o.num_threads = 1;
  return kiln::Runtime(o);
}

// `n` points of the plane, class 1 when x > y (alternating classes), as
// a "tensors" source.
inline kiln::DataSource make_points(const kiln::Runtime& rt, int64_t n = 32) {
  std::vector<float> xy;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    const float a = static_cast<float>(i) / static_cast<float>(n), offset = i % 2 ? 0.5f : -0.5f;
    xy.insert(xy.end(), {a + offset, a - offset});
    labels.push_back(i % 2);
  }
  return kiln::DataSource(
      rt, "tensors",
      {{"input", kiln::Tensor::from_data(rt, xy, {n, 2})}, {"target", kiln::Tensor::from_data(rt, labels, {n})}});
}

inline kiln::Module make_linear(const kiln::Runtime& rt, int64_t in = 2, int64_t out = 2) {
  return kiln::Module(rt, "Linear", {{"in_features", in}, {"out_features", out}});
}

// The error thrown holds `status`, a message holding every one of
// `needles`, and that message is this thread's kiln_last_error().
inline void check_error(const kiln::Error& e, kiln_status status, std::initializer_list<const char*> needles) {
  INFO("message: " << e.what());
  CHECK(e.status() == status);
  CHECK(std::string(kiln_last_error()) == e.what());
  for (const char* needle : needles) CHECK_THAT(e.what(), Catch::Contains(needle));
}

}  // namespace kiln_test

// REQUIRE_KILN_ERROR(expression, KILN_ERR_..., "text of the message", ...)
#define REQUIRE_KILN_ERROR(expr, status, ...)                     \
  do {                                                            \
    try {                                                         \
      (void)(expr);                                               \
      FAIL("no kiln::Error from " #expr);                         \
    } catch (const kiln::Error& kiln_error_) {                    \
      kiln_test::check_error(kiln_error_, status, {__VA_ARGS__}); \
    }                                                             \
  } while (0)
