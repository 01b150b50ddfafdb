// kiln::Trainer: steps and runs, callbacks (stopping, and exceptions that
// reach the caller with their type), evaluation, saving and resuming, what
// it keeps alive, and moving it; f16 with dynamic loss scaling;
// kiln::evaluate and kiln::Strategy.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "support.hpp"

static_assert(!std::is_copy_constructible_v<kiln::Trainer> && std::is_nothrow_move_constructible_v<kiln::Trainer>);
static_assert(!std::is_copy_constructible_v<kiln::Strategy> && std::is_nothrow_move_constructible_v<kiln::Strategy>);

namespace {

// 32 points in batches of 4: 8 steps an epoch, a quiet trainer of a Linear
// model with SGD.
struct Setup {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::DataSource points = kiln_test::make_points(rt, 32);

  kiln::Loader loader(int64_t batch_size = 4) const {
    kiln::LoaderOptions o;
    o.batch_size = batch_size;
    o.shuffle = true;
    o.seed = 5;
    return kiln::Loader(points, o);
  }

  kiln::TrainerOptions options() const {
    kiln::TrainerOptions o;
    o.model = kiln_test::make_linear(rt);
    o.optimizer = kiln::Optimizer(rt, "SGD", o.model.parameters(), {{"lr", 0.5}});
    o.train = loader();
    o.epochs = 3;
    o.progress = kiln::Progress::quiet;
    return o;
  }
};

}  // namespace

TEST_CASE("Trainer steps one at a time and tells when training is over", "[trainer]") {
  Setup s;
  kiln::TrainerOptions o = s.options();
  o.epochs = 0;
  o.max_steps = 10;
  std::vector<int64_t> seen;
  o.on_step = [&seen](const kiln::StepMetrics& m) {
    seen.push_back(m.step);
    return false;
  };
  kiln::Trainer trainer(s.rt, o);
  std::optional<kiln::StepMetrics> first = trainer.step();
  REQUIRE(first);
  CHECK(first->step == 1);
  CHECK(first->epoch == 0);
  CHECK(first->samples == 4);
  double last_loss = first->loss;
  while (std::optional<kiln::StepMetrics> m = trainer.step()) last_loss = m->loss;
  CHECK(seen.size() == 10);
  CHECK(seen.back() == 10);
  CHECK(last_loss < first->loss);
  CHECK_FALSE(trainer.step());
}

TEST_CASE("Trainer callbacks: true stops, on_eval and on_epoch are called", "[trainer][callbacks]") {
  Setup s;
  kiln::TrainerOptions o = s.options();
  o.validation = s.loader(32);
  int evals = 0, epochs = 0;
  int64_t steps = 0;
  o.on_step = [&steps](const kiln::StepMetrics& m) {
    steps = m.step;
    return false;
  };
  o.on_eval = [&evals](const kiln::EvalMetrics& m) {
    ++evals;
    CHECK(m.samples == 32);
    return false;
  };
  o.on_epoch = [&epochs](int64_t epoch, const kiln::StepMetrics& last) {
    CHECK(epoch == epochs);
    CHECK(last.epoch_step == 8);
    ++epochs;
    return epoch == 1;  // stop after the second epoch
  };
  kiln::Trainer trainer(s.rt, o);
  trainer.run();
  CHECK(steps == 16);
  CHECK(evals == 2);
  CHECK(epochs == 2);
  const kiln::EvalMetrics m = trainer.evaluate();
  CHECK(m.samples == 32);
  CHECK(m.accuracy >= 0.0);
  CHECK(trainer.evaluate(s.loader(8)).samples == 32);
  const kiln::EvalMetrics direct = kiln::evaluate(o.model, s.loader(32));
  CHECK(direct.loss == m.loss);
  REQUIRE_KILN_ERROR(kiln::evaluate(o.model, s.loader(32), "no_such_loss"), KILN_ERR_NOT_FOUND, "no_such_loss");
}

TEST_CASE("Trainer: an exception thrown in a callback reaches the caller as thrown", "[trainer][callbacks]") {
  Setup s;
  kiln::TrainerOptions o = s.options();
  int64_t steps = 0;
  o.on_step = [&steps](const kiln::StepMetrics& m) -> bool {
    steps = m.step;
    if (m.step == 2) throw std::out_of_range("the host's buffer is full");
    return false;
  };
  kiln::Trainer trainer(s.rt, o);
  CHECK_THROWS_MATCHES(trainer.run(), std::out_of_range, Catch::Message("the host's buffer is full"));
  CHECK(steps == 2);
  // Reported to the trainer through kiln_error_set, naming the callback.
  CHECK(std::string(kiln_last_error()) == "on_step threw: the host's buffer is full");
  // The trainer can go on: the failed step was taken.
  const std::optional<kiln::StepMetrics> next = trainer.step();
  REQUIRE(next);
  CHECK(next->step == 3);
}

