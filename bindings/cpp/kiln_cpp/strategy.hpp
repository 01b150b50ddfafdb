// kiln::Strategy: a parallel strategy (move-only: the C API has no retain
// for strategies), which makes gradients agree across processes.
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

struct StrategyRank {
  int rank = 0;
  int world_size = 1;
};

class Strategy : public detail::UniqueHandle<kiln_strategy, kiln_strategy_release> {
 public:
  // A strategy of a registered type ("single": one process).
  Strategy(const Runtime& rt, const std::string& type, const AttrList& config = {}) {
    kiln_strategy* s = nullptr;
    check(kiln_strategy_create(rt.get(), type.c_str(), config.data(), config.size(), &s));
    *this = adopt(s);
  }
  explicit Strategy(std::nullptr_t) noexcept {}
  // Takes over the caller's handle.
  static Strategy adopt(kiln_strategy* s) noexcept { return Strategy(s); }

  StrategyRank rank() const {
    StrategyRank r;
    check(kiln_strategy_rank(get(), &r.rank, &r.world_size));
    return r;
  }
  // After backward, before the optimizer step.
  void reduce_gradients(const std::vector<Tensor>& params) {
    const std::vector<kiln_tensor*> handles = detail::handles_of(params);
    check(kiln_strategy_reduce_gradients(get(), handles.data(), handles.size()));
  }

 private:
  explicit Strategy(kiln_strategy* s) noexcept : UniqueHandle(s) {}
};

}  // namespace kiln
