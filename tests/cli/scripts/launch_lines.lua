-- A line on each stream, then a last line that has no newline.
io.stderr:write("to stderr\n")
io.write("first line\nlast line without a newline")
