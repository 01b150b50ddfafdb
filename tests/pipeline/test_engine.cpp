// The pipeline engine under examples no registered source makes: fields
// that differ in shape, dtype or names within a batch, and a maker that
// fails for one index, with and without workers.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "kiln/data/loader.hpp"
#include "kiln/memory/cpu_allocator.hpp"

namespace {

using kiln::DType;
using kiln::Shape;
using kiln::Tensor;
using kiln::data::Loader;
using kiln::data::LoaderOptions;
using kiln::data::NamedTensors;

const auto memory = std::make_shared<kiln::CpuAllocator>();

// Example `index`: "input" f32 `shape` filled with the index.
NamedTensors example_of(int64_t index, const Shape& shape, DType dtype = DType::f32) {
  Tensor t = Tensor::empty(shape, dtype, memory);
  std::memset(t.raw_data(), int(index), t.nbytes());
  return {{"input", t}};
}

LoaderOptions options(int64_t batch_size, int workers) {
  LoaderOptions o;
  o.batch_size = batch_size;
  o.num_workers = workers;
  return o;
}

// The message of the error the epoch ends with, after `good` good batches.
std::string epoch_failure(Loader& loader, int good) {
  loader.start_epoch(0);
  for (int i = 0; i < good; ++i) REQUIRE(loader.next().has_value());
  try {
    loader.next();
  } catch (const kiln::Error& e) {
    CHECK_FALSE(loader.next().has_value());  // the epoch is over
    return e.what();
  }
  FAIL("the epoch did not fail");
  return {};
}

}  // namespace

TEST_CASE("pipeline engine: stacked rows hold their examples", "[pipeline]") {
  Loader loader(5, options(2, 2), [](int64_t i, uint64_t) { return example_of(i, {3}); }, memory);
  loader.start_epoch(0);
  int64_t first = 0;
  while (auto batch = loader.next()) {
    const Tensor& input = batch->front().tensor;
    REQUIRE(input.dim(1) == 3);
    for (int64_t row = 0; row < input.dim(0); ++row)
      CHECK(static_cast<const unsigned char*>(input.raw_data())[row * 12] == first + row);
    first += input.dim(0);
  }
  CHECK(first == 5);
}

TEST_CASE("pipeline engine: examples of one batch that differ fail naming both", "[pipeline]") {
  for (int workers : {0, 3}) {
    Loader shapes(6, options(3, workers),
                  [](int64_t i, uint64_t) { return example_of(i, i == 4 ? Shape{2, 5} : Shape{2, 4}); }, memory);
    const std::string shape_error = epoch_failure(shapes, 1);
    CHECK(shape_error.find("field 'input' of example 4 is f32[2, 5], of example 3 in the same batch f32[2, 4]") !=
          std::string::npos);

    Loader dtypes(6, options(3, workers),
                  [](int64_t i, uint64_t) { return example_of(i, {2}, i == 1 ? DType::f64 : DType::f32); }, memory);
    CHECK(epoch_failure(dtypes, 0).find("example 1 is f64[2], of example 0 in the same batch f32[2]") !=
          std::string::npos);

    Loader names(6, options(2, workers),
                 [](int64_t i, uint64_t) {
                   NamedTensors ex = example_of(i, {1});
                   if (i == 3) ex.push_back({"target", ex.front().tensor});
                   return ex;
                 },
                 memory);
    CHECK(epoch_failure(names, 1).find("example 3 has fields 'input', 'target', example 2 of the same batch has "
                                       "fields 'input'") != std::string::npos);
  }
}

TEST_CASE("pipeline engine: a failing example ends the epoch with its index", "[pipeline]") {
  for (int workers : {0, 1, 4}) {
    Loader loader(40, options(4, workers),
                  [](int64_t i, uint64_t) {
                    KILN_CHECK(i != 9, kiln::Status::io, "example file is truncated");
                    return example_of(i, {2});
                  },
                  memory);
    const std::string message = epoch_failure(loader, 2);
    CHECK(message == "example 9 (epoch 0): example file is truncated");
    loader.start_epoch(1);  // a new epoch, abandoned at once by the destructor
  }
}
