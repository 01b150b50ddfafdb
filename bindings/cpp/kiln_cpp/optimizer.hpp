// kiln::Optimizer (a reference on a kiln_optimizer; copies share it) and
// kiln::LrSchedule (move-only: the C API has no retain for schedules).
#pragma once

#include <string>
#include <vector>

#include "attr.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "kiln/kiln.h"
#include "runtime.hpp"
#include "tensor.hpp"

namespace kiln {

class Optimizer : public detail::SharedHandle<kiln_optimizer, kiln_optimizer_retain, kiln_optimizer_release> {
 public:
  // An optimizer of a registered type ("SGD", "Adam", ...) over `params`,
  // its first group, with hyper-parameters `hyper` ("lr" in every type).
  Optimizer(const Runtime& rt, const std::string& type, const std::vector<Tensor>& params, const AttrList& hyper = {}) {
    const std::vector<kiln_tensor*> handles = detail::handles_of(params);
    kiln_optimizer* opt = nullptr;
    check(kiln_optimizer_create(rt.get(), type.c_str(), handles.data(), handles.size(), hyper.data(), hyper.size(),
                                &opt));
    *this = adopt(opt);
  }
  explicit Optimizer(std::nullptr_t) noexcept {}
  // Takes over the caller's reference on `opt`; retain() adds one.
  static Optimizer adopt(kiln_optimizer* opt) noexcept { return Optimizer(opt); }
  static Optimizer retain(kiln_optimizer* opt) noexcept {
    kiln_optimizer_retain(opt);
    return Optimizer(opt);
  }

  // Another parameter group; hyper-parameters not given keep the creation's.
  void add_group(const std::vector<Tensor>& params, const AttrList& hyper = {}) {
    const std::vector<kiln_tensor*> handles = detail::handles_of(params);
    check(kiln_optimizer_add_group(get(), handles.data(), handles.size(), hyper.data(), hyper.size()));
  }

  void step() { check(kiln_optimizer_step(get())); }
  void zero_grad() { check(kiln_optimizer_zero_grad(get())); }
  int64_t step_count() const {
    int64_t steps = 0;
    check(kiln_optimizer_step_count(get(), &steps));
    return steps;
  }

  size_t group_count() const {
    size_t groups = 0;
    check(kiln_optimizer_group_count(get(), &groups));
    return groups;
  }
  double hyper(size_t group, const std::string& name) const {
    double value = 0.0;
    check(kiln_optimizer_get_hyper(get(), group, name.c_str(), &value));
    return value;
  }
  void set_hyper(size_t group, const std::string& name, double value) {
    check(kiln_optimizer_set_hyper(get(), group, name.c_str(), value));
  }

  // The state as named copies: "step", and "<parameter index>.<name>".
  std::vector<NamedTensor> state() const {
    return detail::named_tensors(get(), kiln_optimizer_state_count, kiln_optimizer_state_get);
  }
  // Takes back a state() of the same optimizer type over the same shapes:
  // every entry present and fitting, or nothing changes.
  void load_state(const std::vector<NamedTensor>& entries) {
    std::vector<const char*> names;
    std::vector<kiln_tensor*> tensors;
    for (const NamedTensor& e : entries) {
      names.push_back(e.name.c_str());
      tensors.push_back(e.tensor.get());
    }
    check(kiln_optimizer_state_load(get(), names.data(), tensors.data(), entries.size()));
  }

 private:
  explicit Optimizer(kiln_optimizer* opt) noexcept : SharedHandle(opt) {}
};

class LrSchedule : public detail::UniqueHandle<kiln_lr_schedule, kiln_lr_schedule_release> {
 public:
  // A schedule of a registered type ("step", "cosine", ...).
  LrSchedule(const Runtime& rt, const std::string& type, const AttrList& config = {}) {
    kiln_lr_schedule* s = nullptr;
    check(kiln_lr_schedule_create(rt.get(), type.c_str(), config.data(), config.size(), &s));
    *this = adopt(s);
  }
  explicit LrSchedule(std::nullptr_t) noexcept {}
  // Takes over the caller's handle.
  static LrSchedule adopt(kiln_lr_schedule* s) noexcept { return LrSchedule(s); }

  // The rate at `step` (0 is the first) for a base rate `base_lr`.
  double lr(int64_t step, double base_lr) const {
    double rate = 0.0;
    check(kiln_lr_schedule_lr(get(), step, base_lr, &rate));
    return rate;
  }

 private:
  explicit LrSchedule(kiln_lr_schedule* s) noexcept : UniqueHandle(s) {}
};

}  // namespace kiln
