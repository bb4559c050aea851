/* The shared library libhadamix is the static archive linked whole
 * (cmake/HmxInstall.cmake); CMake needs one source file of its own for it.
 * This is that file: it defines nothing. */
typedef int hmx_shared_library_has_no_code_of_its_own;
