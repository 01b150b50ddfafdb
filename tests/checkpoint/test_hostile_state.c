/* Promise 7 for training states: nothing in one is ever executed. A state
 * saved by a real run gains metadata that would create a marker file if
 * anything ran it (a Lua chunk, a pickle stream, shell lines), some of it
 * under the plugin manifest's keys, which loading reads and reports. The
 * state still loads: the hostile plugin names reach the log as plain text,
 * the next step's loss is the one the untouched run took, and the marker
 * never appears. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "checkpoint_support.h"

#define STEPS 4

static char captured_log[8192];

static void capture_log(void* user, kiln_log_level level, const char* message) {
  (void)user;
  if (level < KILN_LOG_WARNING) return;
  strncat(captured_log, message, sizeof captured_log - strlen(captured_log) - 2);
  strcat(captured_log, "\n");
}

/* The whole of `path` (malloc'ed; NULL when it cannot be read), its size in *n. */
static unsigned char* read_whole(const char* path, size_t* n) {
  unsigned char* bytes = NULL;
  long size;
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    bytes = malloc((size_t)size);
    *n = bytes ? fread(bytes, 1, (size_t)size, f) : 0;
  }
  fclose(f);
  return bytes;
}

/* Where the members of the metadata start in `header` (just after
 * "__metadata__":{), or 0 when it has no metadata. */
static size_t metadata_start(const unsigned char* header, size_t length) {
  static const char key[] = "\"__metadata__\":{";
  const size_t key_length = sizeof key - 1;
  size_t at;
  for (at = 0; at + key_length <= length; ++at)
    if (memcmp(header + at, key, key_length) == 0) return at + key_length;
  return 0;
}

/* Writes the safetensors file `from` again as `to`, with `members` (JSON
 * object members, each followed by a comma) first in its metadata; the
 * tensors' bytes follow unchanged. Returns 1 on success. */
static int add_metadata(const char* from, const char* to, const char* members) {
  size_t n = 0, header_length = 0, at = 0, length, i;
  unsigned char* file = read_whole(from, &n);
  const unsigned char* header = NULL;
  unsigned char prefix[8];
  FILE* out = NULL;
  int ok = 0;
  if (file && n >= 8) {
    header = file + 8;
    for (i = 0; i < 8; ++i) header_length |= (size_t)file[i] << (8 * i);
    if (header_length <= n - 8) at = metadata_start(header, header_length);
  }
  if (at > 0) out = fopen(to, "wb");
  if (out) {
    length = header_length + strlen(members);
    length += (8 - length % 8) % 8; /* padded with spaces, as the format allows */
    for (i = 0; i < 8; ++i) prefix[i] = (unsigned char)(length >> (8 * i));
    fwrite(prefix, 1, 8, out);
    fwrite(header, 1, at, out);
    fputs(members, out);
    fwrite(header + at, 1, header_length - at, out);
    for (i = header_length + strlen(members); i < length; ++i) fputc(' ', out);
    fwrite(header + header_length, 1, n - 8 - header_length, out);
    ok = fclose(out) == 0;
  }
  free(file);
  return ok;
}

int main(void) {
  char saved[1024], hostile[1024], marker[1024], members[8192], plugin_name[2200];
  kiln_runtime_options o;
  kiln_runtime* rt = NULL;
  training_run r;
  double next_loss;
  snprintf(saved, sizeof saved, "%s", scratch_path("saved.safetensors"));
  snprintf(hostile, sizeof hostile, "%s", scratch_path("hostile.safetensors"));
  snprintf(marker, sizeof marker, "%s", scratch_path("executed"));
  unlink(marker);

  run_open(&r, 3, STEPS, NULL, 0);
  run_step(&r);
  CHECK_OK(kiln_trainer_save(r.trainer, saved));
  next_loss = run_step(&r);
  run_close(&r);

  snprintf(plugin_name, sizeof plugin_name, "$(touch %s); `touch %s`", marker, marker);
  snprintf(members, sizeof members,
           "\"plugin.%s\":\"1.0 && touch %s\","
           "\"lua\":\"os.execute('touch %s')\","
           "\"lua_chunk\":\"\\u001bLua\\u0054\\u0000\","
           "\"pickle\":\"\\u0080\\u0004cposix\\nsystem\\n(Vtouch %s\\ntR.\","
           "\"shell\":\"#!/bin/sh\\ntouch %s\\n\",",
           plugin_name, marker, marker, marker, marker);
  CHECK(add_metadata(saved, hostile, members));

  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.seed = 99; /* another seed: the state brings its own random stream */
  o.num_threads = 1;
  o.log = capture_log;
  REQUIRE_OK(kiln_runtime_create(&o, &rt));
  run_open_in(&r, rt, STEPS);
  CHECK_OK(kiln_trainer_load(r.trainer, hostile));
  CHECK(strstr(captured_log, plugin_name) != NULL); /* named, as text, in the warning */
  CHECK(strstr(captured_log, "which is not loaded") != NULL);
  CHECK(run_step(&r) == next_loss);
  run_close(&r);
  CHECK(access(marker, F_OK) != 0);
  if (access(marker, F_OK) == 0) fprintf(stderr, "'%s' appeared: something in the state ran\n", marker);
  unlink(marker);
  return check_report("checkpoint/hostile_state");
}
