# ctest exact_tier_flags: the exact tier must never be built with fast-math
# style flags (docs/NUMERICS.md "No contraction", "Fast tier"). Scans every
# CMake file of the source tree; the only allowed place is the per-file
# options of the fast tier's kernels in cpu_fast/cpu_fast.cmake.
#   cmake -DSRC=<source dir> -P check_exact_flags.cmake
file(GLOB_RECURSE _files "${SRC}/CMakeLists.txt" "${SRC}/*.cmake")
set(_bad "")
foreach(_f IN LISTS _files)
  file(RELATIVE_PATH _rel "${SRC}" "${_f}")
  if(_rel MATCHES "^build" OR _rel MATCHES "^\\." OR _rel STREQUAL "tests/check_exact_flags.cmake")
    continue() # build trees, hidden folders, this checker
  endif()
  file(STRINGS "${_f}" _lines REGEX
       "ffast-math|ffp-contract=fast|funsafe-math|fassociative-math|use_fast_math|fmad=true|Ofast")
  foreach(_l IN LISTS _lines)
    if(_l MATCHES "^ *#" OR _l MATCHES " MATCHES ")
      continue() # a comment that names a flag, or a check that refuses one
    endif()
    if(_rel STREQUAL "cpu_fast/cpu_fast.cmake" AND _l MATCHES "-ffp-contract=fast\"")
      continue() # the fast tier's own kernel files (set_source_files_properties)
    endif()
    string(APPEND _bad "  ${_rel}: ${_l}\n")
  endforeach()
endforeach()
list(LENGTH _files _n)
if(_n LESS 10)
  message(FATAL_ERROR "exact_tier_flags: only ${_n} CMake files under '${SRC}'")
endif()
if(_bad)
  message(FATAL_ERROR "fast-math style flags outside the fast tier's kernel files:\n${_bad}")
endif()
message(STATUS "exact_tier_flags: no fast-math style flag outside cpu_fast's kernel files")
