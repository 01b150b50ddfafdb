// kiln::Example, kiln::DataSource, kiln::Transform (move-only) and
// kiln::Loader (shared), and safetensors files of examples.
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "support.hpp"

static_assert(!std::is_copy_constructible_v<kiln::Example> && std::is_nothrow_move_constructible_v<kiln::Example>);
static_assert(!std::is_copy_constructible_v<kiln::DataSource> && !std::is_copy_assignable_v<kiln::DataSource>);
static_assert(!std::is_copy_constructible_v<kiln::Transform> && std::is_move_assignable_v<kiln::Transform>);
static_assert(std::is_copy_constructible_v<kiln::Loader>);

TEST_CASE("Example fields: set, read, list, replace", "[data]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Example ex(rt);
  CHECK(ex.size() == 0);
  ex.set("input", kiln::Tensor::full(rt, {2}, 1.0));
  ex.set("target", kiln::Tensor::full(rt, {}, 3.0, KILN_I64));
  ex.set("input", kiln::Tensor::full(rt, {2}, 2.0));
  CHECK(ex.size() == 2);
  CHECK(ex.field("input").to_vector<float>() == std::vector<float>{2, 2});
  const std::vector<kiln::NamedTensor> fields = ex.fields();
  REQUIRE(fields.size() == 2);
  CHECK(fields[0].name == "input");
  CHECK(fields[1].name == "target");
  CHECK(fields[1].tensor.item<int64_t>() == 3);
  REQUIRE_KILN_ERROR(ex.field("label"), KILN_ERR_NOT_FOUND, "label");
}

TEST_CASE("Example holds its tensors until it is released, and moves", "[data][lifetime]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  float value = 1.0f;
  int releases = 0;
  kiln::Example ex(rt);
  ex.set("input", kiln::Tensor::wrap(rt, &value, sizeof value, {1}, KILN_F32, [&releases] { ++releases; }));
  kiln::Example moved(std::move(ex));
  CHECK_FALSE(ex);
  CHECK(releases == 0);
  moved = kiln::Example(nullptr);
  CHECK(releases == 1);
}

TEST_CASE("Example safetensors files: saved and read back", "[data][checkpoint]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const std::string path = KILN_CPP_TEST_DIR "/example.safetensors";
  kiln::Example ex(rt);
  ex.set("weights", kiln::Tensor::from_data(rt, std::vector<double>{1.5, -2.0, 4.25}, {3}));
  ex.set("ids", kiln::Tensor::from_data(rt, std::vector<int32_t>{7, 8}, {2, 1}));
  ex.save_safetensors(path);
  const kiln::Example back = kiln::Example::load_safetensors(rt, path);
  REQUIRE(back.size() == 2);
  CHECK(back.field("weights").to_vector<double>() == std::vector<double>{1.5, -2.0, 4.25});
  CHECK(back.field("ids").shape() == kiln::Shape{2, 1});
  CHECK(back.field("ids").to_vector<int32_t>() == std::vector<int32_t>{7, 8});
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f);
  std::fputs("not a safetensors file", f);
  std::fclose(f);
  REQUIRE_KILN_ERROR(kiln::Example::load_safetensors(rt, path), KILN_ERR_IO, "example.safetensors");
  std::remove(path.c_str());
  REQUIRE_KILN_ERROR(ex.save_safetensors("/nonexistent/folder/example.safetensors"), KILN_ERR_IO,
                     "/nonexistent/folder");
}

TEST_CASE("DataSource gives examples by index", "[data]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const kiln::DataSource points = kiln_test::make_points(rt, 10);
  CHECK(points.size() == 10);
  const kiln::Example third = points.at(3);
  CHECK(third.field("input").shape() == kiln::Shape{2});
  CHECK(third.field("target").item<int64_t>() == 1);
  REQUIRE_KILN_ERROR(points.at(10), KILN_ERR_INVALID_ARGUMENT, "10");
  REQUIRE_KILN_ERROR(kiln::DataSource(rt, "idx", {{"images", "/nonexistent/images.idx"}}), KILN_ERR_INVALID_ARGUMENT,
                     "'labels'", "required");
  REQUIRE_KILN_ERROR(
      kiln::DataSource(rt, "idx", {{"images", "/nonexistent/images.idx"}, {"labels", "/nonexistent/labels.idx"}}),
      KILN_ERR_IO, "/nonexistent/images.idx");
  REQUIRE_KILN_ERROR(kiln::DataSource(rt, "tensor"), KILN_ERR_NOT_FOUND, "tensors");
}

TEST_CASE("Transform changes an example in place", "[data]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const kiln::Transform normalize(rt, "normalize", {{"mean", {1.0}}, {"std", {2.0}}});
  kiln::Example ex(rt);
  ex.set("input", kiln::Tensor::from_data(rt, std::vector<float>{1, 3, 5}, {1, 3}));
  normalize.apply(ex, 0);
  CHECK(ex.field("input").to_vector<float>() == std::vector<float>{0, 1, 2});
  REQUIRE_KILN_ERROR(kiln::Transform(rt, "normalize", {{"mean", {1.0}}}), KILN_ERR_INVALID_ARGUMENT, "std");
}

TEST_CASE("Loader batches, epochs, resuming at a batch, statistics", "[data][loader]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const kiln::DataSource points = kiln_test::make_points(rt, 10);
  kiln::LoaderOptions o;
  o.batch_size = 4;
  o.shuffle = true;
  o.seed = 3;
  kiln::Loader loader(points, o);
  CHECK(loader.length().examples == 10);
  CHECK(loader.length().batches == 3);
  loader.start_epoch(0);
  std::vector<std::vector<float>> epoch;
  while (std::optional<kiln::Example> batch = loader.next()) epoch.push_back(batch->field("input").to_vector<float>());
  REQUIRE(epoch.size() == 3);
  CHECK(epoch[0].size() == 8);  // 4 examples of 2 values
  CHECK(epoch[2].size() == 4);  // the last, smaller batch
  loader.start_epoch_at(0, 2);
  const std::optional<kiln::Example> resumed = loader.next();
  REQUIRE(resumed);
  CHECK(resumed->field("input").to_vector<float>() == epoch[2]);
  CHECK_FALSE(loader.next());
  CHECK(loader.stats().batches == 4);
  REQUIRE_KILN_ERROR(loader.start_epoch_at(0, 4), KILN_ERR_INVALID_ARGUMENT, "4");
  o.batch_size = 0;
  REQUIRE_KILN_ERROR(kiln::Loader(points, o), KILN_ERR_INVALID_ARGUMENT, "batch_size");
}

TEST_CASE("Loader runs its transforms and keeps its source and transforms", "[data][loader][lifetime]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Loader kept(nullptr);
  {
    const kiln::DataSource points = kiln_test::make_points(rt, 4);
    const kiln::Transform shift(rt, "normalize", {{"mean", {1.0}}, {"std", {1.0}}});
    kiln::LoaderOptions o;
    o.batch_size = 4;
    kiln::Loader loader(points, o, {shift});
    kept = loader;
    CHECK(kept.get() == loader.get());
  }
  kept.start_epoch(0);
  const std::optional<kiln::Example> batch = kept.next();
  REQUIRE(batch);
  const std::vector<float> x = batch->field("input").to_vector<float>();
  CHECK(x[0] == -1.5f);  // the first point, (-0.5, 0.5), shifted by -1
  CHECK(x[1] == -0.5f);
  CHECK(kiln::Loader::retain(kept.get()).length().examples == 4);
}
