// Autocast scopes through the C API (kiln/ops/autocast.hpp does the work).
#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "kiln/ops/autocast.hpp"

using kiln::abi::guarded;

extern "C" {

kiln_status kiln_autocast_begin(kiln_runtime* rt, kiln_dtype dtype) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] {
    const kiln::DType d = kiln::abi::to_dtype(dtype);
    KILN_CHECK(d == kiln::DType::bf16 || d == kiln::DType::f16, kiln::Status::invalid_argument, "dtype is ",
               kiln::dtype_name(d), "; autocast runs in KILN_BF16 or KILN_F16");
    kiln::push_autocast(rt->runtime, d);
  });
}

kiln_status kiln_autocast_end(kiln_runtime* rt) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] {
    KILN_CHECK(kiln::pop_autocast(rt->runtime), kiln::Status::invalid_state,
               "no open autocast scope of this runtime on this thread (kiln_autocast_begin was not called, or "
               "was called on another thread)");
  });
}

kiln_status kiln_autocast_dtype(kiln_runtime* rt, kiln_dtype* out) {
  KILN_REQUIRE(rt, out);
  *out = kiln::abi::from_dtype(kiln::autocast_dtype(rt->runtime));
  return KILN_OK;
}

}  // extern "C"
