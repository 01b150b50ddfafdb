// The plugin's side of the host table: the table itself, failures as
// exceptions inside the plugin (turned back into host->error at every
// callback), and tensor handles that release themselves.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "kiln/kiln_plugin.h"

namespace kiln_optim {

// The table given to register_fn; its functions are the same for every
// runtime the plugin is registered in.
const kiln_host& host();
void set_host(const kiln_host* table);

// A failure inside the plugin; it never leaves a callback (see guarded).
struct Failure {
  kiln_status status;
  std::string message;
};

[[noreturn]] void fail(kiln_status status, std::string message);
// Throws the host's last error when a host call failed.
void check(kiln_status status);

// Runs `body` and turns anything it throws into host->error(status, message).
template <class Body>
kiln_status guarded(Body&& body) noexcept {
  try {
    body();
    return KILN_OK;
  } catch (const Failure& f) {
    return host().error(f.status, f.message.c_str());
  } catch (const std::bad_alloc&) {
    return host().error(KILN_ERR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return host().error(KILN_ERR_INTERNAL, e.what());
  } catch (...) {
    return host().error(KILN_ERR_INTERNAL, "an unknown exception");
  }
}

// One reference on a tensor, dropped when the Tensor goes.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(kiln_tensor* owned) : t_(owned) {}
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&& other) noexcept : t_(std::exchange(other.t_, nullptr)) {}
  Tensor& operator=(Tensor&& other) noexcept {
    std::swap(t_, other.t_);
    return *this;
  }
  ~Tensor() { host().tensor_release(t_); }

  kiln_tensor* get() const { return t_; }
  // Gives the reference to the caller.
  kiln_tensor* release() { return std::exchange(t_, nullptr); }

 private:
  kiln_tensor* t_ = nullptr;
};

}  // namespace kiln_optim
