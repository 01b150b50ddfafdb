# Fails unless the shared library LIBRARY exports nothing but symbols that
# match the regular expression ALLOWED (default ^kiln_: the C API; a plugin
# passes ^kiln_plugin_entry$), ignoring symbols the linker defines itself.
# Run with
#   cmake -DNM=<nm> -DLIBRARY=<lib.so> [-DALLOWED=<regex>] -P check_exports.cmake
cmake_minimum_required(VERSION 3.25) # a script's policies, IN_LIST's among them
if(NOT DEFINED ALLOWED)
  set(ALLOWED "^kiln_")
endif()
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}: ${errors}")
endif()

set(linker_defined _init _fini __bss_start _edata _end)
set(offenders "")
set(api_count 0)
string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  if(NOT line MATCHES "([^ ]+)$")
    continue()
  endif()
  set(symbol "${CMAKE_MATCH_1}")
  if(symbol MATCHES "${ALLOWED}")
    math(EXPR api_count "${api_count} + 1")
  elseif(NOT symbol IN_LIST linker_defined)
    string(APPEND offenders "  ${line}\n")
  endif()
endforeach()

if(offenders)
  message(FATAL_ERROR "${LIBRARY} exports symbols other than ${ALLOWED}:\n${offenders}")
endif()
if(api_count EQUAL 0)
  message(FATAL_ERROR "${LIBRARY} exports no symbol matching ${ALLOWED}")
endif()
message(STATUS "${LIBRARY}: ${api_count} symbols matching ${ALLOWED}, nothing else")
