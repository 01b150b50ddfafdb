// Transform handles: made by a registered plugin type, applied in place to
// examples from any number of threads at once; random choices come from the
// seed alone.
#include "data/data_handles.hpp"
#include "data/example.hpp"
#include "guard.hpp"
#include "kiln/error.hpp"

using kiln::abi::guarded;

extern "C" {

kiln_status kiln_transform_create(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n_config,
                                  kiln_transform** out) {
  KILN_REQUIRE(rt, type, out);
  if (n_config > 0) KILN_REQUIRE(config);
  return guarded(__func__, [&] {
    *out = new kiln_transform(rt, rt->plugins.transform(type), config, n_config);
  });
}

void kiln_transform_release(kiln_transform* tr) {
  if (tr && tr->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete tr;
}

kiln_status kiln_transform_apply(const kiln_transform* tr, kiln_example* ex, uint64_t seed) {
  KILN_REQUIRE(tr, ex);
  return guarded(__func__, [&] {
    KILN_CHECK(ex->runtime == tr->object.runtime(), kiln::Status::invalid_argument,
               "'ex' belongs to another runtime than the transform");
    tr->object.check(tr->object.type().apply(tr->object.state(), ex, seed));
  });
}

}  // extern "C"
