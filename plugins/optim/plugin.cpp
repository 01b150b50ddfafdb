// kiln-optim: the optimizers and learning-rate schedules of kiln, a plugin
// like any other (it sees only kiln_plugin.h).
#include "optimizers.hpp"
#include "schedule_type.hpp"

namespace kiln_optim {
namespace {

kiln_status register_plugin(const kiln_host* table, kiln_registrar* registrar) {
  set_host(table);
  kiln_runtime* rt = table->runtime;
  for (const kiln_optimizer_type& t :
       {sgd_type(rt), adam_type(rt), adamw_type(rt), rmsprop_type(rt), adagrad_type(rt)}) {
    if (const kiln_status st = table->register_optimizer(registrar, &t); st != KILN_OK) return st;
  }
  for (const kiln_lr_schedule_type& t :
       {step_schedule_type(), multi_step_schedule_type(), exponential_schedule_type(), cosine_schedule_type(),
        warmup_cosine_schedule_type(), one_cycle_schedule_type()}) {
    if (const kiln_status st = table->register_lr_schedule(registrar, &t); st != KILN_OK) return st;
  }
  return KILN_OK;
}

}  // namespace
}  // namespace kiln_optim

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor descriptor = {
      sizeof descriptor, KILN_PLUGIN_ABI(1, 0),      KILN_PLUGIN_ABI(1, 0), "kiln-optim",
      "0.1.0",           kiln_optim::register_plugin};
  return &descriptor;
}
