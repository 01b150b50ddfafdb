/* A minimal check harness for the C API tests: failures are counted and
 * printed with the call, the status and kiln_last_error(), and the test keeps
 * going so that one run shows every failure. */
#ifndef KILN_TEST_CHECK_H
#define KILN_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln.h"

static int check_failures = 0;

static inline void check_true(int ok, const char* text, const char* file, int line) {
  if (ok) return;
  fprintf(stderr, "%s:%d: CHECK(%s) failed\n", file, line, text);
  ++check_failures;
}

/* The call returned `want`, and, for failures, kiln_last_error() contains
 * every string of the NULL-terminated list that follows `line`. */
static inline void check_status(kiln_status got, kiln_status want, const char* text, const char* file, int line,
                                ...) {
  const char* message = kiln_last_error();
  const char* needle;
  va_list needles;
  if (got != want) {
    fprintf(stderr, "%s:%d: %s returned %s, expected %s (last error: %s)\n", file, line, text,
            kiln_status_name(got), kiln_status_name(want), message);
    ++check_failures;
    return;
  }
  va_start(needles, line);
  while ((needle = va_arg(needles, const char*)) != NULL) {
    if (strstr(message, needle)) continue;
    fprintf(stderr, "%s:%d: the error of %s lacks \"%s\": %s\n", file, line, text, needle, message);
    ++check_failures;
  }
  va_end(needles);
}

#define CHECK(cond) check_true((cond) != 0, #cond, __FILE__, __LINE__)
#define CHECK_OK(call) check_status((call), KILN_OK, #call, __FILE__, __LINE__, (const char*)NULL)
/* CHECK_ERROR(call, KILN_ERR_..., "text the message must contain", ...) */
#define CHECK_ERROR(call, want, ...) \
  check_status((call), (want), #call, __FILE__, __LINE__, __VA_ARGS__, (const char*)NULL)

/* The whole file at `path` as a NUL-terminated string (malloc'd), or NULL. */
static inline char* read_whole_file(const char* path) {
  FILE* f = fopen(path, "rb");
  char* text;
  long size;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = (char*)malloc((size_t)size + 1);
  if (text && fread(text, 1, (size_t)size, f) != (size_t)size) {
    free(text);
    text = NULL;
  }
  if (text) text[size] = '\0';
  fclose(f);
  return text;
}

static inline int check_report(const char* test) {
  if (check_failures == 0) {
    printf("%s: all checks passed\n", test);
    return 0;
  }
  fprintf(stderr, "%s: %d check(s) failed\n", test, check_failures);
  return 1;
}

#endif /* KILN_TEST_CHECK_H */
