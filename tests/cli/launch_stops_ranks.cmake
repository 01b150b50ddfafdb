# kiln launch, when a rank fails, stops the others and what they started,
# quickly: scripts/launch_stop.lua's rank 1 exits with 3 while rank 0 and
# its child `sleep 30` run.
#   cmake -DKILN=<exe> -DSCRIPT=<launch_stop.lua> -DFOLDER=<scratch folder> -P launch_stops_ranks.cmake
file(REMOVE_RECURSE ${FOLDER})
file(MAKE_DIRECTORY ${FOLDER})
string(TIMESTAMP start "%s")
execute_process(COMMAND ${KILN} launch --nproc-per-node 2 --stop-grace 5 ${SCRIPT} ${FOLDER}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 15)
string(TIMESTAMP end "%s")
math(EXPR seconds "${end} - ${start}")
message("-- exit code: ${code} after ${seconds} s\n-- stdout:\n${out}\n-- stderr:\n${err}")

set(failures)
if(NOT code EQUAL 3)
  string(APPEND failures "exit code ${code}, expected 3\n")
endif()
if(NOT err MATCHES "kiln launch: rank 1 exited with status 3\n")
  string(APPEND failures "stderr does not name rank 1 and its status\n")
endif()
# Rank 0 ends with SIGTERM at once: the grace period is not needed.
if(seconds GREATER_EQUAL 5)
  string(APPEND failures "took ${seconds} s: rank 0 was not stopped at once\n")
endif()
# Both rank 0 and its sleep have ended: gone, or a zombie of a parent that
# has not reaped it yet.
foreach(name rank0 sleep)
  set(pid_file ${FOLDER}/${name}.pid)
  if(NOT EXISTS ${pid_file})
    string(APPEND failures "${name}.pid was not written\n")
    continue()
  endif()
  file(STRINGS ${pid_file} pid LIMIT_COUNT 1)
  if(EXISTS /proc/${pid}/stat)
    file(READ /proc/${pid}/stat stat)
    if(stat MATCHES "^${pid} \\((kiln|sleep)\\) [^Z]")
      string(APPEND failures "${name} (pid ${pid}) still runs: ${stat}\n")
    endif()
  endif()
endforeach()
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
