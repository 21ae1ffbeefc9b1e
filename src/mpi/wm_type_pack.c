/* MPI_Pack / MPI_Unpack / MPI_Pack_size and the external32 forms. Weft's packed format is the
 * layout's packed stream (core/wc_dtype.h) with no header: MPI_Pack_size is count * size.
 * external32 is that stream in big-endian byte order, each basic element swapped (the segments'
 * `swap` unit; a complex is two reals), and with the sizes of MPI 4.1 section 14.5.2 where the
 * platform's differ: long and unsigned long 4 bytes (values that do not fit are truncated to
 * their low 32 bits, as a cast would), wchar_t 2 (the low 16 bits), long double 16 as IEEE
 * binary128 (converted from and to x87 extended precision; WM_EXT32_* in wm_datatype.h). */
#include "mpi/wm_internal.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* The datatype argument of a pack call: valid, committed, of a size and extent that fit. */
static const wm_datatype_t *wm_pack_type(const char *fn, wm_comm_t *c, MPI_Datatype t, int *rc_p)
{
    const wm_datatype_t *ti = wm_type_arg(fn, t, rc_p);
    if (ti && !ti->committed) {
        *rc_p = wm_error(c, MPI_ERR_TYPE, fn, "datatype %p is not committed", (void *)t);
        return NULL;
    }
    if (ti && (ti->size_overflow || ti->bounds_overflow)) {
        *rc_p = wm_error(c, MPI_ERR_TYPE, fn, "the %s of datatype %p does not fit in MPI_Count",
                         ti->size_overflow ? "size" : "extent", (void *)t);
        return NULL;
    }
    return ti;
}

static void wm_pack_bytes(const wm_datatype_t *ti, const void *inbuf, uint64_t count, char *out)
{
    if (ti->layout.contig) {
        memcpy(out, (const char *)inbuf + ti->layout.contig_off, count * ti->size);
        return;
    }
    wc_dtype_cursor_t cur;
    wc_dtype_cursor_init(&cur, &ti->layout, inbuf, count);
    wc_dtype_pack(&cur, out, count * ti->size);
}

static void wm_unpack_bytes(const wm_datatype_t *ti, void *outbuf, uint64_t count, const char *in)
{
    if (ti->layout.contig) {
        memcpy((char *)outbuf + ti->layout.contig_off, in, count * ti->size);
        return;
    }
    wc_dtype_cursor_t cur;
    wc_dtype_cursor_init(&cur, &ti->layout, outbuf, count);
    wc_dtype_unpack(&cur, in, count * ti->size);
}

static int wm_pack_impl(const char *fn, const void *inbuf, MPI_Count incount, MPI_Datatype type,
                        void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    WM_COMM_CHECK(fn, comm, c);
    if (incount < 0)
        return wm_error(c, MPI_ERR_COUNT, fn, "incount %lld is negative", (long long)incount);
    int rc = MPI_SUCCESS;
    const wm_datatype_t *ti = wm_pack_type(fn, c, type, &rc);
    if (!ti)
        return rc;
    uint64_t n = (uint64_t)incount * ti->size;
    if (*position < 0 || outsize < *position || (uint64_t)(outsize - *position) < n)
        return wm_error(c, MPI_ERR_TRUNCATE, fn,
                        "%llu bytes do not fit at position %lld of a %lld-byte buffer",
                        (unsigned long long)n, (long long)*position, (long long)outsize);
    if (n && ((!inbuf && ti->obj.predefined) || !outbuf))   /* NULL inbuf: MPI_BOTTOM */
        return wm_error(c, MPI_ERR_BUFFER, fn, "%s is NULL", outbuf ? "inbuf" : "outbuf");
    wm_pack_bytes(ti, inbuf, (uint64_t)incount, (char *)outbuf + *position);
    *position += (MPI_Count)n;
    return MPI_SUCCESS;
}

