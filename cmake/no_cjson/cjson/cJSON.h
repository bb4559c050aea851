/* First on the include path when hadamix is configured without cJSON
 * (cmake/HmxDependencies.cmake), so that a source which still includes cJSON
 * fails here, even on a machine whose system headers have it, instead of
 * compiling against a library the build does not link. */
#error "hadamix is configured without cJSON: this source must not be built, or not include cJSON"
