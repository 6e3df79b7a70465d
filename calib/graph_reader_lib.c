/* kernels/graph_reader.c compiled into libhetsim, so that `hetsim calib compare-refexec` and the unit tests
 * read graph files with the very code kernels/refexec uses. That file needs only libc and is built on its own
 * by kernels/Makefile; the Makefile's library wildcard does not reach kernels/, hence this one-line unit. */
#include "kernels/graph_reader.c"
