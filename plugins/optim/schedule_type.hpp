// Turns a learning-rate schedule written as a C++ class into the plugin
// API's kiln_lr_schedule_type. The class provides:
//   static constexpr const char* kName;
//   static constexpr kiln_attr_spec kConfig[];
//   explicit Schedule(const Attrs& config);       fails on values that make no sense
//   double lr(int64_t step, double base_lr) const;
// Every callback catches what the class throws (see guarded).
#pragma once

#include <cstdint>
#include <iterator>

#include "attrs.hpp"
#include "host.hpp"

namespace kiln_optim {

template <class Schedule>
kiln_lr_schedule_type schedule_type() {
  kiln_lr_schedule_type t{};
  t.size = sizeof t;
  t.name = Schedule::kName;
  t.config = Schedule::kConfig;
  t.n_config = std::size(Schedule::kConfig);
  t.create = [](void*, const kiln_attr* config, size_t n_config, void** state) {
    return guarded([&] { *state = new Schedule(Attrs(config, n_config)); });
  };
  t.lr = [](void* state, int64_t step, double base_lr, double* out) {
    return guarded([&] { *out = static_cast<const Schedule*>(state)->lr(step, base_lr); });
  };
  t.destroy = [](void* state) { delete static_cast<Schedule*>(state); };
  return t;
}

kiln_lr_schedule_type step_schedule_type();
kiln_lr_schedule_type multi_step_schedule_type();
kiln_lr_schedule_type exponential_schedule_type();
kiln_lr_schedule_type cosine_schedule_type();
kiln_lr_schedule_type warmup_cosine_schedule_type();
kiln_lr_schedule_type one_cycle_schedule_type();

}  // namespace kiln_optim
