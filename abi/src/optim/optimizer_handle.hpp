// What a kiln_optimizer handle is: an optimizer type from a plugin, the
// parameter groups with their hyper-parameters, and each parameter's state
// (named tensors made by the type's init_state before its first update) and
// update count.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "handles.hpp"
#include "optim/owned_tensors.hpp"
#include "plugin/config.hpp"
#include "plugin/registry.hpp"

namespace kiln::abi {

// The state of one parameter, as init_state made it: names and tensors in
// the order added.
struct ParameterState {
  std::vector<std::string> names;
  OwnedTensors tensors;
};

struct OptimizedParameter {
  OwnedTensors handle;  // exactly one: the caller's parameter
  size_t group = 0;
  int64_t steps = 0;  // updates this parameter received
  bool has_state = false;
  ParameterState state;
};

// One entry of the state listing (see kiln_optimizer_state_get): "step",
// "<i>.step" or "<i>.<state name>".
struct StateListing {
  static constexpr size_t kNone = size_t(-1);
  std::string name;
  size_t param = kNone;  // kNone: the optimizer's step count
  size_t slot = kNone;   // kNone: the parameter's step count
};

}  // namespace kiln::abi

struct kiln_optimizer {
  kiln_optimizer(kiln_runtime* rt, std::shared_ptr<const kiln::abi::OptimizerEntry> entry);
  ~kiln_optimizer();
  kiln_optimizer(const kiln_optimizer&) = delete;
  kiln_optimizer& operator=(const kiln_optimizer&) = delete;

  // "optimizer 'Adam' (plugin 'kiln-optim')", for messages.
  const std::string& who() const { return who_; }

  std::atomic<int64_t> refs{1};
  kiln_runtime* runtime;
  std::shared_ptr<const kiln::abi::OptimizerEntry> type;
  kiln::abi::Config creation_hyper;  // what add_group inherits
  std::vector<kiln::abi::Config> groups;
  std::vector<kiln::abi::OptimizedParameter> params;  // all groups, in the order added
  int64_t steps = 0;
  std::vector<kiln::abi::StateListing> listing;  // rebuilt when state is made or loaded

 private:
  std::string who_;
};

namespace kiln::abi {

// Checks one group's hyper-parameters with the type's check_hyper, when it has one.
void check_hyper(const kiln_optimizer& opt, const Config& hyper);

// Runs the type's init_state for `param`; the result is not yet the parameter's.
ParameterState make_parameter_state(const kiln_optimizer& opt, const OptimizedParameter& param);

// Rebuilds opt.listing from the parameters' states.
void rebuild_state_listing(kiln_optimizer& opt);

}  // namespace kiln::abi
