/* The promises of a sandboxed script (RELIABILITY 18-21): the instruction
 * limit stops endless loops even under pcall, the memory limit gives a
 * memory error and leaves the state usable, the environment reaches neither
 * files nor the VM's internals nor binary chunks, and an error unwinding
 * through the module's C++ frames runs their destructors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln_script.h"

static kiln_script* make_script(kiln_runtime* rt, int sandbox, int64_t instruction_limit, size_t memory_limit) {
  kiln_script* s = NULL;
  kiln_script_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.sandbox = sandbox;
  o.instruction_limit = instruction_limit;
  o.memory_limit = memory_limit;
  CHECK_OK(kiln_script_create(rt, &o, &s));
  return s;
}

static void test_instruction_limit(kiln_runtime* rt) {
  kiln_script* s = make_script(rt, 1, 1000000, 0);
  if (!s) return;
  CHECK_ERROR(kiln_script_run_string(s, "while true do end", "=loop"), KILN_ERR_SCRIPT,
              "loop:1: the script exceeded its limit of 1000000 instructions per run", "stack traceback");
  /* A script that catches the error keeps getting it back. */
  CHECK_ERROR(kiln_script_run_string(s, "while true do pcall(function() while true do end end) end", "=caught"),
              KILN_ERR_SCRIPT, "exceeded its limit");
  CHECK_ERROR(kiln_script_run_string(s, "local ok repeat ok = pcall(error, 'x') until false", "=repeat"),
              KILN_ERR_SCRIPT, "exceeded its limit");
  /* Each run has its own count: a short run after a stopped one succeeds. */
  CHECK_OK(kiln_script_run_string(s, "local n = 0 for i = 1, 1000 do n = n + i end assert(n == 500500)", "=short"));
  kiln_script_release(s);
}

static void test_memory_limit(kiln_runtime* rt) {
  kiln_script* s = make_script(rt, 1, 0, 8u << 20);
  if (!s) return;
  CHECK_ERROR(kiln_script_run_string(s, "local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(64) .. i end", "=hog"),
              KILN_ERR_OUT_OF_MEMORY, "not enough memory", "memory limit is 8388608 bytes");
  /* The state and the host go on: the hog's memory was collected. */
  CHECK_OK(kiln_script_run_string(s, "local t = {} for i = 1, 1000 do t[i] = i end assert(#t == 1000)", "=after"));
  /* Caught by the script, the memory error is an ordinary error value. */
  CHECK_OK(kiln_script_run_string(
      s, "local ok, e = pcall(function() return ('x'):rep(64 << 20) end) assert(not ok and e:find('not enough memory'))",
      "=caught"));
  CHECK_OK(kiln_script_run_string(s, "local kiln = require('kiln') assert(kiln.ones(2, 2):sum():item() == 4)",
                                  "=tensors"));
  kiln_script_release(s);
}

static void test_environment(kiln_runtime* rt) {
  kiln_script* s = make_script(rt, 1, 0, 0);
  if (!s) return;
  CHECK_OK(kiln_script_run_string(s,
                                  "assert(os == nil and io == nil and debug == nil and package == nil)\n"
                                  "assert(dofile == nil and loadfile == nil)\n"
                                  "assert(string.dump == nil and ('').dump == nil)\n"
                                  "assert(_G.os == nil and _G == _ENV)\n"
                                  "assert(type(string.rep) == 'function' and math.floor(2.5) == 2)\n"
                                  "assert(table.concat({'a', 'b'}) == 'ab' and utf8.char(65) == 'A')\n"
                                  "assert(coroutine.wrap(function() coroutine.yield(7) end)() == 7)\n"
                                  "assert(load('return 1 + 1')() == 2)\n"
                                  "assert(collectgarbage('count') > 0)\n",
                                  "=allowed"));
  CHECK_ERROR(kiln_script_run_string(s, "require('os')", "=require"), KILN_ERR_SCRIPT,
              "require:1: require: only the kiln module is available in a sandbox (asked for 'os')");
  CHECK_OK(kiln_script_run_string(s, "local kiln = require('kiln') assert(kiln.version == require('kiln').version)",
                                  "=kiln"));
  CHECK_ERROR(kiln_script_run_string(s, "collectgarbage('stop')", "=gc"), KILN_ERR_SCRIPT,
              "option \"stop\" is not available in a sandbox");
  CHECK_ERROR(kiln_script_run_string(s, "load('return 1', 'x', 'b')", "=mode"), KILN_ERR_SCRIPT,
              "only text chunks can be loaded");
  kiln_script_release(s);
}

/* Promise 20 as an allow-list: every name reachable from a sandbox's
 * globals, through tables and their metatables (at most 4 deep, deeper is an
 * error) and through the metatable all strings share, is exactly this list.
 * Something new in Lua's libraries or in the sandbox's construction shows
 * here before it reaches a script. The math library is Debian's, with the 5.2
 * compatibility functions (atan2, cosh, pow, ...): pure arithmetic. The
 * strings' metatable holds Lua 5.4's coercions of strings in arithmetic. The
 * kiln module (require's only answer) is its own tests' business. */
