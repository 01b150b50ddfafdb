-- kiln.dist outside a job: rank 0 of 1, and meeting others fails saying how
-- to start a job.
local kiln = require("kiln")
local dir = arg[0]:match("^(.*)/[^/]*$")
package.path = dir .. "/?.lua;" .. package.path
local expect = require("expect")

if os.getenv("RANK") == nil then
  assert(kiln.dist.in_job() == false)
  assert(kiln.dist.rank() == 0 and kiln.dist.world_size() == 1)
  expect.error(function() kiln.dist.default() end, "WORLD_SIZE is not set", "kiln launch")
  expect.error(function() kiln.dist.group{rank = 3, world_size = 2} end, "rank 3 of 2 ranks")
  expect.error(function() kiln.dist.group{backend = "mpi", rank = 0, world_size = 1} end,
    "unknown process group backend 'mpi'")
  expect.error(function() kiln.dist.group{colour = "red"} end, "colour")
end
-- A group of one rank needs nobody else: every collective is the identity.
local solo = kiln.dist.group{rank = 0, world_size = 1, name = "solo"}
local t = kiln.tensor({1, 2})
solo:all_reduce(t, "mean")
expect.tensor(t, {1, 2}, 0, "one rank's mean")
solo:barrier()

-- While profiling, each collective is a span on a track of its own.
local path = os.tmpname()
kiln.profile(function()
  solo:all_reduce(t, "sum")
  solo:barrier()
end)
kiln.write_trace(path)
local file = assert(io.open(path, "r"))
local trace = file:read("a")
file:close()
os.remove(path)
local track = trace:match('"name":"thread_name","ph":"M","pid":%d+,"tid":(%d+),"args":{"name":"collectives"}')
assert(track, "the trace has no \"collectives\" track:\n" .. trace)
assert(trace:find('{"name":"all_reduce %(sum, [^"]*","cat":"span","ph":"X","pid":%d+,"tid":' .. track .. ','),
       "the all_reduce is not a span on the collectives track:\n" .. trace)
assert(trace:find('{"name":"barrier","cat":"span","ph":"X","pid":%d+,"tid":' .. track .. ','),
       "the barrier is not a span on the collectives track")
