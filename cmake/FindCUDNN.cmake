# Finds cuDNN: cudnn.h and libcudnn.so, in the CUDA Toolkit or the places the
# Debian and NVIDIA packages install them. Defines CUDNN_FOUND,
# CUDNN_VERSION and the imported target CUDNN::cudnn.
set(_cudnn_hints ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_LIBRARY_ROOT} /usr/local/cuda)
find_path(CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${_cudnn_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include
  PATHS /usr/include /usr/include/x86_64-linux-gnu)
find_library(CUDNN_LIBRARY cudnn
  HINTS ${_cudnn_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu
  PATHS /usr/lib/x86_64-linux-gnu)

if(CUDNN_INCLUDE_DIR)
  foreach(_header cudnn_version.h cudnn.h)
    if(EXISTS "${CUDNN_INCLUDE_DIR}/${_header}")
      file(STRINGS "${CUDNN_INCLUDE_DIR}/${_header}" _cudnn_defines REGEX "#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ")
      if(_cudnn_defines)
        string(REGEX REPLACE ".*CUDNN_MAJOR ([0-9]+).*" "\\1" _major "${_cudnn_defines}")
        string(REGEX REPLACE ".*CUDNN_MINOR ([0-9]+).*" "\\1" _minor "${_cudnn_defines}")
        string(REGEX REPLACE ".*CUDNN_PATCHLEVEL ([0-9]+).*" "\\1" _patch "${_cudnn_defines}")
        set(CUDNN_VERSION "${_major}.${_minor}.${_patch}")
        break()
      endif()
    endif()
  endforeach()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDNN REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR VERSION_VAR CUDNN_VERSION)

if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
  add_library(CUDNN::cudnn SHARED IMPORTED)
  set_target_properties(CUDNN::cudnn PROPERTIES
    IMPORTED_LOCATION "${CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
