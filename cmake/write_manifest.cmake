# cmake -DDIR=<folder> -P write_manifest.cmake
# Writes DIR/MANIFEST: one "sha256  name" line per *.safetensors, sorted by
# name (the format of `sha256sum`, so `sha256sum -c MANIFEST` checks it).
if(NOT DIR)
  message(FATAL_ERROR "usage: cmake -DDIR=<folder> -P write_manifest.cmake")
endif()
file(GLOB files RELATIVE ${DIR} ${DIR}/*.safetensors)
list(SORT files)
set(text "")
foreach(f IN LISTS files)
  file(SHA256 ${DIR}/${f} h)
  string(APPEND text "${h}  ${f}\n")
endforeach()
file(WRITE ${DIR}/MANIFEST "${text}")
list(LENGTH files n)
message(STATUS "MANIFEST: ${n} files in ${DIR}")
