// What every part of the kiln-data plugin shares: the host table, errors
// (thrown inside the plugin, turned into host->error at each callback),
// tensor references, dtypes and configuration access.
#pragma once

#include <cstdint>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln_data {

// Set once by the plugin's register function, before any callback runs.
extern const kiln_host* host;

// A failure inside the plugin; callbacks hand it to host->error.
struct Failure {
  kiln_status status;
  std::string message;
};

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

template <class... Parts>
[[noreturn]] void fail(kiln_status status, const Parts&... parts) {
  throw Failure{status, cat(parts...)};
}

// Throws when a host call failed, with the host's message after `context`.
void check(kiln_status status, const char* context);

// Runs a callback's body; every exception becomes host->error(status, message),
// so nothing crosses the plugin table.
template <class Body>
kiln_status guard(Body&& body) noexcept {
  try {
    body();
    return KILN_OK;
  } catch (const Failure& f) {
    return host->error(f.status, f.message.c_str());
  } catch (const std::bad_alloc&) {
    return host->error(KILN_ERR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return host->error(KILN_ERR_INTERNAL, cat("internal error: ", e.what()).c_str());
  } catch (...) {
    return host->error(KILN_ERR_INTERNAL, "internal error: an unknown exception");
  }
}

// One reference on a tensor, dropped when this goes.
class TensorRef {
 public:
  TensorRef() = default;
  explicit TensorRef(kiln_tensor* t) : t_(t) {}
  TensorRef(TensorRef&& other) noexcept : t_(std::exchange(other.t_, nullptr)) {}
  TensorRef& operator=(TensorRef&& other) noexcept {
    std::swap(t_, other.t_);
    return *this;
  }
  ~TensorRef() { host->tensor_release(t_); }
  kiln_tensor* get() const { return t_; }
  kiln_tensor** out() { return &t_; }  // for a host call that gives a reference; the ref must be empty

 private:
  kiln_tensor* t_ = nullptr;
};

size_t dtype_size(kiln_dtype dtype);
const char* dtype_name(kiln_dtype dtype);
// The element count; a count past 2^63 fails.
int64_t numel(const std::vector<int64_t>& shape);
// "[3,32,32]"
std::string shape_text(const std::vector<int64_t>& shape);

// A new CPU tensor holding a copy of `data`.
TensorRef tensor_from_bytes(kiln_runtime* rt, const void* data, const std::vector<int64_t>& shape, kiln_dtype dtype);
TensorRef tensor_empty(kiln_runtime* rt, const std::vector<int64_t>& shape, kiln_dtype dtype);

// Calls fn(T{}) with the C++ type of `dtype` (bool is read as uint8_t);
// f16 and bf16 are refused, `what` names the tensor in the message.
template <class Fn>
decltype(auto) visit_dtype(kiln_dtype dtype, const char* what, Fn&& fn) {
  switch (dtype) {
    case KILN_F32: return fn(float{});
    case KILN_F64: return fn(double{});
    case KILN_I32: return fn(int32_t{});
    case KILN_I64: return fn(int64_t{});
    case KILN_U8:
    case KILN_BOOL: return fn(uint8_t{});
    default: break;
  }
  fail(KILN_ERR_UNSUPPORTED, what, " has dtype ", dtype_name(dtype),
       "; expected one of f32, f64, i32, i64, u8, bool");
}

// Configuration entries, by their position in the type's schema.
std::string config_string(const kiln_attr& a);
std::vector<int64_t> config_ints(const kiln_attr& a);
std::vector<double> config_floats(const kiln_attr& a);

}  // namespace kiln_data
