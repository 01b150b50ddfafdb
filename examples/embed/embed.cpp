// The story of embed.c in C++ with kiln.hpp: a host that steps the trainer
// in its own loop, saves the training state and resumes from it in a
// rebuilt trainer, saves and reloads weights, and runs a Lua snippet; plus
// a callback whose exception reaches the host. Wrappers release their
// handles however a function is left, and every failure is an exception,
// so there is no cleanup code and one catch says why.
//
//   kiln_embed_cpp [folder for the files it writes, default "."]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <kiln/kiln.hpp>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "lua_training.h"

namespace {

constexpr int64_t kPoints = 256, kHidden = 32, kBatch = 32, kMaxSteps = 2000;
constexpr size_t kWindow = 8, kResumedSteps = 3;

// The host's own checks fail the same way kiln's calls do.
void expect(bool ok, const std::string& message) {
  if (!ok) throw std::runtime_error(message);
}

// Points of [-1, 1]^2, class 1 inside the circle of radius 0.6, in a
// "tensors" source (which copies them).
kiln::DataSource make_source(const kiln::Runtime& rt) {
  std::vector<float> points;
  std::vector<int64_t> labels;
  unsigned state = 11u;
  auto uniform = [&state] {
    state = state * 1664525u + 1013904223u;
    return 2.0f * static_cast<float>(state >> 8) / 16777216.0f - 1.0f;
  };
  for (int64_t i = 0; i < kPoints; ++i) {
    const float x = uniform(), y = uniform();
    points.insert(points.end(), {x, y});
    labels.push_back(x * x + y * y < 0.36f);
  }
  return kiln::DataSource(rt, "tensors", {{"input", kiln::Tensor::from_data(rt, points, {kPoints, 2})},
                                          {"target", kiln::Tensor::from_data(rt, labels, {kPoints})}});
}

kiln::Module make_model(const kiln::Runtime& rt) {
  return kiln::Module::sequential(rt, {kiln::Module(rt, "Linear", {{"in_features", 2}, {"out_features", kHidden}}),
                                       kiln::Module(rt, "ReLU"),
                                       kiln::Module(rt, "Linear", {{"in_features", kHidden}, {"out_features", 2}})});
}

kiln::Loader make_loader(const kiln::DataSource& source, int64_t batch_size, bool shuffle) {
  kiln::LoaderOptions o;
  o.batch_size = batch_size;
  o.shuffle = shuffle;
  o.seed = 7;
  return kiln::Loader(source, o);
}

// What a host builds, and builds the same way after a restart.
struct Training {
  kiln::Module model;
  kiln::Trainer trainer;
};

Training open_training(const kiln::Runtime& rt, const kiln::DataSource& source,
                       std::function<bool(const kiln::StepMetrics&)> on_step) {
  kiln::TrainerOptions o;
  o.model = make_model(rt);
  o.optimizer = kiln::Optimizer(rt, "Adam", o.model.parameters(), {{"lr", 0.01}});
  o.train = make_loader(source, kBatch, true);
  o.epochs = kMaxSteps;  // an upper bound: the host's loop decides when to stop
  o.progress = kiln::Progress::quiet;
  o.on_step = std::move(on_step);
  return {o.model, kiln::Trainer(rt, o)};
}

double mean_of_last(const std::vector<double>& losses, size_t n) {
  return std::accumulate(losses.end() - static_cast<std::ptrdiff_t>(n), losses.end(), 0.0) / static_cast<double>(n);
}

// The host's loop: a step at a time until the mean of the last kWindow
// losses is under 0.1, at most kMaxSteps steps.
void train_until_fitted(Training& t, const std::vector<double>& losses) {
  while (losses.size() < kMaxSteps && !(losses.size() >= kWindow && mean_of_last(losses, kWindow) < 0.1))
    expect(t.trainer.step().has_value(), "the trainer stopped before the host's rule did");
  std::printf("stopped after %zu steps: loss %.4f -> %.4f (mean of the last %zu)\n", losses.size(), losses.front(),
              mean_of_last(losses, kWindow), kWindow);
  expect(mean_of_last(losses, kWindow) < 0.25 * losses.front(), "the loss did not fall to a quarter of the first");
}

// Saves the state, takes a few more steps, then resumes a rebuilt trainer
// from the file: it must take the same steps with the same losses.
void check_resume(const kiln::Runtime& rt, const kiln::DataSource& source, Training& t, const std::string& path) {
  t.trainer.save(path);
  std::vector<kiln::StepMetrics> expected;
  for (size_t i = 0; i < kResumedSteps; ++i) expected.push_back(t.trainer.step().value());
  Training resumed = open_training(rt, source, [](const kiln::StepMetrics&) { return false; });
  resumed.trainer.load(path);
  for (const kiln::StepMetrics& want : expected) {
    const kiln::StepMetrics got = resumed.trainer.step().value();
    expect(got.step == want.step && got.epoch == want.epoch && got.epoch_step == want.epoch_step,
           "the resumed trainer is not where it was saved");
    expect(got.loss == want.loss, "the resumed trainer's loss differs from the uninterrupted one's");
  }
  std::printf("resumed from %s at step %lld: %zu steps with the same losses\n", path.c_str(),
              static_cast<long long>(expected.front().step - 1), kResumedSteps);
}

// Weights saved, loaded into a fresh model: the same loss over all points.
void check_weights(const kiln::Runtime& rt, const kiln::DataSource& source, const kiln::Module& model,
                   const std::string& path) {
  model.save_weights(path);
  kiln::Module fresh = make_model(rt);
  fresh.load_weights(path);
  const kiln::Loader all = make_loader(source, kPoints, false);
  const kiln::EvalMetrics trained = kiln::evaluate(model, all), loaded = kiln::evaluate(fresh, all);
  expect(trained.loss == loaded.loss, "the model loaded from the weights file measures another loss");
  expect(trained.accuracy > 0.9, "the trained model classifies fewer than 90% of the points");
  std::printf("weights in %s: loss %.4f, accuracy %.3f, the same after loading\n", path.c_str(), loaded.loss,
              loaded.accuracy);
}

// A callback that throws stops training, and its exception, as thrown,
// reaches the caller of run(); kiln's last error says which callback.
void check_callback_exception(const kiln::Runtime& rt, const kiln::DataSource& source) {
  int64_t last_step = 0;
  Training t = open_training(rt, source, [&last_step](const kiln::StepMetrics& m) {
    last_step = m.step;
    if (m.step == 3) throw std::length_error("the host's disk is full");
    return false;
  });
  try {
    t.trainer.run();
    expect(false, "run() returned although on_step threw");
  } catch (const std::length_error& e) {
    expect(std::strcmp(e.what(), "the host's disk is full") == 0, "the callback's exception changed on its way");
  }
  expect(last_step == 3, "training went on after on_step threw");
  expect(std::strstr(kiln_last_error(), "on_step threw: the host's disk is full") != nullptr,
         std::string("kiln's last error does not name the callback: ") + kiln_last_error());
  std::printf("on_step threw at step 3; run() rethrew it: %s\n", kiln_last_error());
}

void run_lua(const kiln::Runtime& rt) {
  kiln::ScriptOptions o;
  o.sandbox = true;  // an untrusted script: no files, no os, limits below
  o.instruction_limit = 100000000;
  o.memory_limit = 64u << 20;
  kiln::Script(rt, o).run_string(kLuaTraining, "=training snippet");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string folder = argc > 1 ? argv[1] : ".";
  try {
    kiln::RuntimeOptions options;
    options.seed = 42;  // plugins come from the default search path
    const kiln::Runtime rt(options);
    const kiln::DataSource source = make_source(rt);
    std::vector<double> losses;
    Training t = open_training(rt, source, [&losses](const kiln::StepMetrics& m) {
      losses.push_back(m.loss);
      if (m.step % 50 == 0)
        std::printf("  step %4lld  epoch %3lld  loss %.4f\n", static_cast<long long>(m.step),
                    static_cast<long long>(m.epoch), m.loss);
      return false;  // true would stop training after this step
    });
    train_until_fitted(t, losses);
    check_resume(rt, source, t, folder + "/embed_cpp_state.safetensors");
    check_weights(rt, source, t.model, folder + "/embed_cpp_weights.safetensors");
    check_callback_exception(rt, source);
    run_lua(rt);
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "embed: %s: %s\n", e.status_name(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embed: %s\n", e.what());
    return 1;
  }
  std::printf("embed: all done\n");
  return 0;
}
