# Fails unless the shared library LIBRARY exports nothing but kiln_* symbols
# (symbols the linker defines itself are ignored). Run with
#   cmake -DNM=<nm> -DLIBRARY=<libkiln.so> -P check_exports.cmake
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
  if(symbol MATCHES "^kiln_")
    math(EXPR api_count "${api_count} + 1")
  elseif(NOT symbol IN_LIST linker_defined)
    string(APPEND offenders "  ${line}\n")
  endif()
endforeach()

if(offenders)
  message(FATAL_ERROR "${LIBRARY} exports symbols outside the C API:\n${offenders}")
endif()
if(api_count EQUAL 0)
  message(FATAL_ERROR "${LIBRARY} exports no kiln_* symbol at all")
endif()
message(STATUS "${LIBRARY}: ${api_count} kiln_* symbols, nothing else")
