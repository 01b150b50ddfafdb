-- Writes 1000 lines "r<RANK>:<i>:xxx...x", each in pieces that reach the
-- pipe one by one, so that the launcher receives lines cut anywhere.
io.stdout:setvbuf("no")
local tag = "r" .. os.getenv("RANK") .. ":"
local tail = string.rep("x", 50) .. "\n"
for i = 1, 1000 do
  io.write(tag, i, ":", tail:sub(1, 20))
  io.write(tail:sub(21))
end
