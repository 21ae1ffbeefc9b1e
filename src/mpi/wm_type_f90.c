/* Fortran-kind helpers: MPI_Type_match_size and MPI_Type_create_f90_{integer,real,complex}. They
 * return the predefined sized types (MPI_INTEGERn, MPI_REALn, MPI_COMPLEXn), which the standard
 * allows as the result must behave as a predefined type (never freed). */
#include "mpi/wm_internal.h"

WM_API int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    if (!datatype)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_match_size", "datatype is NULL");
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (typeclass == MPI_TYPECLASS_INTEGER)
        t = size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4
          : size == 8 ? MPI_INTEGER8 : size == 16 ? MPI_INTEGER16 : MPI_DATATYPE_NULL;
    else if (typeclass == MPI_TYPECLASS_REAL)
        t = size == 2 ? MPI_REAL2 : size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8
          : size == 16 ? MPI_REAL16 : MPI_DATATYPE_NULL;
    else if (typeclass == MPI_TYPECLASS_COMPLEX)
        t = size == 4 ? MPI_COMPLEX4 : size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16
          : size == 32 ? MPI_COMPLEX32 : MPI_DATATYPE_NULL;
    else if (typeclass == MPIX_TYPECLASS_LOGICAL)
        t = size == 1 ? MPI_LOGICAL1 : size == 2 ? MPI_LOGICAL2 : size == 4 ? MPI_LOGICAL4
          : size == 8 ? MPI_LOGICAL8 : size == 16 ? MPI_LOGICAL16 : MPI_DATATYPE_NULL;
    else
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_match_size", "typeclass %d is unknown",
                        typeclass);
    if (t == MPI_DATATYPE_NULL)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_match_size",
                        "no type of class %d has size %d", typeclass, size);
    *datatype = t;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Type_match_size)

/* The smallest integer kind with at least r decimal digits of range. */
WM_API int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    if (!newtype)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer", "newtype is NULL");
    MPI_Datatype t = r < 0 ? MPI_DATATYPE_NULL : r <= 2 ? MPI_INTEGER1 : r <= 4 ? MPI_INTEGER2
                   : r <= 9 ? MPI_INTEGER4 : r <= 18 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    if (t == MPI_DATATYPE_NULL)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer",
                        "no integer kind has a range of %d digits", r);
    *newtype = t;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Type_create_f90_integer)

/* The byte size of the smallest IEEE real with precision p and exponent range r (MPI_UNDEFINED:
 * not given), or 0. */
static int wm_f90_real_size(int p, int r)
{
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return 0;
    if (p == MPI_UNDEFINED)
        p = 0;
    if (r == MPI_UNDEFINED)
        r = 0;
    if (p < 0 || r < 0)
        return 0;
    return p <= 6 && r <= 37 ? 4 : p <= 15 && r <= 307 ? 8 : p <= 33 && r <= 4931 ? 16 : 0;
}

WM_API int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    if (!newtype)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_real", "newtype is NULL");
    int n = wm_f90_real_size(p, r);
    if (!n)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_real",
                        "no real kind has precision %d and range %d", p, r);
    *newtype = n == 4 ? MPI_REAL4 : n == 8 ? MPI_REAL8 : MPI_REAL16;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Type_create_f90_real)

WM_API int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    if (!newtype)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_complex", "newtype is NULL");
    int n = wm_f90_real_size(p, r);
    if (!n)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_complex",
                        "no complex kind has precision %d and range %d", p, r);
    *newtype = n == 4 ? MPI_COMPLEX8 : n == 8 ? MPI_COMPLEX16 : MPI_COMPLEX32;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Type_create_f90_complex)
