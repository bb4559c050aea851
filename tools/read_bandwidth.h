/* The memory read-bandwidth probe shared by `hmx bench-model` and
 * hmx-bench-decode-ops (tools/read_bandwidth.c). */
#ifndef HMX_TOOLS_READ_BANDWIDTH_H
#define HMX_TOOLS_READ_BANDWIDTH_H

/* GB/s of `threads` threads (0: OpenMP's default) reading a 512 MiB buffer,
 * best of 3; 0 if the buffer cannot be allocated. */
double hmx_read_bandwidth(int threads);

#endif
