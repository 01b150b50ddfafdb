#include "train/callback.hpp"

namespace kiln::train {

bool callback_outcome(const char* name, int result, const char* recorded) {
  if (result == 0) return false;
  if (recorded[0] == '\0') return true;
  // `return kiln_error_set(KILN_ERR_IO, "...")` hands back the status it recorded.
  if (result > KILN_OK && result <= KILN_ERR_SCRIPT) throw CallbackFailure(Status(result), recorded);
  throw CallbackFailure(Status::invalid_state,
                        str_cat("stopped by ", name, ", which returned ", result,
                                " (not a kiln_status) after recording the error: ", recorded));
}

}  // namespace kiln::train
