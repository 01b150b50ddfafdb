// The example at the top of kiln.hpp (with data, and counting the steps it
// prints) trains and saves.
#include <cstdio>
#include <optional>
#include <vector>

#include "support.hpp"

TEST_CASE("The example of kiln.hpp trains and saves", "[tutorial]") {
  const int64_t n = 64;
  std::vector<float> points;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    const float x = static_cast<float>(i % 8) / 4.0f - 1.0f, y = static_cast<float>(i / 8) / 4.0f - 1.0f;
    points.insert(points.end(), {x, y});
    labels.push_back(x > y);
  }
  int64_t steps = 0;

  kiln::Runtime rt;  // plugins from the default search path
  kiln::DataSource data(
      rt, "tensors",
      {{"input", kiln::Tensor::from_data(rt, points, {n, 2})}, {"target", kiln::Tensor::from_data(rt, labels, {n})}});
  kiln::LoaderOptions batches;
  batches.batch_size = 16;
  kiln::TrainerOptions o;
  o.model = kiln::Module::sequential(
      rt, {kiln::Module(rt, "Linear", {{"in_features", 2}, {"out_features", 16}}), kiln::Module(rt, "ReLU"),
           kiln::Module(rt, "Linear", {{"in_features", 16}, {"out_features", 2}})});
  o.optimizer = kiln::Optimizer(rt, "SGD", o.model.parameters(), {{"lr", 0.1}});
  o.train = kiln::Loader(data, batches);
  o.epochs = 5;
  o.on_step = [](const kiln::StepMetrics& m) { return m.loss < 0.01; };  // true: stop here
  kiln::Trainer trainer(rt, o);
  while (std::optional<kiln::StepMetrics> m = trainer.step()) {
    std::printf("loss %.4f\n", m->loss);
    ++steps;
  }
  trainer.save(KILN_CPP_TEST_DIR "/trainer.safetensors");

  CHECK(steps == 20);  // 5 epochs of 4 batches
  CHECK(kiln::Example::load_safetensors(rt, KILN_CPP_TEST_DIR "/trainer.safetensors").size() > 0);
  std::remove(KILN_CPP_TEST_DIR "/trainer.safetensors");
}
