/* Promise 7: nothing in a checkpoint is ever executed. A weights file whose
 * metadata holds a Lua chunk, a pickle stream and shell lines, one of whose
 * tensor names is a shell line and whose tensor bytes are an ELF header, a
 * script and a Lua chunk, each of which would create a marker file if
 * anything ran it, is loaded from C (into a model and as named tensors) and
 * from a Lua script (the same two ways): the bytes arrive as numbers, the
 * names as text, and the marker never appears. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kiln/kiln_script.h"
#include "kiln/kiln_training.h"

static char marker[512], file_path[512], shell_name[1200];

/* The tensors' bytes: 16 of an ELF header and 8 of a shebang line (the
 * model's weight and bias), then 8 of a precompiled Lua chunk's signature
 * (the tensor named by a shell line). */
static const unsigned char kPayload[32] = {
    0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* ELF, 64-bit, little-endian */
    '#', '!', '/', 'b', 'i', 'n', '/', 's',                 /* #!/bin/sh */
    0x1b, 'L', 'u', 'a', 0x54, 0, 0x19, 0x93};              /* a Lua 5.4 binary chunk */

static void write_hostile_file(void) {
  char header[4096];
  unsigned long long length;
  size_t n;
  FILE* f;
  snprintf(shell_name, sizeof shell_name, "$(touch %s); `touch %s`", marker, marker);
  n = (size_t)snprintf(
      header, sizeof header,
      "{\"__metadata__\":{"
      "\"lua\":\"os.execute('touch %s')\","
      "\"lua_chunk\":\"\\u001bLua\\u0054\\u0000\","
      "\"pickle\":\"\\u0080\\u0004cposix\\nsystem\\n(Vtouch %s\\ntR.\","
      "\"shell\":\"$(touch %s); `touch %s` && touch %s\"},"
      "\"weight\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
      "\"bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]},"
      "\"%s\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[24,32]}}",
      marker, marker, marker, marker, marker, shell_name);
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
  CHECK(memcmp(bytes, kPayload, sizeof bytes) == 0);
  kiln_tensor_release(weight);
  kiln_tensor_release(bias);
}

/* As named tensors, in the file's order: the shell line is a name, its bytes numbers. */
static void check_named_tensors(kiln_runtime* rt) {
  kiln_example* tensors = NULL;
  kiln_tensor* t = NULL;
  const char* name = NULL;
  size_t count = 0;
  unsigned char bytes[8];
  CHECK_OK(kiln_safetensors_load(rt, file_path, &tensors));
  if (!tensors) return;
  CHECK_OK(kiln_example_field_count(tensors, &count));
  CHECK(count == 3);
  CHECK_OK(kiln_example_field(tensors, 2, &name, &t));
  CHECK(name && strcmp(name, shell_name) == 0);
  if (t) CHECK_OK(kiln_tensor_read(t, bytes, sizeof bytes));
  CHECK(memcmp(bytes, kPayload + 24, sizeof bytes) == 0);
  kiln_tensor_release(t);
  kiln_example_release(tensors);
}

int main(void) {
  const char* tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  const kiln_attr config[2] = {kiln_attr_int("in_features", 2), kiln_attr_int("out_features", 2)};
  char chunk[4096];
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
    /* Not strict: the tensor named by a shell line is no parameter of the model. */
    CHECK_OK(kiln_weights_load(model, file_path, 0));
    check_loaded_as_data(model);
  }
  check_named_tensors(rt);
  /* The same file from a trusted script, which could run anything it chose to. */
  CHECK_OK(kiln_script_create(rt, NULL, &script));
  snprintf(chunk, sizeof chunk,
           "local kiln = require('kiln')\n"
           "local path = '%s'\n"
           "kiln.load(path, kiln.nn.Linear(2, 2), {strict = false})\n"
           "local t = kiln.load(path)\n"
           "assert(t.weight:numel() == 4 and t.bias:numel() == 2)\n"
           "local shell = t['%s']\n"
           "assert(shell and shell:numel() == 8 and shell:dtype() == 'u8')\n"
           "local bytes = shell:totable()\n"
           "assert(bytes[1] == 0x1b and bytes[2] == string.byte('L'))\n",
           file_path, shell_name);
  if (script) CHECK_OK(kiln_script_run_string(script, chunk, "=load"));
  CHECK(access(marker, F_OK) != 0);

  kiln_script_release(script);
  kiln_module_release(model);
  kiln_runtime_release(rt);
  unlink(file_path);
  unlink(marker);
  return check_report("reliability/nothing_executed");
}
