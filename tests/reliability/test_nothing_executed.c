/* Promise 7: nothing in a checkpoint is ever executed. A weights file whose
 * metadata holds a Lua chunk, a pickle stream and shell lines, whose tensor
 * names are shell lines and whose tensor bytes are an ELF header and a
 * script, each of which would create a marker file if anything ran it, is
 * loaded from C and from a Lua script: the bytes arrive as numbers, and the
 * marker never appears. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kiln/kiln_script.h"
#include "kiln/kiln_training.h"

static char marker[512], file_path[512];

/* The tensors' bytes: 16 of an ELF header, then 8 of a shebang line. */
static const unsigned char kPayload[24] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                           '#', '!', '/', 'b', 'i', 'n', '/', 's'};

static void write_hostile_file(void) {
  char header[2048];
  unsigned long long length;
  size_t n;
  FILE* f;
  n = (size_t)snprintf(
      header, sizeof header,
      "{\"__metadata__\":{"
      "\"lua\":\"os.execute('touch %s')\","
      "\"lua_chunk\":\"\\u001bLua\\u0054\\u0000\","
      "\"pickle\":\"\\u0080\\u0004cposix\\nsystem\\n(Vtouch %s\\ntR.\","
      "\"shell\":\"$(touch %s); `touch %s` && touch %s\"},"
      "\"weight\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
      "\"bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]}}",
      marker, marker, marker, marker, marker);
  while (n % 8 != 0) header[n++] = ' '; /* padded with spaces, as the format allows */
  length = n;
  f = fopen(file_path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fwrite(&length, 8, 1, f); /* little-endian on every machine kiln runs on */
  fwrite(header, 1, n, f);
  fwrite(kPayload, 1, sizeof kPayload, f);
  fclose(f);
}

static void check_loaded_as_data(kiln_module* model) {
  kiln_tensor *weight = NULL, *bias = NULL;
  const char* name = NULL;
  unsigned char bytes[24];
  CHECK_OK(kiln_module_parameter(model, 0, &name, &weight));
  CHECK_OK(kiln_module_parameter(model, 1, &name, &bias));
  if (weight) CHECK_OK(kiln_tensor_read(weight, bytes, 16));
  if (bias) CHECK_OK(kiln_tensor_read(bias, bytes + 16, 8));
  CHECK(memcmp(bytes, kPayload, sizeof kPayload) == 0);
  kiln_tensor_release(weight);
  kiln_tensor_release(bias);
}

int main(void) {
  const char* tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  const kiln_attr config[2] = {kiln_attr_int("in_features", 2), kiln_attr_int("out_features", 2)};
  char chunk[1024];
  kiln_runtime* rt = NULL;
  kiln_module* model = NULL;
  kiln_script* script = NULL;
  snprintf(marker, sizeof marker, "%s/kiln-executed-%d", tmp, (int)getpid());
  snprintf(file_path, sizeof file_path, "%s/kiln-hostile-%d.safetensors", tmp, (int)getpid());
  unlink(marker);
  write_hostile_file();

  CHECK_OK(kiln_runtime_create(NULL, &rt));
  if (!rt) return check_report("reliability/nothing_executed");
  CHECK_OK(kiln_module_create(rt, "Linear", config, 2, &model));
  if (model) {
    CHECK_OK(kiln_weights_load(model, file_path, 1));
    check_loaded_as_data(model);
  }
  /* The same file from a trusted script, which could run anything it chose to. */
  CHECK_OK(kiln_script_create(rt, NULL, &script));
  snprintf(chunk, sizeof chunk,
           "local kiln = require('kiln')\n"
           "local path = '%s'\n"
           "kiln.load(path, kiln.nn.Linear(2, 2))\n"
           "local t = kiln.load(path)\n"
           "assert(t.weight:numel() == 4 and t.bias:numel() == 2)\n",
           file_path);
  if (script) CHECK_OK(kiln_script_run_string(script, chunk, "=load"));
  CHECK(access(marker, F_OK) != 0);

  kiln_script_release(script);
  kiln_module_release(model);
  kiln_runtime_release(rt);
  unlink(file_path);
  unlink(marker);
  return check_report("reliability/nothing_executed");
}