static int wm_unpack_impl(const char *fn, const void *inbuf, MPI_Count insize,
                          MPI_Count *position, void *outbuf, MPI_Count outcount,
                          MPI_Datatype type, MPI_Comm comm)
{
    WM_COMM_CHECK(fn, comm, c);
    if (outcount < 0)
        return wm_error(c, MPI_ERR_COUNT, fn, "outcount %lld is negative", (long long)outcount);
    int rc = MPI_SUCCESS;
    const wm_datatype_t *ti = wm_pack_type(fn, c, type, &rc);
    if (!ti)
        return rc;
    uint64_t n = (uint64_t)outcount * ti->size;
    if (*position < 0 || insize < *position || (uint64_t)(insize - *position) < n)
        return wm_error(c, MPI_ERR_TRUNCATE, fn,
                        "%llu bytes wanted at position %lld of a %lld-byte buffer",
                        (unsigned long long)n, (long long)*position, (long long)insize);
    if (n && (!inbuf || (!outbuf && ti->obj.predefined)))   /* NULL outbuf: MPI_BOTTOM */
        return wm_error(c, MPI_ERR_BUFFER, fn, "%s is NULL", inbuf ? "outbuf" : "inbuf");
    wm_unpack_bytes(ti, outbuf, (uint64_t)outcount, (const char *)inbuf + *position);
    *position += (MPI_Count)n;
    return MPI_SUCCESS;
}

/* Pack and Unpack, each helper serving the int form and its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h); position is updated on success only. */
static inline int wm_pack(const char *fn, const void *inbuf, MPI_Count incount,
                          MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                          wm_ints_out_t position, MPI_Comm comm)
{
    if (!position.p)
        return wm_error(NULL, MPI_ERR_ARG, fn, "position is NULL");
    MPI_Count pos = wm_ints_get(position, 0);
    int rc = wm_pack_impl(fn, inbuf, incount, datatype, outbuf, outsize, &pos, comm);
    if (!rc)
        wm_ints_set(position, 0, pos);   /* at most outsize: fits */
    return rc;
}

static inline int wm_unpack(const char *fn, const void *inbuf, MPI_Count insize,
                            wm_ints_out_t position, void *outbuf, MPI_Count outcount,
                            MPI_Datatype datatype, MPI_Comm comm)
{
    if (!position.p)
        return wm_error(NULL, MPI_ERR_ARG, fn, "position is NULL");
    MPI_Count pos = wm_ints_get(position, 0);
    int rc = wm_unpack_impl(fn, inbuf, insize, &pos, outbuf, outcount, datatype, comm);
    if (!rc)
        wm_ints_set(position, 0, pos);   /* at most insize: fits */
    return rc;
}

WM_TWINS_MPI_Pack(wm_pack)
WM_TWINS_MPI_Unpack(wm_unpack)

static int wm_pack_size_impl(const char *fn, MPI_Count incount, MPI_Datatype datatype,
                             MPI_Comm comm, MPI_Count *size_p)
{
    WM_COMM_CHECK(fn, comm, c);
    if (incount < 0)
        return wm_error(c, MPI_ERR_COUNT, fn, "incount %lld is negative", (long long)incount);
    int rc = MPI_SUCCESS;
    const wm_datatype_t *ti = wm_type_arg(fn, datatype, &rc);
    if (!ti)
        return rc;
    if (!size_p)
        return wm_error(c, MPI_ERR_ARG, fn, "size is NULL");
    *size_p = incount * (MPI_Count)ti->size;
    return MPI_SUCCESS;
}

/* Pack_size, serving the int form and its _c twin: a size an int cannot hold is an error. */
static inline int wm_pack_size(const char *fn, MPI_Count incount, MPI_Datatype datatype,
                               MPI_Comm comm, wm_ints_out_t size)
{
    MPI_Count n = 0;
    int rc = wm_pack_size_impl(fn, incount, datatype, comm, size.p ? &n : NULL);
    if (rc)
        return rc;
    if (!wm_ints_fits(size, n))
        return wm_error(NULL, MPI_ERR_VALUE_TOO_LARGE, fn, "%lld bytes do not fit an int",
                        (long long)n);
    wm_ints_set(size, 0, n);
    return MPI_SUCCESS;
}

WM_TWINS_MPI_Pack_size(wm_pack_size)

/* ---- external32 ------------------------------------------------------------------------------- */

static int wm_datarep_check(const char *fn, const char *datarep)
{
    if (!datarep || strcmp(datarep, "external32") != 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "data representation \"%s\" is not \"external32\"",
                        datarep ? datarep : "(null)");
    return MPI_SUCCESS;
}

static void wm_put_be(char *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (char)(v >> (8 * (n - 1 - i)));
}

static uint64_t wm_get_be(const char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | (uint8_t)p[i];
    return v;
}

