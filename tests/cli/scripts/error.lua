-- Fails inside a function called from the main chunk, so that the traceback
-- has frames to show.
local function check_positive(x)
  if x <= 0 then error("x must be positive, got " .. x) end
end

check_positive(-1)
