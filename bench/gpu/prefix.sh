# Sourced by bench/gpu-check: the .debs of .deps/debs unpacked into a
# prefix (.deps/prefix), and the environment that makes CMake and kiln's
# programs use it.

readonly GPU_CHECK_MULTIARCH=x86_64-linux-gnu

# One .deb's files into a folder: dpkg-deb where the machine has dpkg,
# otherwise ar and tar (a .deb is an ar archive holding data.tar.*).
unpack_deb() {
  local deb=$1 prefix=$2 member
  if dpkg-deb --version >/dev/null 2>&1; then
    dpkg-deb -x "$deb" "$prefix"
    return
  fi
  command -v ar >/dev/null || { echo "gpu-check: neither dpkg-deb nor ar is there to unpack $deb" >&2; return 1; }
  member=$(ar t "$deb" | grep '^data\.tar') || { echo "gpu-check: $deb has no data.tar member" >&2; return 1; }
  case $member in
    *.xz) ar p "$deb" "$member" | tar -xJ -C "$prefix" ;;
    *.zst) ar p "$deb" "$member" | zstd -dc | tar -x -C "$prefix" ;;
    *.gz) ar p "$deb" "$member" | tar -xz -C "$prefix" ;;
    *) ar p "$deb" "$member" | tar -x -C "$prefix" ;;
  esac
}

# Debian's absolute links (zlib1g-dev's libz.so -> /lib/...) would leave
# the prefix: each points to its target inside the prefix instead.
relink_into_prefix() {
  local prefix=$1 link target
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    [[ $target == /* && -e $prefix$target ]] && ln -sfn "$prefix$target" "$link"
  done < <(find "$prefix" -type l -print0)
}

# Unpacks every .deb of folder $1 into prefix $2, unless the prefix already
# holds exactly these (a second run on the same machine).
unpack_debs() {
  local debs=$1 prefix=$2 deb listing
  local -a found=("$debs"/*.deb)
  [[ -e ${found[0]} ]] || { echo "gpu-check: no .deb in $debs: run bench/gpu-check --prepare first" >&2; return 1; }
  listing=$(stat -c '%s %n' "${found[@]}")
  if [[ $(cat "$prefix/.unpacked" 2>/dev/null) != "$listing" ]]; then
    rm -rf "$prefix"
    mkdir -p "$prefix"
    for deb in "${found[@]}"; do
      echo "unpacking $(basename "$deb")"
      unpack_deb "$deb" "$prefix" || return 1
    done
    relink_into_prefix "$prefix"
    echo "$listing" >"$prefix/.unpacked"
  fi
  echo "${#found[@]} packages, $(du -sh "$prefix" | cut -f1) in $prefix"
}

# Where kiln's programs find the prefix's libraries (oneDNN, OpenCL's
# loader, Lua). Not lib/: zlib1g is there only for linking, and the
# machine's newer zlib serves at run time.
prefix_library_path() { echo "$1/usr/lib/$GPU_CHECK_MULTIARCH"; }

# The CMake options that make the prefix's packages the ones found.
# CMAKE_LIBRARY_PATH and CMAKE_INCLUDE_PATH cover compilers for which CMake
# knows no multiarch folder.
prefix_cmake_options() {
  local prefix=$1
  echo "-DCMAKE_PREFIX_PATH=$prefix/usr"
  echo "-DCMAKE_INCLUDE_PATH=$prefix/usr/include"
  echo "-DCMAKE_LIBRARY_PATH=$prefix/usr/lib/$GPU_CHECK_MULTIARCH;$prefix/lib/$GPU_CHECK_MULTIARCH"
}

cache_value() { sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt"; }

# cache_values BUILD NAMES...: "  NAME = VALUE" for each that is set.
cache_values() {
  local build=$1 name value
  shift
  for name in "$@"; do
    value=$(cache_value "$build" "$name")
    [[ -n $value ]] && echo "  $name = $value"
  done
}

# What CMake found for each dependency, from the cache of build folder $1;
# fails naming every one that is not from prefix $2.
check_found_in_prefix() {
  local build=$1 prefix=$2 name value outside=()
  local -a names=(dnnl_DIR OpenCL_INCLUDE_DIR OpenCL_LIBRARY Catch2_DIR Boost_DIR Boost_INCLUDE_DIR
                  KILN_LUA_INCLUDE_DIR KILN_LUA_LIBRARY ZLIB_INCLUDE_DIR ZLIB_LIBRARY_RELEASE ZLIB_LIBRARY)
  for name in "${names[@]}"; do
    value=$(cache_value "$build" "$name")
    [[ -z $value ]] && continue
    if [[ $value == "$prefix"/* ]]; then
      echo "  $name = $value"
    else
      echo "  $name = $value   <- not from $prefix"
      outside+=("$name")
    fi
  done
  if ((${#outside[@]})); then
    echo "found outside the prefix: ${outside[*]}"
    return 1
  fi
}
