/* MPI_Type_get_envelope / MPI_Type_get_contents: the constructor arguments a derived type keeps
 * (wm_type_contents_t). Derived types handed back are new objects (clones) the caller frees, as
 * the standard asks; predefined ones (named, or of MPI_Type_create_f90_*) are the handles
 * themselves. */
#include "mpi/wm_type_build.h"

#include <string.h>

/* The datatypes of the envelope: an F90 type's contents keep the sized type it behaves as, which
 * the standard's envelope does not have (wm_type_is_f90). */
static int wm_envelope_ntypes(const wm_datatype_t *ti)
{
    return !ti->contents || wm_type_is_f90(ti) ? 0 : ti->contents->ntypes;
}

/* The object of a handle kept in contents: found even once the user has freed the handle (the
 * contents retain it). */
static const wm_datatype_t *wm_contents_type(MPI_Datatype h)
{
    if ((uintptr_t)h - WM_TYPE_BASE < WM_TYPE_COUNT)
        return wm_type_get(h);
    return (const wm_datatype_t *)((uintptr_t)h & ~(uintptr_t)WM_OBJ_GEN_MASK);
}

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
    *nd = wm_envelope_ntypes(ti);
    *combiner = ti->combiner;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
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

int wm_impl_MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                                    MPI_Count *num_addresses, MPI_Count *num_large_counts,
                                    MPI_Count *num_datatypes, int *combiner)
{
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_get_envelope_c",
                        "an output argument is NULL");
    return wm_envelope("MPI_Type_get_envelope_c", datatype, true, num_integers, num_addresses,
                       num_large_counts, num_datatypes, combiner);
}

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
    int ntypes = wm_envelope_ntypes(ti);
    if (max_i < c->nints || max_a < c->naddrs || max_l < c->nlarge || max_d < ntypes)
        return wm_error(NULL, MPI_ERR_ARG, fn,
                        "the arrays are too small (need %d integers, %d addresses, %d large "
                        "counts, %d datatypes)", c->nints, c->naddrs, c->nlarge, ntypes);
    if ((c->nints && !ints) || (c->naddrs && !addrs) || (c->nlarge && !larges) ||
        (ntypes && !types))
        return wm_error(NULL, MPI_ERR_ARG, fn, "an output array is NULL");
    for (int i = 0; i < ntypes; i++) {
        MPI_Datatype h = c->types[i];
        const wm_datatype_t *old = wm_contents_type(h);
        if ((uintptr_t)h - WM_TYPE_BASE < WM_TYPE_COUNT || wm_type_is_f90(old)) {
            types[i] = h;   /* predefined */
            continue;
        }
        wm_datatype_t *t = wm_type_clone(old);
        if (!t) {
            for (int k = 0; k < i; k++)
                if (types[k] != c->types[k])   /* a clone */
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

int wm_impl_MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                                  int max_datatypes, int array_of_integers[],
                                  MPI_Aint array_of_addresses[],
                                  MPI_Datatype array_of_datatypes[])
{
    return wm_contents("MPI_Type_get_contents", datatype, false, max_integers, max_addresses, 0,
                       max_datatypes, array_of_integers, array_of_addresses, NULL,
                       array_of_datatypes);
}

int wm_impl_MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
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
