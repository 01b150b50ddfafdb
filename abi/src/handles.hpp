// What the opaque C handles are. Each handle is a small C++ object with an
// atomic reference count; a tensor handle holds a reference on its runtime,
// and op handles live in their runtime's table until it is destroyed.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dist/dist_handles.hpp"
#include "kiln/error.hpp"
#include "kiln/kiln.h"
#include "kiln/runtime.hpp"
#include "plugin/log_sink.hpp"
#include "plugin/registry.hpp"

struct kiln_op {
  kiln_runtime* owner;
  const kiln::OpDef* def;
  // Calls without attributes reuse these instead of building them each time;
  // only possible when the schema has no required attribute.
  bool has_defaults;
  kiln::Attrs defaults;
  // What kiln_op_attr_get gives as each attribute's default_text ("" when
  // required), kept here so the strings live as long as the runtime.
  std::vector<std::string> default_texts;
};

struct kiln_runtime {
  explicit kiln_runtime(const kiln::RuntimeOptions& options) : runtime(options) {}
  ~kiln_runtime() {
    // Another reference to the default group may outlive the runtime: it
    // stops tracing into the runtime's profiler now.
    if (default_group) default_group->group->stop_tracing();
    kiln_process_group_release(default_group);
  }

  std::atomic<int64_t> refs{1};
  kiln::Runtime runtime;
  std::mutex ops_mutex;
  std::unordered_map<const kiln::OpDef*, std::unique_ptr<kiln_op>> ops;
  kiln::abi::LogSink log;
  // Declared after `runtime`, so it goes first: the plugins' ops live in the
  // runtime's table and keep their libraries loaded until the runtime goes.
  kiln::abi::PluginHost plugins{this};
  // The default process group, made on first use (kiln_process_group_default).
  std::mutex dist_mutex;
  kiln_process_group* default_group = nullptr;
};

struct kiln_tensor {
  kiln_tensor(kiln_runtime* rt, kiln::Tensor t) : runtime(rt), tensor(std::move(t)) { kiln_runtime_retain(rt); }
  ~kiln_tensor() {
    tensor = kiln::Tensor();  // free the data while its runtime still lives
    kiln_runtime_release(runtime);
  }
  kiln_tensor(const kiln_tensor&) = delete;
  kiln_tensor& operator=(const kiln_tensor&) = delete;

  std::atomic<int64_t> refs{1};
  kiln_runtime* runtime;
  kiln::Tensor tensor;
};

namespace kiln::abi {

// A new handle (one reference) on `t`, owned by `rt`.
inline kiln_tensor* new_handle(kiln_runtime* rt, Tensor t) { return new kiln_tensor(rt, std::move(t)); }

// The handle for `result`, computed from `source`: `source` itself, with one
// more reference, when `result` is the very tensor it holds (a no-op
// conversion); a new handle otherwise.
inline kiln_tensor* same_or_new_handle(const kiln_tensor* source, Tensor result) {
  if (!result.same(source->tensor)) return new_handle(source->runtime, std::move(result));
  // Reference counts change through const handles: they are not part of the
  // tensor's value.
  kiln_tensor* same = const_cast<kiln_tensor*>(source);
  kiln_tensor_retain(same);
  return same;
}

// The handle of `def`, an op of `rt`'s table, made on first use.
const kiln_op* op_handle(kiln_runtime* rt, const OpDef& def);

// Tensors of one runtime cannot be mixed with another's; `what` names the argument.
inline void check_owner(const kiln_runtime* rt, const kiln_tensor* t, const char* what) {
  KILN_CHECK(t->runtime == rt, Status::invalid_argument, "'", what, "' belongs to another runtime than 'rt'");
}

}  // namespace kiln::abi
