// Registration of each data source type of the kiln-data plugin. Examples
// have the fields "input" and (where the data has labels) "target".
#pragma once

#include "kiln/kiln_plugin.h"

namespace kiln_data {

kiln_status register_idx_source(kiln_registrar* r);
kiln_status register_cifar10_source(kiln_registrar* r);
kiln_status register_npy_source(kiln_registrar* r);
kiln_status register_csv_source(kiln_registrar* r);
kiln_status register_tensors_source(kiln_registrar* r);
kiln_status register_synthetic_source(kiln_registrar* r);

}  // namespace kiln_data
