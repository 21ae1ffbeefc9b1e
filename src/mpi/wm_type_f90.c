/* Fortran-kind helpers: MPI_Type_match_size and MPI_Type_create_f90_{integer,real,complex}.
 *
 * MPI_Type_match_size returns the named sized types (MPI_INTEGERn, MPI_REALn, MPI_COMPLEXn,
 * MPI_LOGICALn), as the standard says.
 *
 * MPI_Type_create_f90_* return the standard's unnamed predefined types (MPI 4.1 19.1.9): each
 * behaves as the sized type of its kind (size, extent, layout, reductions with the predefined
 * operations) but its envelope is MPI_COMBINER_F90_REAL / _COMPLEX / _INTEGER with the (p, r) or
 * (r) the caller passed, MPI_UNDEFINED included, and MPI_Type_free refuses it. There is one object
 * per (combiner, p, r), made on first use and cached, so repeated calls return the same handle (the
 * standard's advice to implementors; MPICH does the same). wm_datatype.h (wm_type_is_f90) says how
 * the object is laid out. It is a user object of the arena whose user reference is never dropped,
 * so the collector never frees it; MPI_Finalize frees it with every remaining object
 * (wm_obj_finalize), after which the cache's handles are stale (MPI cannot be initialized again).
 * MPI_Type_get_name gives an empty string, as for any type nobody named (MPICH too); Weft's own
 * messages describe the type by its call (wm_type_f90_describe).
 *
 * Concurrency contract: any thread may call these functions at any time. One mutex guards the
 * cache: a caller either finds the (combiner, p, r) entry or makes the object and adds the entry
 * before releasing the mutex, so concurrent calls with the same arguments return the same handle,
 * and the mutex publishes the object's fields to every thread that finds the entry later. The
 * object itself is never written after that (MPI_Type_commit leaves it alone; MPI_Type_set_name
 * and attributes are the application's to serialize, as for named types). Creating is rare and
 * a lookup is a scan of the few (combiner, p, r) a program uses, so a mutex is enough.
 */
#include "mpi/wm_type_build.h"
#include "thread/wt_thread.h"

#include <stdio.h>
#include <stdlib.h>

int wm_impl_MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
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

/* ---- the cache of F90 types ------------------------------------------------------------------- */

typedef struct wm_f90_entry {
    int          combiner, p, r;   /* p is MPI_UNDEFINED for MPI_COMBINER_F90_INTEGER */
    MPI_Datatype type;
} wm_f90_entry_t;

typedef struct wm_f90_cache {
    wt_mutex_t      lock;
    wm_f90_entry_t *v WT_GUARDED_BY(lock);
    size_t          n WT_GUARDED_BY(lock);
    size_t          cap WT_GUARDED_BY(lock);
} wm_f90_cache_t;

static wm_f90_cache_t wm_f90 = { .lock = WT_MUTEX_INITIALIZER };

/* The object of a new F90 type behaving as the named type base; NULL: out of memory. */
static wm_datatype_t *wm_f90_make(const wm_datatype_t *base, int combiner, int p, int r)
{
    bool integer = combiner == MPI_COMBINER_F90_INTEGER;
    wm_type_contents_t *ct = wm_contents_new(integer ? 1 : 2, 0, 0, 1);
    wm_datatype_t *t = ct ? wm_type_clone(base) : NULL;   /* a named type has no contents */
    if (!t) {
        wm_contents_free(ct);
        return NULL;
    }
    if (integer) {
        ct->ints[0] = r;
    } else {
        ct->ints[0] = p;
        ct->ints[1] = r;
    }
    ct->types[0] = (MPI_Datatype)base->obj.handle;
    wm_contents_retain(ct);   /* base is predefined: nothing is counted */
    t->contents = ct;
    t->combiner = combiner;
    t->name[0] = '\0';
    return t;
}

