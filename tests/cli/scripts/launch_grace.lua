-- Rank 0 stops itself with SIGSTOP, which leaves the launcher's SIGTERM
-- pending; rank 1 waits until rank 0 is stopped and exits with 3. kiln
-- launch must kill rank 0 with SIGKILL once the grace period is over.
local function stat(pid)
  local file = io.open("/proc/" .. pid .. "/stat")
  if not file then return nil end
  local line = file:read("l")
  file:close()
  return line
end

local pid, launcher = stat("self"):match("^(%d+) %(.*%) %a (%d+)")
if os.getenv("RANK") == "0" then
  os.execute("kill -STOP " .. pid)
  print("rank 0 continued")
else
  -- Rank 0 is the launcher's other child.
  local deadline = os.time() + 10
  while os.time() <= deadline do
    local file = assert(io.open("/proc/" .. launcher .. "/task/" .. launcher .. "/children"))
    local children = file:read("a")
    file:close()
    for child in children:gmatch("%d+") do
      local line = child ~= pid and stat(child)
      if line and line:match("^%d+ %(.*%) T") then
        print("rank 0 is stopped")
        os.exit(3)
      end
    end
    os.execute("sleep 0.05")
  end
  print("rank 0 did not stop")
  os.exit(4)
end
