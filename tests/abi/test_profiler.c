/* The profiler through kiln.h: begin and end in the wrong order, the report
 * into a caller's buffer (its length asked first, a short buffer refused),
 * and the Chrome trace of a few MLP training steps (forward and backward
 * calls both recorded, a failed write leaving what was there). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "mlp.h"

static int entries_in(const char* dir) {
  DIR* d = opendir(dir);
  struct dirent* e;
  int n = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++n;
  closedir(d);
  return n;
}

static void check_order_errors(kiln_runtime* rt) {
  size_t length = 0;
  CHECK_ERROR(kiln_profiler_end(rt), KILN_ERR_INVALID_STATE, "kiln_profiler_end", "end without begin");
  CHECK_ERROR(kiln_profiler_report(rt, NULL, 0, &length), KILN_ERR_INVALID_STATE, "no profile has been recorded");
  CHECK_ERROR(kiln_profiler_write_trace(rt, "never.json"), KILN_ERR_INVALID_STATE, "no profile has been recorded");
  CHECK_OK(kiln_profiler_begin(rt));
  CHECK_ERROR(kiln_profiler_begin(rt), KILN_ERR_INVALID_STATE, "kiln_profiler_begin", "already on");
  CHECK_ERROR(kiln_profiler_report(rt, NULL, 0, &length), KILN_ERR_INVALID_STATE, "still on");
  CHECK_OK(kiln_profiler_end(rt));
  CHECK_ERROR(kiln_profiler_begin(NULL), KILN_ERR_INVALID_ARGUMENT, "argument 'rt' is NULL");
  CHECK_ERROR(kiln_profiler_write_trace(rt, NULL), KILN_ERR_INVALID_ARGUMENT, "argument 'path' is NULL");
}

static void check_table(kiln_runtime* rt) {
  size_t length = 0, again = 0;
  char small[16];
  char* table;
  CHECK_OK(kiln_profiler_report(rt, NULL, 0, &length));
  CHECK(length > 100);
  CHECK_ERROR(kiln_profiler_report(rt, NULL, 64, &again), KILN_ERR_INVALID_ARGUMENT, "buffer is NULL");
  CHECK_ERROR(kiln_profiler_report(rt, small, sizeof small, &again), KILN_ERR_INVALID_ARGUMENT, "holds 16 bytes",
              "needs");
  CHECK(again == 0); /* untouched on failure */
  table = malloc(length + 1);
  CHECK_OK(kiln_profiler_report(rt, table, length + 1, &again));
  CHECK(again == length && strlen(table) == length);
  CHECK(strstr(table, "mean µs") != NULL);
  CHECK(strstr(table, "\nlinear ") != NULL);
  CHECK(strstr(table, "\nlinear backward ") != NULL);
  CHECK(strstr(table, "\ncross_entropy backward ") != NULL);
  CHECK(strstr(table, "\nrelu backward ") != NULL);
  /* Forward rows come first. */
  CHECK(strstr(table, "\nlinear ") < strstr(table, "\nlinear backward "));
  printf("%s", table);
  free(table);
}

static void check_trace(kiln_runtime* rt) {
  char dir[] = "/tmp/kiln_profiler_XXXXXX";
  char trace[64], occupied[64];
  char* json;
  CHECK(mkdtemp(dir) != NULL);
  snprintf(trace, sizeof trace, "%s/trace.json", dir);
  snprintf(occupied, sizeof occupied, "%s/occupied", dir);
  CHECK_OK(kiln_profiler_write_trace(rt, trace));
  json = read_whole_file(trace);
  CHECK(json != NULL);
  if (json) {
    CHECK(strncmp(json, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", 38) == 0);
    CHECK(strstr(json, "{\"name\":\"linear\",\"cat\":\"forward\",\"ph\":\"X\"") != NULL);
    CHECK(strstr(json, "{\"name\":\"linear backward\",\"cat\":\"backward\",\"ph\":\"X\"") != NULL);
    CHECK(strcmp(json + strlen(json) - 4, "\n]}\n") == 0);
    free(json);
  }
  /* A directory where the file should go: the write fails and leaves it. */
  CHECK(mkdir(occupied, 0755) == 0);
  CHECK_ERROR(kiln_profiler_write_trace(rt, occupied), KILN_ERR_IO, "cannot save", occupied);
  CHECK(entries_in(dir) == 2);
  CHECK_ERROR(kiln_profiler_write_trace(rt, "/no-such-directory/trace.json"), KILN_ERR_IO, "cannot save",
              "/no-such-directory/trace.json");
  rmdir(occupied);
  unlink(trace);
  rmdir(dir);
}

int main(void) {
  kiln_runtime_options options = {.size = sizeof(kiln_runtime_options), .seed = 42};
  kiln_runtime* rt = NULL;
  mlp_summary summary = {0.0f, 0.0f};
  CHECK_OK(kiln_runtime_create(&options, &rt));
  check_order_errors(rt);
  CHECK_OK(kiln_profiler_begin(rt));
  CHECK_OK(mlp_train(rt, 3, 0.5f, NULL, NULL, &summary));
  CHECK_OK(kiln_profiler_end(rt));
  check_table(rt);
  check_trace(rt);
  kiln_runtime_release(rt);
  return check_report("abi/profiler");
}
