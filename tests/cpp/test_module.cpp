// kiln::Module: layers, containers, forward, shapes, parameters and
// buffers, modes, devices and dtypes, weights files, and shared ownership.
#include <cstdio>
#include <string>
#include <vector>

#include "support.hpp"

TEST_CASE("Module: a Sequential of layers runs forward and names its parameters", "[module]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Module model = kiln::Module::sequential(rt, {kiln_test::make_linear(rt, 2, 4), kiln::Module(rt, "ReLU")});
  model.append("head", kiln_test::make_linear(rt, 4, 3));
  CHECK(model.type() == "Sequential");
  std::vector<std::string> names;
  for (const kiln::NamedTensor& p : model.named_parameters()) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"0.weight", "0.bias", "head.weight", "head.bias"});
  CHECK(model.parameters().size() == 4);
  const kiln::Tensor x = kiln::Tensor::zeros(rt, {5, 2});
  CHECK(model({x}).shape() == kiln::Shape{5, 3});
  const std::vector<kiln::Tensor> outputs = model.forward({x});
  REQUIRE(outputs.size() == 1);
  CHECK(outputs[0].shape() == kiln::Shape{5, 3});
  const std::vector<kiln::TensorDesc> built = model.build({{{7, 2}, KILN_F32}});
  REQUIRE(built.size() == 1);
  CHECK(built[0].shape == kiln::Shape{7, 3});
  CHECK(built[0].dtype == KILN_F32);
}

TEST_CASE("Module errors name the layer and what does not fit", "[module]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  REQUIRE_KILN_ERROR(kiln::Module(rt, "Lineer"), KILN_ERR_NOT_FOUND, "Lineer", "Linear");
  kiln::Module model = kiln::Module::sequential(rt, {kiln_test::make_linear(rt, 2, 4)});
  REQUIRE_KILN_ERROR(model({kiln::Tensor::zeros(rt, {5, 3})}), KILN_ERR_SHAPE_MISMATCH, "Linear");
  REQUIRE_KILN_ERROR(model.build({{{5, 3}, KILN_F32}}), KILN_ERR_SHAPE_MISMATCH, "Linear", "[5, 3]");
  REQUIRE_KILN_ERROR(model.build({{kiln::Shape(9, 1), KILN_F32}}), KILN_ERR_INVALID_ARGUMENT, "9 dimensions",
                     "at most 8");
  kiln::Module linear = kiln_test::make_linear(rt);
  REQUIRE_KILN_ERROR(linear.append(kiln::Module(rt, "ReLU")), KILN_ERR_INVALID_ARGUMENT, "Sequential");
}

TEST_CASE("Module: a Graph with a skip connection made of an op module", "[module]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Module graph = kiln::Module::graph(rt, {"x"});
  graph.add("fc", kiln_test::make_linear(rt, 2, 2), {"x"});
  graph.add("sum", kiln::Module::from_op(kiln::Op(rt, "add")), {"fc", "x"});
  graph.set_outputs({"sum", "fc"});
  CHECK(graph.type() == "Graph");
  kiln::Tensor weight = graph.parameters()[0], bias = graph.parameters()[1];
  weight.assign(kiln::Tensor::zeros(rt, {2, 2}));
  bias.assign(kiln::Tensor::full(rt, {2}, 1.0));
  const std::vector<kiln::Tensor> out = graph.forward({kiln::Tensor::full(rt, {1, 2}, 3.0)});
  REQUIRE(out.size() == 2);
  CHECK(out[0].to_vector<float>() == std::vector<float>{4, 4});  // fc(x) + x
  CHECK(out[1].to_vector<float>() == std::vector<float>{1, 1});
  REQUIRE_KILN_ERROR(graph.add("bad", kiln::Module(rt, "ReLU"), {"nowhere"}), KILN_ERR_NOT_FOUND, "'nowhere'");
  REQUIRE_KILN_ERROR(graph.set_outputs({"missing"}), KILN_ERR_NOT_FOUND, "'missing'");
}

TEST_CASE("Module modes, buffers, devices and dtypes", "[module]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Module norm = kiln::Module::sequential(rt, {kiln::Module(rt, "BatchNorm1d", {{"num_features", 3}})});
  CHECK(norm.training());
  norm.set_training(false);
  CHECK_FALSE(norm.training());
  std::vector<std::string> buffers;
  for (const kiln::NamedTensor& b : norm.named_buffers()) buffers.push_back(b.name);
  CHECK(buffers == std::vector<std::string>{"0.running_mean", "0.running_var", "0.num_batches_tracked"});
  CHECK(norm.buffers().size() == 3);
  norm.cast(KILN_F64);
  CHECK(norm.parameters()[0].dtype() == KILN_F64);
  norm.to(kiln::Device::cpu());
  CHECK(norm.parameters()[0].device() == kiln::Device::cpu());
  REQUIRE_KILN_ERROR(norm.cast(KILN_I32), KILN_ERR_INVALID_ARGUMENT, "i32");
}

TEST_CASE("Module weights: saved, loaded strictly or not, refused when they do not fit", "[module][checkpoint]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const std::string path = KILN_CPP_TEST_DIR "/module_weights.safetensors";
  kiln::Module a = kiln::Module::sequential(rt, {kiln_test::make_linear(rt)});
  a.save_weights(path);
  kiln::Module b = kiln::Module::sequential(rt, {kiln_test::make_linear(rt)});
  CHECK(b.parameters()[0].to_vector<float>() != a.parameters()[0].to_vector<float>());
  b.load_weights(path);
  CHECK(b.parameters()[0].to_vector<float>() == a.parameters()[0].to_vector<float>());
  CHECK(b.parameters()[1].to_vector<float>() == a.parameters()[1].to_vector<float>());

  kiln::Module wider = kiln::Module::sequential(rt, {kiln_test::make_linear(rt, 2, 3)});
  REQUIRE_KILN_ERROR(wider.load_weights(path), KILN_ERR_SHAPE_MISMATCH, "0.weight");
  kiln::Module longer = kiln::Module::sequential(rt, {kiln_test::make_linear(rt), kiln_test::make_linear(rt)});
  REQUIRE_KILN_ERROR(longer.load_weights(path), KILN_ERR_INVALID_ARGUMENT, "1.weight");
  CHECK_NOTHROW(longer.load_weights(path, false));  // not strict: names only one side has are skipped
  CHECK(longer.parameters()[0].to_vector<float>() == a.parameters()[0].to_vector<float>());
  REQUIRE_KILN_ERROR(b.load_weights(KILN_CPP_TEST_DIR "/no_such_weights.safetensors"), KILN_ERR_IO,
                     "no_such_weights.safetensors");
  std::remove(path.c_str());
}

TEST_CASE("Module copies share the module, which keeps its runtime", "[module][lifetime]") {
  kiln::Module kept(nullptr);
  CHECK_FALSE(kept);
  kiln::Tensor input(nullptr);
  {
    const kiln::Runtime rt = kiln_test::make_runtime();
    kiln::Module m = kiln_test::make_linear(rt);
    kept = m;
    CHECK(kept.get() == m.get());
    const kiln::Module moved(std::move(m));
    CHECK_FALSE(m);
    CHECK(moved.get() == kept.get());
    input = kiln::Tensor::zeros(rt, {1, 2});
  }
  // Every Runtime wrapper is gone; the module's runtime is not.
  CHECK(kept({input}).shape() == kiln::Shape{1, 2});
  kiln::Module retained = kiln::Module::retain(kept.get());
  kept = kiln::Module(nullptr);
  CHECK(retained.type() == "Linear");
}
