// Data source handles: made by a registered plugin type, read by index from
// any number of threads at once (the plugin's get is written for that).
#include "data/data_handles.hpp"

#include "data/example.hpp"
#include "guard.hpp"
#include "kiln/error.hpp"

using kiln::abi::guarded;

extern "C" {

kiln_status kiln_data_source_create(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n_config,
                                    kiln_data_source** out) {
  KILN_REQUIRE(rt, type, out);
  if (n_config > 0) KILN_REQUIRE(config);
  return guarded(__func__, [&] {
    auto src = std::make_unique<kiln_data_source>(rt, rt->plugins.data_source(type), config, n_config);
    src->object.check(src->object.type().length(src->object.state(), &src->length));
    KILN_CHECK(src->length >= 0, kiln::Status::internal, "data source '", type, "' reports a negative length (",
               src->length, ")");
    *out = src.release();
  });
}

void kiln_data_source_release(kiln_data_source* src) {
  if (src && src->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete src;
}

kiln_status kiln_data_source_length(const kiln_data_source* src, int64_t* out) {
  KILN_REQUIRE(src, out);
  *out = src->length;
  return KILN_OK;
}

kiln_status kiln_data_source_get(const kiln_data_source* src, int64_t index, kiln_example** out) {
  KILN_REQUIRE(src, out);
  return guarded(__func__, [&] {
    KILN_CHECK(index >= 0 && index < src->length, kiln::Status::invalid_argument, "index ", index,
               " is out of range: the data source has ", src->length, " examples (0 <= index < ", src->length, ")");
    auto ex = std::make_unique<kiln_example>(src->object.runtime());
    src->object.check(src->object.type().get(src->object.state(), index, ex.get()));
    *out = ex.release();
  });
}

}  // extern "C"
