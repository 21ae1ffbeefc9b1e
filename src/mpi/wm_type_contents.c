/* MPI_Type_get_envelope / MPI_Type_get_contents: the constructor arguments a derived type keeps
 * (wm_type_contents_t). Derived types handed back are new objects (clones) the caller frees, as
 * the standard asks; predefined ones are the handles themselves. */
#include "mpi/wm_type_build.h"

#include <string.h>

static int wm_envelope(const char *fn, MPI_Datatype datatype, bool large, MPI_Count *ni,
                       MPI_Count *na, MPI_Count *nl, MPI_Count *nd, int *combiner)
{
    int rc = MPI_SUCCESS;
    const wm_datatype_t *ti = wm_type_arg(fn, datatype, &rc);
    if (!ti)
        return rc;
    if (!combiner)
        return wm_error(NULL, MPI_ERR_ARG, fn, "combiner is NULL");
    const wm_type_contents_t *c = ti->contents;
    if (c && c->nlarge && !large)
        return wm_error(NULL, MPI_ERR_TYPE, fn,
                        "the datatype was built with large counts: use MPI_Type_get_envelope_c");
    *ni = c ? c->nints : 0;
    *na = c ? c->naddrs : 0;
    *nl = c ? c->nlarge : 0;
    *nd = c ? c->ntypes : 0;
    *combiner = ti->combiner;
    return MPI_SUCCESS;
}

WM_API int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                                  int *num_datatypes, int *combiner)
{
    if (!num_integers || !num_addresses || !num_datatypes)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_get_envelope", "an output argument is NULL");
    MPI_Count ni, na, nl, nd;
    int rc = wm_envelope("MPI_Type_get_envelope", datatype, false, &ni, &na, &nl, &nd, combiner);
    if (rc)
        return rc;
    *num_integers = (int)ni;
    *num_addresses = (int)na;
    *num_datatypes = (int)nd;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Type_get_envelope)

WM_API int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                                    MPI_Count *num_addresses, MPI_Count *num_large_counts,
                                    MPI_Count *num_datatypes, int *combiner)
{
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_get_envelope_c",
                        "an output argument is NULL");
    return wm_envelope("MPI_Type_get_envelope_c", datatype, true, num_integers, num_addresses,
                       num_large_counts, num_datatypes, combiner);
}
WM_ALIAS(MPI_Type_get_envelope_c)

static int wm_contents(const char *fn, MPI_Datatype datatype, bool large, MPI_Count max_i,
                       MPI_Count max_a, MPI_Count max_l, MPI_Count max_d, int *ints,
                       MPI_Aint *addrs, MPI_Count *larges, MPI_Datatype *types)
{
    int rc = MPI_SUCCESS;
    const wm_datatype_t *ti = wm_type_arg(fn, datatype, &rc);
    if (!ti)
        return rc;
    const wm_type_contents_t *c = ti->contents;
    if (!c)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is a predefined datatype (MPI_COMBINER_NAMED)",
                        ti->name);
    if (c->nlarge && !large)
        return wm_error(NULL, MPI_ERR_TYPE, fn,
                        "the datatype was built with large counts: use MPI_Type_get_contents_c");
    if (max_i < c->nints || max_a < c->naddrs || max_l < c->nlarge || max_d < c->ntypes)
        return wm_error(NULL, MPI_ERR_ARG, fn,
                        "the arrays are too small (need %d integers, %d addresses, %d large "
                        "counts, %d datatypes)", c->nints, c->naddrs, c->nlarge, c->ntypes);
    if ((c->nints && !ints) || (c->naddrs && !addrs) || (c->nlarge && !larges) ||
        (c->ntypes && !types))
        return wm_error(NULL, MPI_ERR_ARG, fn, "an output array is NULL");
    for (int i = 0; i < c->ntypes; i++) {
        MPI_Datatype h = c->types[i];
        if ((uintptr_t)h - WM_TYPE_BASE < WM_TYPE_COUNT) {
            types[i] = h;
            continue;
        }
        /* the old type may have been freed by the user: find the object from the handle */
        const wm_datatype_t *old =
            (const wm_datatype_t *)((uintptr_t)h & ~(uintptr_t)WM_OBJ_GEN_MASK);
        wm_datatype_t *t = wm_type_clone(old);
        if (!t) {
            for (int k = 0; k < i; k++)
                if ((uintptr_t)types[k] - WM_TYPE_BASE >= WM_TYPE_COUNT)
                    PMPI_Type_free(&types[k]);
            return wm_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        types[i] = (MPI_Datatype)t->obj.handle;
    }
    if (c->nints)
        memcpy(ints, c->ints, (size_t)c->nints * sizeof(int));
    if (c->naddrs)
        memcpy(addrs, c->addrs, (size_t)c->naddrs * sizeof(MPI_Aint));
    if (c->nlarge)
        memcpy(larges, c->large, (size_t)c->nlarge * sizeof(MPI_Count));
    return MPI_SUCCESS;
}

WM_API int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                                  int max_datatypes, int array_of_integers[],
                                  MPI_Aint array_of_addresses[],
                                  MPI_Datatype array_of_datatypes[])
{
    return wm_contents("MPI_Type_get_contents", datatype, false, max_integers, max_addresses, 0,
                       max_datatypes, array_of_integers, array_of_addresses, NULL,
                       array_of_datatypes);
}
WM_ALIAS(MPI_Type_get_contents)

WM_API int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                                    MPI_Count max_addresses, MPI_Count max_large_counts,
                                    MPI_Count max_datatypes, int array_of_integers[],
                                    MPI_Aint array_of_addresses[],
                                    MPI_Count array_of_large_counts[],
                                    MPI_Datatype array_of_datatypes[])
{
    return wm_contents("MPI_Type_get_contents_c", datatype, true, max_integers, max_addresses,
                       max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                       array_of_large_counts, array_of_datatypes);
}
WM_ALIAS(MPI_Type_get_contents_c)
