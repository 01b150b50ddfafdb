// Ops through the C API: look up once by name, call by handle. The call path
// runs for every op a host executes, so it avoids allocations of its own:
// inputs and attributes are staged on the stack for the usual small counts.
#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/ops/attr_text.hpp"

using kiln::abi::guarded;

namespace {

// Room for n elements: on the stack up to N, on the heap beyond.
template <class T, size_t N>
class SmallBuffer {
 public:
  explicit SmallBuffer(size_t n) : size_(n) {
    if (n > N) heap_.resize(n);
  }
  T* data() { return size_ > N ? heap_.data() : stack_.data(); }
  T& operator[](size_t i) { return data()[i]; }
  std::span<T> span() { return {data(), size_}; }

 private:
  size_t size_;
  std::array<T, N> stack_{};
  std::vector<T> heap_;
};

constexpr size_t kInlineArgs = 8;

void check_array(const void* array, size_t count, const char* what) {
  KILN_CHECK(array || count == 0, kiln::Status::invalid_argument, "'", what, "' is NULL with ", count, " entries");
}

kiln::AttrValue attr_value(const kiln_attr& a) {
  switch (a.type) {
    case KILN_ATTR_INT: return a.value.i;
    case KILN_ATTR_FLOAT: return a.value.f;
    case KILN_ATTR_BOOL: return a.value.b != 0;
    case KILN_ATTR_INTS:
      check_array(a.value.ints.data, a.value.ints.len, a.name);
      return std::vector<int64_t>(a.value.ints.data, a.value.ints.data + a.value.ints.len);
    case KILN_ATTR_FLOATS:
      check_array(a.value.floats.data, a.value.floats.len, a.name);
      return std::vector<double>(a.value.floats.data, a.value.floats.data + a.value.floats.len);
    case KILN_ATTR_STRING:
      KILN_CHECK(a.value.s, kiln::Status::invalid_argument, "attribute '", a.name, "' is a NULL string");
      return std::string(a.value.s);
    case KILN_ATTR_DTYPE: return kiln::abi::to_dtype(a.value.dtype);
    case KILN_ATTR_TENSOR:
      kiln::throw_error(kiln::Status::invalid_argument,
                        kiln::str_cat("attribute '", a.name, "' is a tensor; op attributes cannot be tensors"));
  }
  kiln::throw_error(kiln::Status::invalid_argument,
                    kiln::str_cat("attribute '", a.name, "' has an unknown kiln_attr_type value ", int(a.type)));
}

// The shared body of kiln_op_call and kiln_op_call1.
std::vector<kiln::Tensor> call_op(kiln_runtime* rt, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                                  const kiln_attr* attrs, size_t n_attrs) {
  check_array(inputs, n_inputs, "inputs");
  check_array(attrs, n_attrs, "attrs");
  const kiln::OpDef& def = *op->def;
  KILN_CHECK(op->owner == rt, kiln::Status::invalid_argument, "op '", def.name,
             "' was looked up in another runtime than 'rt'");

  SmallBuffer<kiln::Tensor, kInlineArgs> tensors(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) {
    if (!inputs[i]) continue;  // an optional input left out
    KILN_CHECK(inputs[i]->runtime == rt, kiln::Status::invalid_argument, "op '", def.name, "': input ", i,
               " belongs to another runtime than 'rt'");
    tensors[i] = inputs[i]->tensor;
  }
  if (n_attrs == 0 && op->has_defaults) return rt->runtime.call(def, tensors.span(), op->defaults);

  SmallBuffer<std::pair<std::string_view, kiln::AttrValue>, kInlineArgs> named(n_attrs);
  for (size_t i = 0; i < n_attrs; ++i) {
    KILN_CHECK(attrs[i].name, kiln::Status::invalid_argument, "op '", def.name, "': attrs[", i, "].name is NULL");
    named[i] = {attrs[i].name, attr_value(attrs[i])};
  }
  return rt->runtime.call(def, tensors.span(), def.make_attrs(named.span()));
}

}  // namespace

namespace kiln::abi {

const kiln_op* op_handle(kiln_runtime* rt, const OpDef& def) {
  std::lock_guard lock(rt->ops_mutex);
  std::unique_ptr<kiln_op>& slot = rt->ops[&def];
  if (!slot) {
    const bool has_defaults = std::none_of(def.attrs.begin(), def.attrs.end(), [](const AttrSpec& a) { return a.required; });
    std::vector<std::string> default_texts;
    for (const AttrSpec& a : def.attrs) default_texts.push_back(a.required ? "" : attr_value_text(a.default_value));
    slot.reset(new kiln_op{rt, &def, has_defaults, has_defaults ? def.default_attrs() : Attrs(), std::move(default_texts)});
  }
  return slot.get();
}

}  // namespace kiln::abi

extern "C" {

kiln_status kiln_op_find(kiln_runtime* rt, const char* name, const kiln_op** out) {
  KILN_REQUIRE(rt, name, out);
  return guarded(__func__, [&] { *out = kiln::abi::op_handle(rt, rt->runtime.op(name)); });
}

kiln_status kiln_op_call(kiln_runtime* rt, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                         const kiln_attr* attrs, size_t n_attrs, kiln_tensor** outputs, size_t max_outputs,
                         size_t* n_outputs) {
  KILN_REQUIRE(rt, op, n_outputs);
  return guarded(__func__, [&] {
    check_array(outputs, max_outputs, "outputs");
    std::vector<kiln::Tensor> results = call_op(rt, op, inputs, n_inputs, attrs, n_attrs);
    KILN_CHECK(results.size() <= max_outputs, kiln::Status::invalid_argument, "op '", op->def->name, "' returns ",
               results.size(), " outputs, 'outputs' has room for ", max_outputs);
    // Handles are made before any is given out, so a failure gives none.
    SmallBuffer<std::unique_ptr<kiln_tensor>, kInlineArgs> handles(results.size());
    for (size_t i = 0; i < results.size(); ++i) handles[i].reset(kiln::abi::new_handle(rt, std::move(results[i])));
    for (size_t i = 0; i < results.size(); ++i) outputs[i] = handles[i].release();
    *n_outputs = results.size();
  });
}

kiln_status kiln_op_call1(kiln_runtime* rt, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                          const kiln_attr* attrs, size_t n_attrs, kiln_tensor** out) {
  KILN_REQUIRE(rt, op, out);
  return guarded(__func__, [&] {
    std::vector<kiln::Tensor> results = call_op(rt, op, inputs, n_inputs, attrs, n_attrs);
    KILN_CHECK(results.size() == 1, kiln::Status::invalid_argument, "op '", op->def->name, "' returns ",
               results.size(), " outputs; use kiln_op_call for it");
    *out = kiln::abi::new_handle(rt, std::move(results[0]));
  });
}

}  // extern "C"
