-- A layer built and run through the kiln module: two rows through a 3->2
-- Linear give a 2x2 result.
local kiln = require("kiln")
local layer = kiln.nn.Linear(3, 2)
local y = layer(kiln.ones(2, 3))
print("output shape " .. table.concat(y:shape(), "x"))