TEST_CASE("Trainer: a kiln::Error from a callback keeps its status", "[trainer][callbacks]") {
  Setup s;
  kiln::TrainerOptions o = s.options();
  o.validation = s.loader(32);
  o.on_eval = [](const kiln::EvalMetrics&) -> bool { throw kiln::Error(KILN_ERR_IO, "cannot write the report"); };
  kiln::Trainer trainer(s.rt, o);
  REQUIRE_KILN_ERROR(trainer.run(), KILN_ERR_IO, "cannot write the report");
  REQUIRE_KILN_ERROR(trainer.evaluate(), KILN_ERR_IO, "cannot write the report");
}

TEST_CASE("Trainer: an exception that is no std::exception still reaches the caller", "[trainer][callbacks]") {
  Setup s;
  kiln::TrainerOptions o = s.options();
  o.on_epoch = [](int64_t, const kiln::StepMetrics&) -> bool { throw 42; };
  kiln::Trainer trainer(s.rt, o);
  CHECK_THROWS_AS(trainer.run(), int);
  CHECK_THAT(kiln_last_error(), Catch::Contains("on_epoch threw: an exception that is not a std::exception"));
}

TEST_CASE("Trainer options the library refuses", "[trainer]") {
  Setup s;
  kiln::TrainerOptions o = s.options();
  o.model = kiln::Module(nullptr);
  REQUIRE_KILN_ERROR(kiln::Trainer(s.rt, o), KILN_ERR_INVALID_ARGUMENT, "options->model is NULL");
  o = s.options();
  o.epochs = 0;
  REQUIRE_KILN_ERROR(kiln::Trainer(s.rt, o), KILN_ERR_INVALID_ARGUMENT, "epochs", "max_steps");
  o = s.options();
  o.loss = "no_such_loss";
  REQUIRE_KILN_ERROR(kiln::Trainer(s.rt, o), KILN_ERR_NOT_FOUND, "no_such_loss");
  o = s.options();
  o.checkpoint_every = 2;
  REQUIRE_KILN_ERROR(kiln::Trainer(s.rt, o), KILN_ERR_INVALID_ARGUMENT, "checkpoint_path");
  o = s.options();
  o.precision = "f8";
  REQUIRE_KILN_ERROR(kiln::Trainer(s.rt, o), KILN_ERR_INVALID_ARGUMENT, "options->precision is 'f8'");
  o = s.options();
  o.loss_scale_backoff = 2.0;
  REQUIRE_KILN_ERROR(kiln::Trainer(s.rt, o), KILN_ERR_INVALID_ARGUMENT, "options->loss_scale_backoff is 2");
}

TEST_CASE("Trainer in f16 with dynamic loss scaling, by default and as configured", "[trainer][precision]") {
  Setup s;
  kiln::TrainerOptions o = s.options();
  o.precision = "f16";
  o.max_steps = 1;
  std::optional<kiln::StepMetrics> first = kiln::Trainer(s.rt, o).step();
  REQUIRE(first);
  CHECK(first->loss_scale == 65536.0);
  o = s.options();
  o.precision = "f16";
  o.loss_scale_init = 8.0;
  o.loss_scale_growth = 4.0;
  o.loss_scale_interval = 2;
  o.max_steps = 5;
  kiln::Trainer trainer(s.rt, o);
  std::vector<double> scales;
  while (std::optional<kiln::StepMetrics> m = trainer.step()) {
    scales.push_back(m->loss_scale);
    CHECK(m->skipped == 0);
  }
  CHECK(scales == std::vector<double>{8.0, 8.0, 32.0, 32.0, 128.0});
  o = s.options();
  o.precision = "f16";
  o.loss_scaling = 2;
  CHECK(kiln::Trainer(s.rt, o).step()->loss_scale == 1.0);
}

TEST_CASE("Trainer with a schedule, a strategy, metrics and checkpoints as it goes", "[trainer]") {
  Setup s;
  const std::string metrics = KILN_CPP_TEST_DIR "/trainer_metrics.jsonl";
  const std::string checkpoint = KILN_CPP_TEST_DIR "/trainer_every.safetensors";
  const std::string tensorboard = KILN_CPP_TEST_DIR "/trainer_tensorboard";
  std::filesystem::remove_all(tensorboard);
  const kiln::LrSchedule halving(s.rt, "step", {{"step_size", 1}, {"gamma", 0.5}});
  const kiln::Strategy single(s.rt, "single");
  kiln::TrainerOptions o = s.options();
  o.schedule = &halving;
  o.strategy = &single;
  o.max_steps = 3;
  o.metrics_path = metrics;
  o.checkpoint_every = 2;
  o.checkpoint_path = checkpoint;
  o.tensorboard_dir = tensorboard;
  std::vector<double> rates;
  o.on_step = [&rates](const kiln::StepMetrics& m) {
    rates.push_back(m.lr);
    return false;
  };
  kiln::Trainer(s.rt, o).run();
  CHECK(rates == std::vector<double>{0.5, 0.25, 0.125});
  std::FILE* f = std::fopen(metrics.c_str(), "r");
  CHECK(f != nullptr);
  if (f) std::fclose(f);
  const auto events = std::filesystem::directory_iterator(tensorboard);
  CHECK(std::distance(events, std::filesystem::directory_iterator()) == 1);
  kiln::Trainer resumed(s.rt, s.options());
  resumed.load(checkpoint);  // written at step 2
  CHECK(resumed.step()->step == 3);
  std::remove(metrics.c_str());
  std::remove(checkpoint.c_str());
  std::filesystem::remove_all(tensorboard);
}

