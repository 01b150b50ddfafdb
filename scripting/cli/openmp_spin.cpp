#include "openmp_spin.hpp"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace kiln::cli {
namespace {

// Under valgrind a new program would run outside it (valgrind follows no
// exec by default), and the point of running there is to see this one.
bool under_valgrind() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "valgrind") != nullptr;
}

}  // namespace

void shorten_openmp_spin(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr || under_valgrind())
    return;
  char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return;
  self[length] = '\0';
  if (setenv("GOMP_SPINCOUNT", "10000", 0) != 0) return;
  execv(self, argv);
  unsetenv("GOMP_SPINCOUNT");  // it did not take effect: say nothing that is not so
}

}  // namespace kiln::cli