/* The F90 type (combiner, p, r) behaving as the named type base: the cached one, or a new one. */
static int wm_f90_get(const char *fn, MPI_Datatype base, int combiner, int p, int r,
                      MPI_Datatype *newtype)
{
    int rc = MPI_SUCCESS;
    const wm_datatype_t *bt = wm_type_arg(fn, base, &rc);   /* sets up the named types if needed */
    if (!bt)
        return rc;
    MPI_Datatype h = MPI_DATATYPE_NULL;
    wt_mutex_lock(&wm_f90.lock);
    for (size_t i = 0; i < wm_f90.n; i++) {
        const wm_f90_entry_t *e = &wm_f90.v[i];
        if (e->combiner == combiner && e->p == p && e->r == r) {
            h = e->type;
            break;
        }
    }
    if (h == MPI_DATATYPE_NULL) {
        if (wm_f90.n == wm_f90.cap) {
            size_t cap = wm_f90.cap ? 2 * wm_f90.cap : 8;
            wm_f90_entry_t *v = realloc(wm_f90.v, cap * sizeof(*v));
            if (v) {
                wm_f90.v = v;
                wm_f90.cap = cap;
            }
        }
        wm_datatype_t *t = wm_f90.n < wm_f90.cap ? wm_f90_make(bt, combiner, p, r) : NULL;
        if (t) {
            h = (MPI_Datatype)t->obj.handle;
            wm_f90.v[wm_f90.n++] = (wm_f90_entry_t){ combiner, p, r, h };
        }
    }
    wt_mutex_unlock(&wm_f90.lock);
    /* raised outside the lock: the error handler may call back into MPI */
    if (h == MPI_DATATYPE_NULL)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory for a new datatype");
    *newtype = h;
    return MPI_SUCCESS;
}

void wm_type_f90_describe(const wm_datatype_t *t, char *buf, size_t n)
{
    const int *v = t->contents->ints;
    char p[16], r[16];
    if (t->combiner == MPI_COMBINER_F90_INTEGER) {
        snprintf(buf, n, "MPI_Type_create_f90_integer(%d)", v[0]);
        return;
    }
    if (v[0] == MPI_UNDEFINED)
        snprintf(p, sizeof p, "MPI_UNDEFINED");
    else
        snprintf(p, sizeof p, "%d", v[0]);
    if (v[1] == MPI_UNDEFINED)
        snprintf(r, sizeof r, "MPI_UNDEFINED");
    else
        snprintf(r, sizeof r, "%d", v[1]);
    snprintf(buf, n, "MPI_Type_create_f90_%s(%s, %s)",
             t->combiner == MPI_COMBINER_F90_REAL ? "real" : "complex", p, r);
}

/* ---- the entry points -------------------------------------------------------------------------- */

/* The smallest integer kind with at least r decimal digits of range. */
int wm_impl_MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    if (!newtype)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer", "newtype is NULL");
    MPI_Datatype t = r < 0 ? MPI_DATATYPE_NULL : r <= 2 ? MPI_INTEGER1 : r <= 4 ? MPI_INTEGER2
                   : r <= 9 ? MPI_INTEGER4 : r <= 18 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    if (t == MPI_DATATYPE_NULL)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer",
                        "no integer kind has a range of %d digits", r);
    return wm_f90_get("MPI_Type_create_f90_integer", t, MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED,
                      r, newtype);
}

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

int wm_impl_MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    if (!newtype)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_real", "newtype is NULL");
    int n = wm_f90_real_size(p, r);
    if (!n)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_real",
                        "no real kind has precision %d and range %d", p, r);
    return wm_f90_get("MPI_Type_create_f90_real",
                      n == 4 ? MPI_REAL4 : n == 8 ? MPI_REAL8 : MPI_REAL16,
                      MPI_COMBINER_F90_REAL, p, r, newtype);
}

int wm_impl_MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    if (!newtype)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_complex", "newtype is NULL");
    int n = wm_f90_real_size(p, r);
    if (!n)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_complex",
                        "no complex kind has precision %d and range %d", p, r);
    return wm_f90_get("MPI_Type_create_f90_complex",
                      n == 4 ? MPI_COMPLEX8 : n == 8 ? MPI_COMPLEX16 : MPI_COMPLEX32,
                      MPI_COMBINER_F90_COMPLEX, p, r, newtype);
}