/* x87 extended precision (64-bit significand with its integer bit, in the low 10 bytes of a
 * 16-byte long double, little-endian) to and from IEEE binary128 big-endian: the sign and the
 * 15-bit biased exponent are the same; binary128 drops the explicit integer bit and has 112
 * fraction bits, of which the x87's 63 are the top ones. */
static void wm_x87_to_quad(const char *in, char *out)
{
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, in, 8);
    memcpy(&se, in + 8, 2);
    uint64_t frac = mant & 0x7fffffffffffffffull;
    wm_put_be(out, (uint64_t)se << 48 | frac >> 15, 8);
    wm_put_be(out + 8, frac << 49, 8);
}

static void wm_quad_to_x87(const char *in, char *out)
{
    uint64_t hi = wm_get_be(in, 8), lo = wm_get_be(in + 8, 8);
    uint16_t se = (uint16_t)(hi >> 48);
    uint64_t frac = (hi & 0xffffffffffffull) << 15 | lo >> 49;
    uint64_t mant = frac | ((se & 0x7fff) ? 0x8000000000000000ull : 0);
    memset(out, 0, sizeof(long double));
    memcpy(out, &mant, 8);
    memcpy(out + 8, &se, 2);
}

/* Bytes of ext32 data for `bytes` native bytes of a segment with that swap. */
static uint64_t wm_ext32_seg_bytes(uint32_t swap, uint64_t bytes)
{
    switch (WM_EXT32_CONV(swap)) {
    case WM_EXT32_LONG:
    case WM_EXT32_ULONG: return bytes / sizeof(long) * 4;
    case WM_EXT32_WCHAR: return bytes / sizeof(wchar_t) * 2;
    default: return bytes;   /* long double: 16 either way */
    }
}

/* external32 bytes of one element of ti. */
static uint64_t wm_ext32_size(const wm_datatype_t *ti)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < ti->layout.nsegs; i++) {
        const wc_dtype_seg_t *s = &ti->layout.segs[i];
        n += wm_ext32_seg_bytes(s->swap, s->count * s->blocklen);
    }
    return n;
}

static bool wm_ext32_converts(const wm_datatype_t *ti)
{
    for (uint64_t i = 0; i < ti->layout.nsegs; i++)
        if (WM_EXT32_CONV(ti->layout.segs[i].swap) != WM_EXT32_SAME)
            return true;
    return false;
}

/* Byte-swap n bytes at p in units of w (in place; to or from big-endian). */
static void wm_swap_units(char *p, uint64_t n, uint32_t w)
{
    if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ || w < 2)
        return;
    if (w == 2) {
        for (uint64_t k = 0; k < n; k += 2) {
            uint16_t v;
            memcpy(&v, p + k, 2);
            v = __builtin_bswap16(v);
            memcpy(p + k, &v, 2);
        }
    } else if (w == 4) {
        for (uint64_t k = 0; k < n; k += 4) {
            uint32_t v;
            memcpy(&v, p + k, 4);
            v = __builtin_bswap32(v);
            memcpy(p + k, &v, 4);
        }
    } else if (w == 8) {
        for (uint64_t k = 0; k < n; k += 8) {
            uint64_t v;
            memcpy(&v, p + k, 8);
            v = __builtin_bswap64(v);
            memcpy(p + k, &v, 8);
        }
    } else {
        for (uint64_t k = 0; k < n; k += w)
            for (uint32_t a = 0, b = w - 1; a < b; a++, b--) {
                char t = p[k + a];
                p[k + a] = p[k + b];
                p[k + b] = t;
            }
    }
}

/* Byte-swap count elements of ti's packed stream at p to or from big-endian, in place (for types
 * whose external32 sizes are the native ones). */
static void wm_ext32_swap(const wm_datatype_t *ti, char *p, uint64_t count)
{
    if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
        return;
    for (uint64_t e = 0; e < count; e++) {
        for (uint64_t i = 0; i < ti->layout.nsegs; i++) {
            const wc_dtype_seg_t *s = &ti->layout.segs[i];
            uint64_t n = s->count * s->blocklen;
            wm_swap_units(p, n, WM_EXT32_SWAP(s->swap));
            p += n;
        }
    }
}