TEST_CASE("Trainer report and trace of chosen steps", "[trainer]") {
  Setup s;
  const std::string trace = KILN_CPP_TEST_DIR "/trainer_trace.json";
  std::remove(trace.c_str());
  kiln::TrainerOptions o = s.options();
  o.max_steps = 4;
  o.trace_path = trace;
  o.trace_first_step = 2;
  o.trace_last_step = 3;
  kiln::Trainer trainer(s.rt, o);
  trainer.run();
  CHECK(trainer.report().find("training report: 3 steps after the first") != std::string::npos);
  std::ifstream file(trace);
  const std::string json((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK(json.find(R"({"name":"step 2","cat":"span")") != std::string::npos);
  CHECK(json.find(R"({"name":"step 3","cat":"span")") != std::string::npos);
  CHECK(json.find(R"({"name":"step 4","cat":"span")") == std::string::npos);
  std::remove(trace.c_str());
}

TEST_CASE("Trainer save and load: a rebuilt trainer continues with the same steps", "[trainer][checkpoint]") {
  Setup s;
  const std::string path = KILN_CPP_TEST_DIR "/trainer_state.safetensors";
  kiln::Trainer original(s.rt, s.options());
  for (int i = 0; i < 5; ++i) original.step();
  original.save(path);
  std::vector<kiln::StepMetrics> expected;
  for (int i = 0; i < 4; ++i) expected.push_back(original.step().value());

  kiln::Trainer resumed(s.rt, s.options());
  resumed.load(path);
  for (const kiln::StepMetrics& want : expected) {
    const kiln::StepMetrics got = resumed.step().value();
    CHECK(got.step == want.step);
    CHECK(got.epoch == want.epoch);
    CHECK(got.loss == want.loss);
  }
  REQUIRE_KILN_ERROR(resumed.load(KILN_CPP_TEST_DIR "/no_such_state.safetensors"), KILN_ERR_IO,
                     "no_such_state.safetensors");
  kiln::TrainerOptions wider = s.options();
  wider.model = kiln::Module(s.rt, "Linear", {{"in_features", 2}, {"out_features", 3}});
  wider.optimizer = kiln::Optimizer(s.rt, "SGD", wider.model.parameters(), {{"lr", 0.5}});
  REQUIRE_KILN_ERROR(kiln::Trainer(s.rt, wider).load(path), KILN_ERR_SHAPE_MISMATCH, "weight");
  std::remove(path.c_str());
}

TEST_CASE("Trainer keeps model, optimizer and loader, and moves with its callbacks", "[trainer][lifetime]") {
  Setup s;
  int64_t steps = 0;
  kiln::Trainer moved(nullptr);
  CHECK_FALSE(moved);
  {
    kiln::TrainerOptions o = s.options();
    o.on_step = [&steps](const kiln::StepMetrics& m) {
      steps = m.step;
      return false;
    };
    kiln::Trainer trainer(s.rt, o);
    moved = std::move(trainer);
    CHECK_FALSE(trainer);
  }  // the options' model, optimizer and loader wrappers are gone
  REQUIRE(moved);
  REQUIRE(moved.step());
  CHECK(steps == 1);
  kiln::Trainer again(std::move(moved));
  REQUIRE(again.step());
  CHECK(steps == 2);
}

TEST_CASE("Strategy: the single process", "[strategy]") {
  Setup s;
  kiln::Strategy single(s.rt, "single");
  CHECK(single.rank().rank == 0);
  CHECK(single.rank().world_size == 1);
  kiln::Tensor p = kiln::Tensor::full(s.rt, {2}, 1.0);
  CHECK_NOTHROW(single.reduce_gradients({p}));
  kiln::Strategy moved(std::move(single));
  CHECK_FALSE(single);
  CHECK(moved.rank().world_size == 1);
  REQUIRE_KILN_ERROR(kiln::Strategy(s.rt, "ring"), KILN_ERR_NOT_FOUND, "ring");
}
