-- Run by test_script_api.c with the arguments "one" and "two".
local first, second = ...
assert(first == "one" and second == "two", "the chunk's ... should be the arguments")
assert(arg[0]:find("args%.lua$") and arg[1] == "one" and arg[2] == "two" and #arg == 2, "arg should hold them too")
ran_args = true
