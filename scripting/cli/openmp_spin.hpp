// oneDNN and kiln's own CPU kernels run on libgomp's OpenMP threads (the
// runtime's thread pool starts its loops there). After each parallel region
// those threads keep spinning for GOMP_SPINCOUNT rounds (300,000 by default,
// milliseconds), and where the runtime has as many threads as the machine
// has cores they take those cores from the threads outside them: the input
// pipeline's workers and the host's. (When kiln's kernels had threads of
// their own, the spinning took the cores from them: ResNet-18 trained at
// 39-42 samples/s with the default and 46-54 with 10,000 rounds.)
// libgomp reads the count once, when it is loaded, before main: so kiln sets
// it and starts itself again.
#pragma once

namespace kiln::cli {

// Unless GOMP_SPINCOUNT or OMP_WAIT_POLICY is set already (the user's choice
// stands) or the program runs under valgrind, sets GOMP_SPINCOUNT=10000 and
// replaces the process with this program again, same arguments (same pid);
// returns only when it did not (or the exec failed: libgomp's default stays).
void shorten_openmp_spin(char** argv);

}  // namespace kiln::cli
