# kiln launch copies lines whole: two ranks of scripts/launch_many_lines.lua
# each write 1000 lines in pieces; each line must come back whole, after
# its own rank's prefix, never mixed with the other rank's.
#   cmake -DKILN=<exe> -DSCRIPT=<launch_many_lines.lua> -P launch_whole_lines.cmake
execute_process(COMMAND ${KILN} launch --nproc-per-node 2 ${SCRIPT}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("-- exit code: ${code}\n-- stderr:\n${err}")
set(failures)
if(NOT code EQUAL 0)
  string(APPEND failures "exit code ${code}, expected 0\n")
endif()
string(REPEAT "x" 50 tail)
foreach(rank 0 1)
  string(REGEX MATCHALL "\\[rank ${rank}\\] r${rank}:[0-9]+:${tail}\n" lines "${out}")
  list(LENGTH lines count)
  if(NOT count EQUAL 1000)
    string(APPEND failures "${count} whole lines of rank ${rank}, expected 1000\n")
  endif()
endforeach()
string(REGEX MATCHALL "\n" newlines "${out}")
list(LENGTH newlines count)
if(NOT count EQUAL 2000)
  string(APPEND failures "${count} lines in all, expected 2000\n")
endif()
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