static void test_exact_allow_list(kiln_runtime* rt) {
  static const char* const expected =
      "(strings).__add (strings).__div (strings).__idiv (strings).__index (strings).__mod (strings).__mul "
      "(strings).__pow (strings).__sub (strings).__unm "
      "_G _VERSION assert collectgarbage coroutine coroutine.close coroutine.create coroutine.isyieldable "
      "coroutine.resume coroutine.running coroutine.status coroutine.wrap coroutine.yield error getmetatable ipairs "
      "load math math.abs math.acos math.asin math.atan math.atan2 math.ceil math.cos math.cosh math.deg math.exp "
      "math.floor math.fmod math.frexp math.huge math.ldexp math.log math.log10 math.max math.maxinteger math.min "
      "math.mininteger math.modf math.pi math.pow math.rad math.random math.randomseed math.sin math.sinh math.sqrt "
      "math.tan math.tanh math.tointeger math.type math.ult next pairs pcall print rawequal rawget rawlen rawset "
      "require select setmetatable string string.byte string.char string.find string.format string.gmatch "
      "string.gsub string.len string.lower string.match string.pack string.packsize string.rep string.reverse "
      "string.sub string.unpack string.upper table table.concat table.insert table.move table.pack table.remove "
      "table.sort table.unpack tonumber tostring type utf8 utf8.char utf8.charpattern utf8.codepoint utf8.codes "
      "utf8.len utf8.offset xpcall";
  char chunk[4096];
  kiln_script* s = make_script(rt, 1, 0, 0);
  if (!s) return;
  snprintf(chunk, sizeof chunk,
           "local names, seen = {}, {}\n"
           "local function walk(t, path, depth)\n"
           "  if depth > 4 then error('the sandbox nests tables more than 4 deep: ' .. path) end\n"
           "  seen[t] = true\n"
           "  local meta = getmetatable(t)\n"
           "  if type(meta) == 'table' and not seen[meta] then walk(meta, path .. '(metatable).', depth + 1) end\n"
           "  for k, v in pairs(t) do\n"
           "    names[#names + 1] = path .. tostring(k)\n"
           "    if type(v) == 'table' and not seen[v] then walk(v, path .. tostring(k) .. '.', depth + 1) end\n"
           "  end\n"
           "end\n"
           "walk(_G, '', 1)\n"
           "walk(getmetatable(''), '(strings).', 1)\n"
           "table.sort(names)\n"
           "local got = table.concat(names, ' ')\n"
           "if got ~= '%s' then error('the sandbox reaches: ' .. got) end\n"
           "assert(getmetatable('').__index == string)\n",
           expected);
  CHECK_OK(kiln_script_run_string(s, chunk, "=allow_list"));
  kiln_script_release(s);
}

/* No function of the kiln module reaches a file from a sandbox; the same
 * calls work in a trusted state. */
static void test_no_file_access(kiln_runtime* rt) {
  static const char* const setup =
      "kiln = require('kiln')\n"
      "model = kiln.nn.Linear(2, 2)\n"
      "src = kiln.data.source('tensors', {input = kiln.ones(4, 2), target = kiln.tensor({0, 1, 0, 1}, {dtype = 'i64'})})\n"
      "fit = {model = model, loss = 'cross_entropy', optimizer = kiln.optim.SGD(model:parameters()),\n"
      "       train = kiln.data.loader(src, {batch_size = 2}), max_steps = 1, progress = 'quiet'}\n";
  kiln_script* s = make_script(rt, 1, 0, 0);
  kiln_script* trusted = make_script(rt, 0, 0, 0);
  if (!s || !trusted) return;
  CHECK_OK(kiln_script_run_string(s, setup, "=setup"));
  CHECK_ERROR(kiln_script_run_string(s, "kiln.save('sandbox_weights.safetensors', model)", "=save"),
              KILN_ERR_SCRIPT, "kiln.save: a sandboxed script cannot read or write files");
  CHECK_ERROR(kiln_script_run_string(s, "kiln.load('/etc/passwd')", "=load"), KILN_ERR_SCRIPT,
              "kiln.load: a sandboxed script cannot read or write files");
  CHECK_ERROR(kiln_script_run_string(s, "kiln.profile(function() end) kiln.write_trace('trace.json')", "=trace"),
              KILN_ERR_SCRIPT, "kiln.write_trace: a sandboxed script cannot read or write files");
  CHECK_ERROR(kiln_script_run_string(s, "fit.metrics = 'sandbox_metrics.jsonl' kiln.fit(fit)", "=metrics"),
              KILN_ERR_SCRIPT, "kiln.fit: metrics: a sandboxed script cannot read or write files");
  CHECK_ERROR(kiln_script_run_string(s, "fit.metrics = nil fit.checkpoint = 'x.safetensors' kiln.fit(fit)",
                                     "=checkpoint"),
              KILN_ERR_SCRIPT, "kiln.fit: checkpoint: a sandboxed script cannot read or write files");
  CHECK_ERROR(kiln_script_run_string(s, "fit.checkpoint = nil fit.resume = 'x.safetensors' kiln.fit(fit)",
                                     "=resume"),
              KILN_ERR_SCRIPT, "kiln.fit: resume: a sandboxed script cannot read or write files");
  CHECK_ERROR(kiln_script_run_string(s, "fit.resume = nil fit.tensorboard = 'runs' kiln.fit(fit)", "=tensorboard"),
              KILN_ERR_SCRIPT, "kiln.fit: tensorboard: a sandboxed script cannot read or write files");
  CHECK_ERROR(kiln_script_run_string(s, "fit.tensorboard = nil fit.trace = 'trace.json' kiln.fit(fit)", "=fit trace"),
              KILN_ERR_SCRIPT, "kiln.fit: trace: a sandboxed script cannot read or write files");
  CHECK_ERROR(kiln_script_run_string(s, "kiln.data.source('idx', {images = '/etc/passwd'})", "=source"),
              KILN_ERR_SCRIPT, "source 'idx' is not available in a sandbox",
              "(available: tensors, synthetic)");
  /* What needs no file still runs. */
  CHECK_OK(kiln_script_run_string(s, "fit.trace = nil kiln.fit(fit)\n"
                                     "assert(#kiln.data.source('synthetic', {length = 3, shape = {2}}) == 3)",
                                  "=allowed"));
  CHECK_OK(kiln_script_run_string(trusted, setup, "=setup"));
  CHECK_OK(kiln_script_run_string(trusted,
                                  "kiln.save('sandbox_weights.safetensors', model)\n"
                                  "kiln.load('sandbox_weights.safetensors', model)\n"
                                  "os.remove('sandbox_weights.safetensors')",
                                  "=trusted"));
  kiln_script_release(s);
  kiln_script_release(trusted);
}

