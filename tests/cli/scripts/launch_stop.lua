-- kiln launch stops a rank that still runs when another fails.
-- arg[1]: a folder. Rank 0 writes its pid to rank0.pid, then starts a shell
-- that writes its own pid to sleep.pid and becomes `sleep 30`. Rank 1 waits
-- until that sleep runs, then exits with 3. The launcher must end rank 0 and
-- its sleep well before the 30 s.
local folder = arg[1]
local rank = os.getenv("RANK")

local function read_line(path)
  local file = io.open(path)
  if not file then return nil end
  local line = file:read("l")
  file:close()
  return line
end

if rank == "0" then
  local pid = read_line("/proc/self/stat"):match("^%d+")
  local file = assert(io.open(folder .. "/rank0.pid", "w"))
  file:write(pid, "\n")
  file:close()
  local sleep_pid = folder .. "/sleep.pid"
  os.execute("echo $$ > '" .. sleep_pid .. ".tmp' && mv '" .. sleep_pid .. ".tmp' '" .. sleep_pid .. "' && exec sleep 30")
  print("rank 0 slept for 30 s: it was not stopped")
else
  local deadline = os.time() + 10
  while true do
    local pid = read_line(folder .. "/sleep.pid")
    if pid and read_line("/proc/" .. pid .. "/comm") == "sleep" then break end
    if os.time() > deadline then
      print("rank 0 did not start sleeping")
      os.exit(4)
    end
    os.execute("sleep 0.05")
  end
  print("rank 1 fails")
  os.exit(3)
end
