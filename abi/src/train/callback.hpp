// The rule for the trainer's callbacks (see kiln.h, next to kiln_step_fn):
// 0 goes on; nonzero stops training after the current step. A callback that
// records an error with kiln_error_set before returning nonzero reports a
// failure instead, which the trainer returns as it was recorded.
#pragma once

#include <string>

#include "kiln/error.hpp"
#include "kiln/kiln.h"

namespace kiln::train {

// A failure a callback reported: returned to the host with the callback's
// own status and message, without the name of the trainer's entry point in
// front (the message is the callback's, not the trainer's).
class CallbackFailure : public Error {
 public:
  using Error::Error;
};

// The outcome of a callback's return value `result`, given the message it
// recorded during the call ("" when none).
bool callback_outcome(const char* name, int result, const char* recorded);

// Calls `invoke` (which calls the callback and gives its return value) under
// the rule above: true when the callback asked to stop; throws
// CallbackFailure when it reported a failure. `name` ("on_step") is for the
// message.
template <class Invoke>
bool run_callback(const char* name, Invoke&& invoke) {
  // Cleared first, so that a message recorded during the call can be told
  // apart from an older failure of the host's.
  kiln_error_set(KILN_OK, "");
  const int result = invoke();
  return callback_outcome(name, result, kiln_last_error());
}

}  // namespace kiln::train