/* count elements of ti: native packed stream `nat` to external32 `ext` (to_ext) or back. */
static void wm_ext32_convert(const wm_datatype_t *ti, char *nat, char *ext, uint64_t count,
                             bool to_ext)
{
    for (uint64_t e = 0; e < count; e++) {
        for (uint64_t i = 0; i < ti->layout.nsegs; i++) {
            const wc_dtype_seg_t *s = &ti->layout.segs[i];
            uint64_t n = s->count * s->blocklen, m = wm_ext32_seg_bytes(s->swap, n);
            int conv = (int)WM_EXT32_CONV(s->swap);
            if (conv == WM_EXT32_SAME) {
                if (to_ext) {
                    memcpy(ext, nat, n);
                    wm_swap_units(ext, n, WM_EXT32_SWAP(s->swap));
                } else {
                    memcpy(nat, ext, n);
                    wm_swap_units(nat, n, WM_EXT32_SWAP(s->swap));
                }
            } else if (conv == WM_EXT32_LONG || conv == WM_EXT32_ULONG) {
                for (uint64_t k = 0; k < n / sizeof(long); k++) {
                    char *np = nat + k * sizeof(long), *ep = ext + k * 4;
                    if (to_ext) {
                        unsigned long v;
                        memcpy(&v, np, sizeof v);
                        wm_put_be(ep, (uint32_t)v, 4);
                    } else if (conv == WM_EXT32_LONG) {
                        long v = (int32_t)(uint32_t)wm_get_be(ep, 4);
                        memcpy(np, &v, sizeof v);
                    } else {
                        unsigned long v = (uint32_t)wm_get_be(ep, 4);
                        memcpy(np, &v, sizeof v);
                    }
                }
            } else if (conv == WM_EXT32_WCHAR) {
                for (uint64_t k = 0; k < n / sizeof(wchar_t); k++) {
                    char *np = nat + k * sizeof(wchar_t), *ep = ext + k * 2;
                    wchar_t v;
                    if (to_ext) {
                        memcpy(&v, np, sizeof v);
                        wm_put_be(ep, (uint16_t)v, 2);
                    } else {
                        v = (wchar_t)(uint16_t)wm_get_be(ep, 2);
                        memcpy(np, &v, sizeof v);
                    }
                }
            } else {   /* WM_EXT32_LDOUBLE: x87 extended in 16 bytes */
                for (uint64_t k = 0; k < n; k += 16) {
                    if (to_ext)
                        wm_x87_to_quad(nat + k, ext + k);
                    else
                        wm_quad_to_x87(ext + k, nat + k);
                }
            }
            nat += n;
            ext += m;
        }
    }
}

static int wm_pack_ext_impl(const char *fn, const char *datarep, const void *inbuf,
                            MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                            MPI_Count outsize, MPI_Count *position)
{
    int rc = wm_datarep_check(fn, datarep);
    if (rc)
        return rc;
    if (!position)
        return wm_error(NULL, MPI_ERR_ARG, fn, "position is NULL");
    if (incount < 0)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "incount %lld is negative", (long long)incount);
    const wm_datatype_t *ti = wm_pack_type(fn, NULL, datatype, &rc);
    if (!ti)
        return rc;
    uint64_t n = (uint64_t)incount * wm_ext32_size(ti);
    if (*position < 0 || outsize < *position || (uint64_t)(outsize - *position) < n)
        return wm_error(NULL, MPI_ERR_TRUNCATE, fn,
                        "%llu bytes do not fit at position %lld of a %lld-byte buffer",
                        (unsigned long long)n, (long long)*position, (long long)outsize);
    if (n && ((!inbuf && ti->obj.predefined) || !outbuf))
        return wm_error(NULL, MPI_ERR_BUFFER, fn, "%s is NULL", outbuf ? "inbuf" : "outbuf");
    char *out = (char *)outbuf + *position;
    if (!wm_ext32_converts(ti)) {
        wm_pack_bytes(ti, inbuf, (uint64_t)incount, out);
        wm_ext32_swap(ti, out, (uint64_t)incount);
    } else {
        uint64_t nn = (uint64_t)incount * ti->size;
        char *tmp = malloc(nn ? nn : 1);
        if (!tmp)
            return wm_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory (%llu bytes)",
                            (unsigned long long)nn);
        wm_pack_bytes(ti, inbuf, (uint64_t)incount, tmp);
        wm_ext32_convert(ti, tmp, out, (uint64_t)incount, true);
        free(tmp);
    }
    *position += (MPI_Count)n;
    return MPI_SUCCESS;
}