/* A binary chunk made by a trusted state is refused by the sandbox's load
 * and by run_file in both kinds of state. */
static void test_binary_chunks(kiln_runtime* rt) {
  const char* path = "sandbox_binary_chunk.luac";
  kiln_script* trusted = make_script(rt, 0, 0, 0);
  kiln_script* sandbox = make_script(rt, 1, 0, 0);
  char chunk[256];
  if (!trusted || !sandbox) return;
  snprintf(chunk, sizeof chunk,
           "local f = assert(io.open('%s', 'wb')) f:write(string.dump(function() return 42 end)) f:close()", path);
  CHECK_OK(kiln_script_run_string(trusted, chunk, "=dump"));
  CHECK_ERROR(kiln_script_run_file(trusted, path, NULL, 0), KILN_ERR_SCRIPT, "attempt to load a binary chunk");
  CHECK_ERROR(kiln_script_run_file(sandbox, path, NULL, 0), KILN_ERR_SCRIPT, "attempt to load a binary chunk");
  {
    /* The same bytes as a Lua string literal of decimal escapes. */
    FILE* f = fopen(path, "rb");
    static char source[16384];
    size_t used = 0;
    int c;
    CHECK(f != NULL);
    if (!f) return;
    used += (size_t)snprintf(source, sizeof source, "local bytes = \"");
    while ((c = fgetc(f)) != EOF && used + 8 < sizeof source) used += (size_t)snprintf(source + used, 8, "\\%d", c);
    fclose(f);
    snprintf(source + used, sizeof source - used,
             "\"\nlocal f, e = load(bytes)\nassert(f == nil and e:find('attempt to load a binary chunk'), e)");
    CHECK_OK(kiln_script_run_string(sandbox, source, "=load_binary"));
  }
  remove(path);
  kiln_script_release(trusted);
  kiln_script_release(sandbox);
}

/* A runtime error raised inside a bound call is a Lua error that pcall
 * catches with the runtime's message; an error unwinding through
 * kiln.no_grad's C++ frame runs the destructor that turns recording back
 * on; the state goes on. */
static void test_errors_through_bound_functions(kiln_runtime* rt) {
  kiln_script* s = make_script(rt, 1, 0, 0);
  int enabled = 0;
  if (!s) return;
  CHECK_OK(kiln_script_run_string(s,
                                  "local kiln = require('kiln')\n"
                                  "local ok, e = pcall(kiln.F.matmul, kiln.ones(2, 3), kiln.ones(2, 3))\n"
                                  "assert(not ok and e:find('matmul'), e)\n"
                                  "ok, e = pcall(kiln.no_grad, function() error('inside no_grad') end)\n"
                                  "assert(not ok and e:find('inside no_grad'), e)\n",
                                  "=bound"));
  CHECK_OK(kiln_grad_enabled(rt, &enabled));
  CHECK(enabled == 1);
  CHECK_OK(kiln_script_run_string(s, "local kiln = require('kiln') assert((kiln.ones(2) + 1):sum():item() == 4)",
                                  "=after"));
  kiln_script_release(s);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  if (!rt) return check_report("lua/sandbox");
  test_instruction_limit(rt);
  test_memory_limit(rt);
  test_environment(rt);
  test_exact_allow_list(rt);
  test_binary_chunks(rt);
  test_no_file_access(rt);
  test_errors_through_bound_functions(rt);
  kiln_runtime_release(rt);
  return check_report("lua/sandbox");
}
