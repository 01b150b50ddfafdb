# Runs a sanitizer canary, which passes only when the sanitizer stops it:
#   cmake -DPROGRAM=<exe> -DREPORT=<regex> -P expect_sanitizer_stop.cmake
# The program must exit non-zero and its output must hold the sanitizer's
# report (REPORT); a canary that runs to the end, or dies some other way,
# fails the test.
if(NOT DEFINED PROGRAM OR NOT DEFINED REPORT)
  message(FATAL_ERROR "expect_sanitizer_stop.cmake needs -DPROGRAM=<executable> and -DREPORT=<regex>")
endif()
# The sanitizers' own defaults, whatever the caller's environment says: stop
# at the first error with the usual exit code.
set(ENV{ASAN_OPTIONS} "halt_on_error=1:abort_on_error=0:detect_leaks=0")
set(ENV{UBSAN_OPTIONS} "halt_on_error=1:abort_on_error=0:print_stacktrace=1")
set(ENV{TSAN_OPTIONS} "halt_on_error=1:abort_on_error=0")
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${PROGRAM}\n-- exit code: ${code}\n-- stdout:\n${out}\n-- stderr:\n${err}")
if(code STREQUAL "0")
  message(FATAL_ERROR "the canary ran to the end: the sanitizer it was built with is not live")
endif()
if(NOT "${out}${err}" MATCHES "${REPORT}")
  message(FATAL_ERROR "the canary exited with '${code}' but without the report '${REPORT}'")
endif()
message("stopped by the sanitizer, as a canary must be")
