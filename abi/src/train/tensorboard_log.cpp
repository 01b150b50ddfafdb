#include "train/tensorboard_log.hpp"

#include <vector>

namespace kiln::train {
namespace {

using tensorboard::Scalar;

// A step's scalar: its tag, its value, and whether this step has it.
struct StepScalar {
  const char* tag;
  double (*value)(const kiln_step_metrics& m);
  bool (*present)(const kiln_step_metrics& m, const TensorBoardScalars& optional);
};

bool always(const kiln_step_metrics&, const TensorBoardScalars&) { return true; }

double flops_per_second(const kiln_step_metrics& m) { return m.step_seconds > 0.0 ? m.flops / m.step_seconds : 0.0; }

// One line per scalar: adding one to every run's event file is adding a line here.
const StepScalar kStepScalars[] = {
    {"train/loss", [](const kiln_step_metrics& m) { return m.loss; }, always},
    {"train/lr", [](const kiln_step_metrics& m) { return m.lr; }, always},
    // A skipped step computed no norm.
    {"train/grad_norm", [](const kiln_step_metrics& m) { return m.grad_norm; },
     [](const kiln_step_metrics& m, const TensorBoardScalars&) { return !m.skipped; }},
    {"train/samples_per_second", [](const kiln_step_metrics& m) { return m.samples_per_second; }, always},
    {"train/step_seconds", [](const kiln_step_metrics& m) { return m.step_seconds; }, always},
    {"train/flops_per_second", [](const kiln_step_metrics& m) { return flops_per_second(m); }, always},
    {"train/input_wait_seconds", [](const kiln_step_metrics& m) { return m.input_wait_seconds; }, always},
    {"time/forward_seconds", [](const kiln_step_metrics& m) { return m.forward_seconds; }, always},
    {"time/backward_seconds", [](const kiln_step_metrics& m) { return m.backward_seconds; }, always},
    {"time/communication_seconds", [](const kiln_step_metrics& m) { return m.communication_seconds; },
     [](const kiln_step_metrics&, const TensorBoardScalars& o) { return o.communication; }},
    {"time/optimizer_seconds", [](const kiln_step_metrics& m) { return m.optimizer_seconds; }, always},
    {"time/other_seconds", [](const kiln_step_metrics& m) { return m.other_seconds; }, always},
    {"train/loss_scale", [](const kiln_step_metrics& m) { return m.loss_scale; },
     [](const kiln_step_metrics&, const TensorBoardScalars& o) { return o.loss_scale; }},
    {"memory/peak_cpu_bytes", [](const kiln_step_metrics& m) { return double(m.peak_cpu_bytes); }, always},
    {"memory/peak_gpu_bytes", [](const kiln_step_metrics& m) { return double(m.peak_gpu_bytes); },
     [](const kiln_step_metrics& m, const TensorBoardScalars&) { return m.peak_gpu_bytes > 0; }},
};

}  // namespace

TensorBoardLog::TensorBoardLog(const char* directory, TensorBoardScalars optional) : optional_(optional) {
  if (directory) events_ = std::make_unique<tensorboard::EventFileWriter>(directory);
}

void TensorBoardLog::write(const kiln_step_metrics& m) {
  if (!events_) return;
  std::vector<Scalar> scalars;
  for (const StepScalar& s : kStepScalars)
    if (s.present(m, optional_)) scalars.push_back({s.tag, s.value(m)});
  if (optional_.peak_flops > 0.0) scalars.push_back({"train/flop_utilisation", flops_per_second(m) / optional_.peak_flops});
  events_->write_scalars(m.step, scalars);
}

void TensorBoardLog::write(const kiln_eval_metrics& m) {
  if (!events_) return;
  std::vector<Scalar> scalars = {{"eval/loss", m.loss}};
  // -1: the targets are not class indices.
  if (m.accuracy >= 0.0) scalars.push_back({"eval/accuracy", m.accuracy});
  events_->write_scalars(m.step, scalars);
}

}  // namespace kiln::train
