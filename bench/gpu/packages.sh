# Sourced by bench/gpu-check. `gpu-check --prepare`: downloads into
# .deps/debs the Debian packages kiln builds with that a bare GPU machine
# lacks, with the dependencies of theirs it lacks too, so that they travel
# with the working tree to a machine that has no network.

# What kiln needs (tools/install-deps installs the same on Debian).
# libboost-dev is only a pointer to the versioned libboost1.XX-dev, which is
# what gets downloaded. ocl-icd-opencl-dev is there because Debian's oneDNN
# has its OpenCL engine: dnnl-config.cmake looks for OpenCL's header and
# library, and libdnnl.so needs libOpenCL.so.1. ninja-build is used only
# where the machine has no ninja of its own.
readonly GPU_CHECK_PACKAGES=(libdnnl-dev ocl-icd-opencl-dev catch2 libboost-dev liblua5.4-dev zlib1g-dev
                             dataset-fashion-mnist ninja-build)
readonly GPU_CHECK_POINTERS=(libboost-dev)
# Dependencies kiln does not use: the Lua interpreter's line editing (kiln
# embeds the library only) and the OpenCL C++ bindings.
readonly GPU_CHECK_UNUSED=(libreadline-dev opencl-clhpp-headers)
# What a bare machine has: a Debian image has apt and what apt needs; a GPU
# machine has g++ too, nvcc's host compiler, with its libraries.
readonly GPU_CHECK_BASE_ROOTS=(apt g++)
# The size limit of what travels to the GPU machine (the working tree and
# the carried folders together).
readonly GPU_CHECK_CARRY_LIMIT=$((64 * 1024 * 1024))

# Every package the roots of a bare machine pull in, one per line.
base_packages() {
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances "${GPU_CHECK_BASE_ROOTS[@]}" | grep -v '^[ <]' | sort -u
}

# The dependency groups of package $1, one per line: "name|name (= 1.2)|...".
dependency_groups() {
  apt-cache show --no-all-versions "$1" | sed -n 's/^\(Pre-\)\{0,1\}Depends: //p' | tr ',' '\n' |
    sed 's/ *| */|/g; s/^ *//; s/ *$//; s/:any//g'
}

has_candidate() { apt-cache show --no-all-versions "$1" >/dev/null 2>&1; }

# in_list WORD LIST...: whether WORD is one of LIST.
in_list() {
  local word=$1 item
  shift
  for item in "$@"; do [[ $item == "$word" ]] && return 0; done
  return 1
}

# What a group needs downloaded, or nothing when the machine has it. An
# exact-version dependency (a -dev package's runtime library, which its .so
# links point into) is always downloaded, even where the machine has some
# version of it.
resolve_group() {
  local group=$1 base_file=$2 alternative name
  local -a alternatives
  IFS='|' read -r -a alternatives <<<"$group"
  for alternative in "${alternatives[@]}"; do
    name=${alternative%% *}
    if [[ $alternative == *"(= "* ]]; then echo "$name"; return; fi
    if grep -qx -- "$name" "$base_file"; then return; fi
  done
  for alternative in "${alternatives[@]}"; do
    name=${alternative%% *}
    if has_candidate "$name"; then echo "$name"; return; fi
  done
  echo "gpu-check: no installable package for the dependency '$group'" >&2
  return 1
}

# The packages to download, one per line: the roots and the dependencies of
# theirs that a bare machine lacks, minus the pointers and the unused ones.
packages_to_download() {
  local base_file=$1 package group needed
  local -a queue=("${GPU_CHECK_PACKAGES[@]}") seen=()
  while ((${#queue[@]})); do
    package=${queue[0]}
    queue=("${queue[@]:1}")
    in_list "$package" "${seen[@]}" && continue
    seen+=("$package")
    in_list "$package" "${GPU_CHECK_POINTERS[@]}" || echo "$package"
    while read -r group; do
      [[ -z $group ]] && continue
      needed=$(resolve_group "$group" "$base_file") || return 1
      [[ -z $needed ]] && continue
      in_list "$needed" "${GPU_CHECK_UNUSED[@]}" && continue
      queue+=("$needed")
    done < <(dependency_groups "$package")
  done
}

# The bytes of what travels besides the carried folders: the tracked files
# and the untracked ones git does not ignore.
working_tree_bytes() {
  git -C "$GPU_CHECK_REPO" ls-files -z --cached --others --exclude-standard |
    (cd "$GPU_CHECK_REPO" && xargs -0 du -cb --apparent-size 2>/dev/null) | awk 'END { print $1 + 0 }'
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

prepare_packages() {
  local debs=$GPU_CHECK_REPO/.deps/debs
  local base_file=$GPU_CHECK_REPO/.deps/base-packages.txt packages_file=$debs/PACKAGES
  command -v apt-get >/dev/null || { echo "gpu-check --prepare: needs apt-get (a Debian machine)" >&2; return 1; }
  apt-get update -qq || echo "gpu-check: apt-get update failed; going on with the package lists there are" >&2
  mkdir -p "$debs"
  base_packages >"$base_file"
  packages_to_download "$base_file" >"$packages_file" || return 1
  echo "gpu-check: downloading $(wc -l <"$packages_file") packages into .deps/debs:"
  sed 's/^/  /' "$packages_file"
  rm -f "$debs"/*.deb
  (cd "$debs" && xargs apt-get download -q <"$packages_file") || return 1
  local deb_bytes tree_bytes total
  deb_bytes=$(du -cb --apparent-size "$debs"/*.deb | awk 'END { print $1 }')
  tree_bytes=$(working_tree_bytes)
  total=$((deb_bytes + tree_bytes))
  echo
  ls -S -s --block-size=K "$debs" | sed 's/^/  /'
  echo "gpu-check: .deps/debs $(mib "$deb_bytes") + working tree $(mib "$tree_bytes") = $(mib "$total")" \
       "of the $(mib "$GPU_CHECK_CARRY_LIMIT") that travel"
  if ((total > GPU_CHECK_CARRY_LIMIT)); then
    echo "gpu-check: over the limit: delete the largest .deb above (the Fashion-MNIST dataset: the training" \
         "and benchmark stages then fail for want of it) and carry the rest" >&2
    return 1
  fi
  echo 'gpu-check: run it on the GPU machine with carry [".deps/debs"] and the command: bench/gpu-check'
}
