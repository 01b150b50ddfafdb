/*
 * kiln_script.h: running Lua training scripts from a host, in plain C.
 *
 * libkiln_lua.so embeds Lua 5.4 (compiled as C++, so that a Lua error
 * unwinds C++ frames and their destructors run) with the `kiln` module
 * preloaded: `local kiln = require("kiln")`. The module is written on the C
 * API (kiln.h) alone, so what a script can do, a C host can do too. The
 * `kiln` executable (`kiln run script.lua`) is a host of this API.
 *
 *   kiln_script* s = NULL;
 *   kiln_script_options o = {.size = sizeof(kiln_script_options), .sandbox = 1,
 *                            .instruction_limit = 100000000, .memory_limit = 64 << 20};
 *   if (kiln_script_create(rt, &o, &s) == KILN_OK &&
 *       kiln_script_run_string(s, "return 1 + 1", "=two") != KILN_OK)
 *     fprintf(stderr, "%s\n", kiln_last_error());
 *   kiln_script_release(s);
 *
 * Errors: a failing run returns KILN_ERR_SCRIPT (or the status of the
 * runtime error the script did not catch) and kiln_last_error() holds the
 * message, with the script's file:line, and a Lua traceback.
 */
#ifndef KILN_KILN_SCRIPT_H
#define KILN_KILN_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

#if defined(_WIN32)
#  define KILN_SCRIPT_API __declspec(dllimport)
#else
#  define KILN_SCRIPT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One Lua state with the kiln module, bound to a runtime. Runs happen one
 * at a time (a script is not thread-safe); globals persist between runs. */
typedef struct kiln_script kiln_script;

/* Set `size` to sizeof(kiln_script_options); initialise by name. */
typedef struct kiln_script_options {
  size_t size;
  /* Nonzero: for untrusted scripts. The environment is built from an
   * allow-list (no os, io, debug, dofile, loadfile, require of files,
   * string.dump, package.loadlib, collectgarbage options that change the
   * collector); load() accepts text chunks only. The kiln module reaches
   * no file either: kiln.save, kiln.load, kiln.write_trace and kiln.fit's
   * metrics, checkpoint and resume are refused, and kiln.data.source makes
   * only the "tensors" and "synthetic" sources. */
  int sandbox;
  int64_t instruction_limit; /* Lua VM instructions per run (about); 0: no limit */
  size_t memory_limit;       /* bytes the Lua state may hold; 0: no limit */
  /* Nonzero: every kiln.fit prints its training report (kiln_trainer_report)
   * when it ends, as if called with report = true (`kiln run --report`). */
  int report;
} kiln_script_options;

/* `options` may be NULL (not sandboxed, no limits). The script holds a
 * reference on `rt`. */
KILN_SCRIPT_API kiln_status kiln_script_create(kiln_runtime* rt, const kiln_script_options* options,
                                               kiln_script** out);
KILN_SCRIPT_API void kiln_script_release(kiln_script* script);

/* Runs a Lua file with `args` as Lua's global `arg` (arg[0] = path,
 * arg[1..n] = args) and as the chunk's `...`. Text files only. */
KILN_SCRIPT_API kiln_status kiln_script_run_file(kiln_script* script, const char* path, const char* const* args,
                                                 size_t n_args);
/* Runs a text chunk; `chunk_name` is how messages name it (Lua's
 * convention: "=name" for a plain name, "@file.lua" for a file). */
KILN_SCRIPT_API kiln_status kiln_script_run_string(kiln_script* script, const char* chunk, const char* chunk_name);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_SCRIPT_H */
