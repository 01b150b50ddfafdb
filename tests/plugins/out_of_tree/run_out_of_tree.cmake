# The out-of-tree plugin test, run by CTest as
#   cmake -DKILN_BUILD_DIR=... -DWORK_DIR=... ... -P run_out_of_tree.cmake
# (see CMakeLists.txt here for the variables). In stages, each failing with
# its output:
#   1. bring the kiln build up to date (install copies from it),
#   2. install it into WORK_DIR/prefix,
#   3. configure and build examples/plugin against that prefix,
#   4. check that the plugin exports only kiln_plugin_entry,
#   5. configure and build the host test program against that prefix,
#   6. run it on the plugin.

foreach(var KILN_BUILD_DIR WORK_DIR EXAMPLE_SOURCE_DIR HOST_SOURCE_DIR CHECK_HEADER_DIR CHECK_EXPORTS_SCRIPT
            GENERATOR C_COMPILER NM LIBDIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_out_of_tree.cmake needs -D${var}=...")
  endif()
endforeach()

# Runs a command; stops the test with its output when it fails.
function(run_stage name)
  message(STATUS "stage: ${name}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(JOIN " " command ${ARGN})
    message(FATAL_ERROR "stage '${name}' failed (${rc}):\n  ${command}\n${out}")
  endif()
  set(stage_output "${out}" PARENT_SCOPE)
endfunction()

# The same generator, make program, compiler and build type as kiln's build;
# warnings are errors.
set(project_options -G ${GENERATOR} -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON)
if(MAKE_PROGRAM)
  list(APPEND project_options -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(BUILD_TYPE)
  list(APPEND project_options -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
endif()
# A sanitizer build's libkiln.so needs its runtime loaded first: the host and
# the plugin are built with the same flags, as their authors would.
if(SANITIZER_FLAGS)
  list(JOIN SANITIZER_FLAGS " " flags)
  list(APPEND project_options "-DCMAKE_C_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${flags}"
       "-DCMAKE_SHARED_LINKER_FLAGS=${flags}")
endif()

file(REMOVE_RECURSE ${WORK_DIR})

run_stage("build kiln" ${CMAKE_COMMAND} --build ${KILN_BUILD_DIR})
run_stage("install kiln" ${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${WORK_DIR}/prefix)
foreach(installed include/kiln/kiln.h include/kiln/kiln_training.h include/kiln/kiln_plugin.h include/kiln/kiln_types.h
                  ${LIBDIR}/libkiln.so ${LIBDIR}/cmake/kiln/kilnConfig.cmake ${LIBDIR}/cmake/kiln/kilnPlugin.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${installed})
    message(FATAL_ERROR "the install into ${WORK_DIR}/prefix lacks ${installed}")
  endif()
endforeach()

run_stage("configure examples/plugin" ${CMAKE_COMMAND} -S ${EXAMPLE_SOURCE_DIR} -B ${WORK_DIR}/example ${project_options})
run_stage("build examples/plugin" ${CMAKE_COMMAND} --build ${WORK_DIR}/example)
set(plugin ${WORK_DIR}/example/libkiln_example_swish.so)
if(NOT EXISTS ${plugin})
  message(FATAL_ERROR "building examples/plugin did not give ${plugin}")
endif()

run_stage("exports of the plugin" ${CMAKE_COMMAND} -DNM=${NM} -DLIBRARY=${plugin} "-DALLOWED=^kiln_plugin_entry$"
          -P ${CHECK_EXPORTS_SCRIPT})

run_stage("configure the host test" ${CMAKE_COMMAND} -S ${HOST_SOURCE_DIR} -B ${WORK_DIR}/host ${project_options}
          -DKILN_TEST_CHECK_DIR=${CHECK_HEADER_DIR})
run_stage("build the host test" ${CMAKE_COMMAND} --build ${WORK_DIR}/host)

# The installed runtime finds its core plugins by itself; plugins from the
# caller's environment are kept out.
set(plugin_dir ${WORK_DIR}/prefix/${LIBDIR}/kiln/plugins)
file(GLOB installed_plugins ${plugin_dir}/lib*.so)
list(LENGTH installed_plugins n_installed_plugins)
run_stage("run the host test" ${CMAKE_COMMAND} -E env --unset=KILN_PLUGIN_PATH
          ${WORK_DIR}/host/swish_plugin_test ${plugin} ${plugin_dir} ${n_installed_plugins})
message("${stage_output}")
