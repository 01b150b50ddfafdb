// The optimizer step: each parameter with a gradient gets its state made on
// first use (the type's init_state, through host::optimizer_add_state) and
// is then updated, with recording off: group by group through the type's
// update_group when it has one, else parameter by parameter.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/error.hpp"
#include "plugin/plugin_call.hpp"
#include "optim/optimizer_handle.hpp"
#include "plugin/host_callbacks.hpp"

using kiln::Status;
using kiln::abi::guarded;

// What host->optimizer_add_state receives: the state being made.
struct kiln_optimizer_state_init {
  kiln_runtime* runtime;
  const std::string& who;
  kiln::abi::ParameterState& state;
};

namespace kiln::abi {

kiln_status host::optimizer_add_state(kiln_optimizer_state_init* init, const char* name, kiln_tensor* t) {
  KILN_REQUIRE(init, name, t);
  return guarded(__func__, [&] {
    const std::string_view n(name);
    KILN_CHECK(!n.empty() && n != "step", Status::invalid_argument, init->who, ": a state tensor cannot be named '", n,
               "' (empty, or the name of the parameter's step count)");
    auto& names = init->state.names;
    KILN_CHECK(std::find(names.begin(), names.end(), n) == names.end(), Status::invalid_argument, init->who,
               ": state '", n, "' was added twice");
    check_owner(init->runtime, t, "t");
    names.emplace_back(n);
    init->state.tensors.retain(t);
  });
}

ParameterState make_parameter_state(const kiln_optimizer& opt, const OptimizedParameter& param) {
  ParameterState state;
  kiln_optimizer_state_init init{opt.runtime, opt.who(), state};
  const Config& hyper = opt.groups[param.group];
  const kiln_optimizer_type& t = opt.type->type;
  if (t.init_state) check_plugin_call(t.init_state(t.user, &init, param.handle[0], hyper.data(), hyper.size()), opt.who());
  return state;
}

}  // namespace kiln::abi

namespace {

// Makes parameter `index`'s state before its first update.
void ensure_state(kiln_optimizer& opt, size_t index) {
  kiln::abi::OptimizedParameter& p = opt.params[index];
  if (p.has_state) return;
  p.state = kiln::abi::make_parameter_state(opt, p);
  p.has_state = true;
  kiln::abi::rebuild_state_listing(opt);
}

// One update of parameter `index`, which has the gradient `grad`, through
// the type's per-parameter update. The step count only advances when the
// update succeeds.
void update_parameter(kiln_optimizer& opt, size_t index, kiln::Tensor grad) {
  kiln::abi::OptimizedParameter& p = opt.params[index];
  kiln::abi::OwnedTensors grad_handle;
  grad_handle.adopt(kiln::abi::new_handle(opt.runtime, std::move(grad)));
  const kiln::abi::Config& hyper = opt.groups[p.group];
  const kiln_optimizer_update call{
      sizeof(kiln_optimizer_update), opt.runtime,  p.handle[0],  grad_handle[0], p.state.tensors.data(),
      p.state.tensors.size(),        hyper.data(), hyper.size(), p.steps + 1};
  const kiln_optimizer_type& t = opt.type->type;
  KILN_CHECK(t.update != nullptr, Status::unsupported, opt.who(), " has no update function");
  kiln::abi::check_plugin_call(t.update(t.user, &call), kiln::str_cat(opt.who(), ", parameter ", index));
  ++p.steps;
}

// One update of the parameters `members` of group `group` (grads[i] is
// parameter i's gradient) in one update_group call. Their step counts
// advance together, only when the call succeeds.
void update_group(kiln_optimizer& opt, size_t group, const std::vector<size_t>& members,
                  std::vector<kiln::Tensor>& grads) {
  kiln::abi::OwnedTensors grad_handles;
  std::vector<kiln_tensor*> params;
  std::vector<kiln_tensor* const*> states;
  std::vector<int64_t> steps;
  // A state loaded from a checkpoint may hold fewer tensors than the
  // current hyper-parameters need; the type sees the least any has.
  size_t n_state = SIZE_MAX;
  for (size_t i : members) {
    const kiln::abi::OptimizedParameter& p = opt.params[i];
    grad_handles.adopt(kiln::abi::new_handle(opt.runtime, std::move(grads[i])));
    params.push_back(p.handle[0]);
    states.push_back(p.state.tensors.data());
    n_state = std::min(n_state, p.state.tensors.size());
    steps.push_back(p.steps + 1);
  }
  const kiln::abi::Config& hyper = opt.groups[group];
  const kiln_optimizer_group_update call{sizeof(kiln_optimizer_group_update),
                                         opt.runtime,
                                         members.size(),
                                         params.data(),
                                         grad_handles.data(),
                                         states.data(),
                                         n_state,
                                         hyper.data(),
                                         hyper.size(),
                                         steps.data()};
  const kiln_optimizer_type& t = opt.type->type;
  kiln::abi::check_plugin_call(t.update_group(t.user, &call), kiln::str_cat(opt.who(), ", group ", group));
  for (size_t i : members) ++opt.params[i].steps;
}

}  // namespace

extern "C" {

kiln_status kiln_optimizer_step(kiln_optimizer* opt) {
  KILN_REQUIRE(opt);
  return guarded(__func__, [&] {
    kiln::NoGradGuard no_grad(opt->runtime->runtime);
    std::vector<kiln::Tensor> grads(opt->params.size());
    std::vector<std::vector<size_t>> with_grad(opt->groups.size());
    for (size_t i = 0; i < opt->params.size(); ++i) {
      grads[i] = opt->params[i].handle[0]->tensor.grad();
      if (grads[i].defined()) with_grad[opt->params[i].group].push_back(i);
    }
    const bool grouped = opt->type->type.update_group != nullptr;
    for (size_t g = 0; g < with_grad.size(); ++g) {
      if (with_grad[g].empty()) continue;
      for (size_t i : with_grad[g]) ensure_state(*opt, i);
      if (grouped) {
        update_group(*opt, g, with_grad[g], grads);
      } else {
        for (size_t i : with_grad[g]) update_parameter(*opt, i, std::move(grads[i]));
      }
    }
    ++opt->steps;
  });
}

kiln_status kiln_optimizer_zero_grad(kiln_optimizer* opt) {
  KILN_REQUIRE(opt);
  for (auto& p : opt->params) p.handle[0]->tensor.set_grad(kiln::Tensor());
  return KILN_OK;
}

}  // extern "C"
