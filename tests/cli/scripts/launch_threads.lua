-- Prints the kiln run options this rank was started with (from its command line).
local f = assert(io.open("/proc/self/cmdline", "rb"))
local cmdline = f:read("a"):gsub("%z", " ")
f:close()
print("threads option: " .. (cmdline:match("%-%-threads=%d+") or "none"))