static int wm_unpack_ext_impl(const char *fn, const char *datarep, const void *inbuf,
                              MPI_Count insize, MPI_Count *position, void *outbuf,
                              MPI_Count outcount, MPI_Datatype datatype)
{
    int rc = wm_datarep_check(fn, datarep);
    if (rc)
        return rc;
    if (!position)
        return wm_error(NULL, MPI_ERR_ARG, fn, "position is NULL");
    if (outcount < 0)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "outcount %lld is negative", (long long)outcount);
    const wm_datatype_t *ti = wm_pack_type(fn, NULL, datatype, &rc);
    if (!ti)
        return rc;
    uint64_t n = (uint64_t)outcount * wm_ext32_size(ti), nn = (uint64_t)outcount * ti->size;
    if (*position < 0 || insize < *position || (uint64_t)(insize - *position) < n)
        return wm_error(NULL, MPI_ERR_TRUNCATE, fn,
                        "%llu bytes wanted at position %lld of a %lld-byte buffer",
                        (unsigned long long)n, (long long)*position, (long long)insize);
    if (n && (!inbuf || (!outbuf && ti->obj.predefined)))
        return wm_error(NULL, MPI_ERR_BUFFER, fn, "%s is NULL", inbuf ? "outbuf" : "inbuf");
    char *tmp = malloc(nn ? nn : 1);
    if (!tmp)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory (%llu bytes)",
                        (unsigned long long)nn);
    if (!wm_ext32_converts(ti)) {
        memcpy(tmp, (const char *)inbuf + *position, n);
        wm_ext32_swap(ti, tmp, (uint64_t)outcount);
    } else {
        wm_ext32_convert(ti, tmp, (char *)inbuf + *position, (uint64_t)outcount, false);
    }
    wm_unpack_bytes(ti, outbuf, (uint64_t)outcount, tmp);
    free(tmp);
    *position += (MPI_Count)n;
    return MPI_SUCCESS;
}

/* Pack_external and Unpack_external, each helper serving the int form and its _c twin; position
 * (MPI_Aint or MPI_Count) is updated on success only. */
static inline int wm_pack_external(const char *fn, const char *datarep, const void *inbuf,
                                   MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                                   MPI_Count outsize, wm_ints_out_t position)
{
    MPI_Count pos = position.p ? wm_ints_get(position, 0) : 0;
    int rc = wm_pack_ext_impl(fn, datarep, inbuf, incount, datatype, outbuf, outsize,
                              position.p ? &pos : NULL);
    if (!rc)
        wm_ints_set(position, 0, pos);
    return rc;
}

static inline int wm_unpack_external(const char *fn, const char datarep[], const void *inbuf,
                                     MPI_Count insize, wm_ints_out_t position, void *outbuf,
                                     MPI_Count outcount, MPI_Datatype datatype)
{
    MPI_Count pos = position.p ? wm_ints_get(position, 0) : 0;
    int rc = wm_unpack_ext_impl(fn, datarep, inbuf, insize, position.p ? &pos : NULL, outbuf,
                                outcount, datatype);
    if (!rc)
        wm_ints_set(position, 0, pos);
    return rc;
}

WM_TWINS_MPI_Pack_external(wm_pack_external)
WM_TWINS_MPI_Unpack_external(wm_unpack_external)

static int wm_pack_ext_size_impl(const char *fn, const char *datarep, MPI_Count incount,
                                 MPI_Datatype datatype, MPI_Count *size_p)
{
    int rc = wm_datarep_check(fn, datarep);
    if (rc)
        return rc;
    if (incount < 0)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "incount %lld is negative", (long long)incount);
    const wm_datatype_t *ti = wm_type_arg(fn, datatype, &rc);
    if (!ti)
        return rc;
    if (!size_p)
        return wm_error(NULL, MPI_ERR_ARG, fn, "size is NULL");
    *size_p = incount * (MPI_Count)wm_ext32_size(ti);
    return MPI_SUCCESS;
}

static inline int wm_pack_external_size(const char *fn, const char *datarep, MPI_Count incount,
                                        MPI_Datatype datatype, wm_ints_out_t size)
{
    MPI_Count n = 0;
    int rc = wm_pack_ext_size_impl(fn, datarep, incount, datatype, size.p ? &n : NULL);
    if (!rc)
        wm_ints_set(size, 0, n);   /* MPI_Aint or MPI_Count: holds any size of this process */
    return rc;
}

WM_TWINS_MPI_Pack_external_size(wm_pack_external_size)
