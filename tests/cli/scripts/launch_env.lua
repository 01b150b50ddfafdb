-- Prints, on one line, the variables `kiln launch` gives each rank and the
-- script's arguments.
local names = { "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT" }
local fields = {}
for _, name in ipairs(names) do
  fields[#fields + 1] = name .. "=" .. (os.getenv(name) or "unset")
end
print(table.concat(fields, " ") .. " args=" .. table.concat(arg, ","))
