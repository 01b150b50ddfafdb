# kiln_plugin_setup(<target>)
# Makes the MODULE (or SHARED) library <target> a kiln plugin: compiled
# against kiln_plugin.h (kiln::plugin_api, which links nothing), with hidden
# visibility so that only what KILN_PLUGIN_EXPORT marks (kiln_plugin_entry)
# is exported, and linked with --no-undefined so that a plugin reaching for
# libkiln.so, which it must not link, fails when it is linked rather than
# when a host loads it.
#
# Used by kiln's own plugins and installed with the kiln package for
# plugins built against an installed kiln:
#   find_package(kiln REQUIRED)
#   add_library(my_plugin MODULE my_plugin.c)
#   kiln_plugin_setup(my_plugin)
function(kiln_plugin_setup target)
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(MODULE|SHARED)_LIBRARY$")
    message(FATAL_ERROR "kiln_plugin_setup(${target}): a plugin is a MODULE or SHARED library, "
                        "but ${target} is a ${type}")
  endif()
  target_link_libraries(${target} PRIVATE kiln::plugin_api)
  target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endfunction()
