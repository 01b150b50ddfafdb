# Runs the kiln executable and checks its exit code and output:
#   cmake -DKILN=<exe> -DEXIT=<code> [-DSTDOUT=<regex>] [-DSTDERR=<regex>]
#         [-DWORKDIR=<dir>] -P run_kiln.cmake -- <kiln arguments...>
# A regex must match somewhere in the stream ('.' also matches newlines).
if(NOT DEFINED KILN OR NOT DEFINED EXIT)
  message(FATAL_ERROR "run_kiln.cmake needs -DKILN=<executable> and -DEXIT=<expected exit code>")
endif()
if(NOT DEFINED WORKDIR)
  set(WORKDIR ${CMAKE_CURRENT_LIST_DIR})
endif()

# The kiln arguments are what follows "--" on cmake's command line.
set(args)
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_separator)
    list(APPEND args "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()

execute_process(COMMAND ${KILN} ${args} WORKING_DIRECTORY ${WORKDIR}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("kiln ${args}\n-- exit code: ${code}\n-- stdout:\n${out}\n-- stderr:\n${err}")
set(failures)
if(NOT code STREQUAL EXIT)
  string(APPEND failures "exit code ${code}, expected ${EXIT}\n")
endif()
set(output_STDOUT "${out}")
set(output_STDERR "${err}")
foreach(stream STDOUT STDERR)
  if(DEFINED ${stream} AND NOT output_${stream} MATCHES "${${stream}}")
    string(APPEND failures "${stream} does not match '${${stream}}'\n")
  endif()
endforeach()
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
