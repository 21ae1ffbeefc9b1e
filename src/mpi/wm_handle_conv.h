/* Handles as integers: MPI_<X>_toint / _fromint and their Fortran twins MPI_<X>_c2f / _f2c, which
 * in the standard ABI give the same integers (wm_handle_conv.c).
 *
 * Concurrency contract: wm_handle_conv_forget may be called from any thread, with no lock held;
 * it takes the table's own mutex. */
#ifndef WM_HANDLE_CONV_H
#define WM_HANDLE_CONV_H

#include <mpi.h>

/* A message handle is consumed (MPI_Mrecv, MPI_Imrecv): its integer, if it had one, is free for
 * reuse. Call before freeing the object. */
void wm_handle_conv_forget_message(MPI_Message m);

#endif
