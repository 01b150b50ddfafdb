// The model's forward on a batch and its loss: shared by the training step,
// the trainer's evaluation and kiln_evaluate (which has no trainer).
#pragma once

#include <cstdint>
#include <string_view>

#include "train/trainer.hpp"

namespace kiln::train {

// What the forward and the loss of a batch need (a view: the names are
// owned by whoever made it, a trainer's options or kiln_evaluate's caller).
struct ModelLoss {
  kiln_runtime* runtime;
  kiln_module* model;
  const kiln_op* loss;
  const kiln_op* cast;  // for reading values to the CPU
  std::string_view loss_name;
  std::string_view input_field;
  std::string_view target_field;
  kiln_dtype precision;  // KILN_BF16 or KILN_F16: forward and loss under autocast; KILN_F32: not
};

// The model and loss a trainer trains.
ModelLoss model_loss(const kiln_trainer& t);

struct BatchLoss {
  TensorRef output;
  TensorRef target;
  TensorRef loss;       // as the loss op reduces it (by default the mean)
  int64_t samples = 0;  // dimension 0 of the input
};

// Runs the model on the batch's input field and the loss op on (output,
// target field), under autocast when m.precision asks for it. A batch
// without one of the fields fails naming the fields it has and the option
// that chose the name.
BatchLoss forward_loss(const ModelLoss& m, const kiln_example* batch);

// The value of the loss, read to the CPU.
double loss_value(const ModelLoss& m, const BatchLoss& b);

}  // namespace kiln::train
