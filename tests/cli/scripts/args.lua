-- Prints what `kiln run` passed on: arg[0], the arguments in `arg`, and the
-- chunk's `...`.
local dots = table.concat({ ... }, ",")
print(string.format("arg[0]=%s n=%d args=%s dots=%s", arg[0], #arg, table.concat(arg, ","), dots))
