/* What a call to an MPI function Weft does not implement does. Every stub generated from
 * src/mpi/abi/unimplemented.txt (into src/mpi/gen/wm_entry_<family>.c) is one call to this; see
 * docs/abi.md. */
#ifndef WM_UNSUPPORTED_H
#define WM_UNSUPPORTED_H

/* Raises MPI_ERR_UNSUPPORTED_OPERATION through the error handler of MPI_COMM_WORLD, with a message
 * naming func (the MPI_ name, e.g. "MPI_Win_create"), and returns that error code when the handler
 * returns. Any thread may call it, before MPI_Init and after MPI_Finalize too. */
int wm_unsupported(const char *func) __attribute__((cold, noinline));

#endif
