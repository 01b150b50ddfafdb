/* Whether a shared library is mapped into this process now. Include it
 * first: RTLD_NOLOAD needs _GNU_SOURCE before any system header. */
#ifndef KILN_LIBRARY_MAPPED_H
#define KILN_LIBRARY_MAPPED_H

#define _GNU_SOURCE
#include <dlfcn.h>

static int mapped(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!handle) return 0;
  dlclose(handle);
  return 1;
}

#endif /* KILN_LIBRARY_MAPPED_H */
