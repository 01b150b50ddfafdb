#include "train/batch_loss.hpp"

#include "kiln/error.hpp"

namespace kiln::train {
namespace {

// "'image', 'label'", or "none" for a batch without fields.
std::string field_names(const kiln_example* batch) {
  size_t count = 0;
  check_call(kiln_example_field_count(batch, &count), "listing a batch's fields");
  std::string names;
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    kiln_tensor* t = nullptr;
    check_call(kiln_example_field(batch, i, &name, &t), "listing a batch's fields");
    names += str_cat(i ? ", '" : "'", name, "'");
    kiln_tensor_release(t);
  }
  return names.empty() ? "none" : names;
}

TensorRef batch_field(const kiln_example* batch, std::string_view name, const char* option) {
  kiln_tensor* t = nullptr;
  if (kiln_example_get(batch, std::string(name).c_str(), &t) == KILN_OK) return TensorRef::adopt(t);
  throw_error(Status::not_found, str_cat("the batch has no field '", name, "' (options->", option,
                                         "); its fields are ", field_names(batch)));
}

std::string loss_what(const ModelLoss& m) { return str_cat("loss '", m.loss_name, "'"); }

// An autocast scope while it lives, or nothing for KILN_F32.
class PrecisionScope {
 public:
  PrecisionScope(kiln_runtime* rt, kiln_dtype precision) : rt_(precision == KILN_F32 ? nullptr : rt) {
    if (rt_) check_call(kiln_autocast_begin(rt_, precision), "entering the options->precision scope");
  }
  ~PrecisionScope() {
    if (rt_) kiln_autocast_end(rt_);
  }
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  kiln_runtime* rt_;
};

}  // namespace

ModelLoss model_loss(const kiln_trainer& t) {
  const TrainerConfig& c = t.config;
  return {c.runtime.get(), c.model.get(), t.ops.loss, t.ops.cast, c.loss_name, c.input_field, c.target_field,
          c.precision};
}

BatchLoss forward_loss(const ModelLoss& m, const kiln_example* batch) {
  const TensorRef input_ref = batch_field(batch, m.input_field, "input_field");
  kiln_tensor* const input = input_ref.get();
  BatchLoss b;
  b.target = batch_field(batch, m.target_field, "target_field");
  b.samples = leading_dim(input);
  const PrecisionScope precision(m.runtime, m.precision);
  kiln_tensor* output = nullptr;
  check_call(kiln_module_forward1(m.model, &input, 1, &output), "forward of the model");
  b.output = TensorRef::adopt(output);
  b.loss = call_op(m.runtime, m.loss, {output, b.target.get()}, nullptr, 0, loss_what(m));
  return b;
}

double loss_value(const ModelLoss& m, const BatchLoss& b) {
  return read_scalar(m.runtime, m.cast, b.loss.get(), loss_what(m));
}

}  // namespace kiln::train
