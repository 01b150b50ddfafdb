// The kiln-data plugin: kiln's data sources (idx, cifar10, npy, csv,
// tensors, synthetic) and transforms (to_float, normalize, random_crop,
// random_hflip, one_hot), written against kiln_plugin.h alone.
#include "sources.hpp"
#include "transforms.hpp"

namespace {

kiln_status register_plugin(const kiln_host* h, kiln_registrar* r) {
  kiln_data::host = h;
  using Register = kiln_status (*)(kiln_registrar*);
  static constexpr Register kRegistrations[] = {
      kiln_data::register_idx_source,     kiln_data::register_cifar10_source, kiln_data::register_npy_source,
      kiln_data::register_csv_source,     kiln_data::register_tensors_source, kiln_data::register_synthetic_source,
      kiln_data::register_to_float,       kiln_data::register_normalize,      kiln_data::register_random_crop,
      kiln_data::register_random_hflip,   kiln_data::register_one_hot,
  };
  for (Register add : kRegistrations)
    if (const kiln_status st = add(r); st != KILN_OK) return st;
  return KILN_OK;
}

}  // namespace

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor descriptor = {sizeof descriptor,       KILN_PLUGIN_ABI(1, 0),
                                                    KILN_PLUGIN_ABI(1, 0),   "kiln-data",
                                                    "0.1.0",                 register_plugin};
  return &descriptor;
}
