/* Forwarding of the ranks' stdio. Output is passed on whole lines at a time, one write(2) per
 * batch of lines, so that lines of different ranks never mix; with --tag-output every line gets
 * "[rank] " in front. A line longer than MX_LINE_MAX is passed on in pieces as it comes. A last
 * line without '\n' is passed on when its pipe closes (with a '\n' added under --tag-output). */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MX_READ_SIZE 65536
#define MX_LINE_MAX  65536

static bool mx_tag;
static mx_io_sink_fn_t *mx_sink;
static bool mx_out_broken[3];   /* our stdout/stderr went away (EPIPE): drop what comes */

void mx_io_set_sink(mx_io_sink_fn_t *sink)
{
    mx_sink = sink;
}

void mx_io_set_tag(bool tag)
{
    mx_tag = tag;
}

/* Writes all of buf to our fd 1 or 2, waiting if that descriptor is non-blocking. */
static void mx_io_write(int out, const char *buf, size_t len)
{
    while (len > 0 && !mx_out_broken[out]) {
        ssize_t n = write(out, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            struct pollfd p = { .fd = out, .events = POLLOUT };
            (void)poll(&p, 1, 100);
        } else {
            mx_out_broken[out] = true;   /* EPIPE or worse: nobody is listening */
        }
    }
}

static void mx_stream_grow(mx_stream_t *s, size_t need)
{
    if (need <= s->cap)
        return;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < need)
        cap *= 2;
    char *b = realloc(s->buf, cap);
    if (!b) {
        fprintf(stderr, "mpiexec: out of memory\n");
        exit(1);
    }
    s->buf = b;
    s->cap = cap;
}

void mx_stream_init(mx_stream_t *s, int fd, int out, int rank)
{
    memset(s, 0, sizeof(*s));
    s->fd = fd;
    s->out = out;
    s->rank = rank;
    s->at_line_start = true;
}

/* Passes on data[0..len): complete lines always, a trailing partial line only if `all` (ending it
 * under --tag-output if `last`). Returns the number of bytes consumed. */
static size_t mx_stream_emit(mx_stream_t *s, const char *data, size_t len, bool all, bool last)
{
    size_t end = len;
    if (!all) {
        const char *nl = memrchr(data, '\n', len);
        end = nl ? (size_t)(nl - data) + 1 : 0;
    }
    if (end == 0)
        return 0;
    if (mx_sink) {   /* a proxy: whole lines to the front end, which tags them */
        mx_sink(s->rank, s->out, data, end);
        s->at_line_start = data[end - 1] == '\n';
        return end;
    }
    if (!mx_tag) {
        mx_io_write(s->out, data, end);
        s->at_line_start = data[end - 1] == '\n';
        return end;
    }
    char tag[24];
    int tlen = snprintf(tag, sizeof(tag), "[%d] ", s->rank);
    size_t lines = 1;
    for (size_t i = 0; i < end; i++)
        lines += data[i] == '\n';
    char *out = malloc(end + lines * (size_t)tlen + 1);
    if (!out) {
        fprintf(stderr, "mpiexec: out of memory\n");
        exit(1);
    }
    size_t o = 0;
    for (size_t i = 0; i < end; i++) {
        if (s->at_line_start) {
            memcpy(out + o, tag, (size_t)tlen);
            o += (size_t)tlen;
        }
        out[o++] = data[i];
        s->at_line_start = data[i] == '\n';
    }
    if (last && !s->at_line_start) {
        out[o++] = '\n';
        s->at_line_start = true;
    }
    mx_io_write(s->out, out, o);
    free(out);
    return end;
}

static void mx_stream_emit_lines(mx_stream_t *s);

/* One read; returns false at EOF or error. */
static bool mx_stream_read_once(mx_stream_t *s)
{
    mx_stream_grow(s, s->len + MX_READ_SIZE);
    ssize_t n = read(s->fd, s->buf + s->len, MX_READ_SIZE);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n <= 0) {
        mx_stream_close(s);
        return false;
    }
    s->len += (size_t)n;
    mx_stream_emit_lines(s);
    return true;
}

/* Passes on the whole lines of s->buf, or a piece of an over-long one, and keeps the rest. */
static void mx_stream_emit_lines(mx_stream_t *s)
{
    size_t used = mx_stream_emit(s, s->buf, s->len, false, false);
    if (s->len - used >= MX_LINE_MAX)   /* no end of line in sight: pass the piece on */
        used += mx_stream_emit(s, s->buf + used, s->len - used, true, false);
    memmove(s->buf, s->buf + used, s->len - used);
    s->len -= used;
}

void mx_stream_feed(mx_stream_t *s, const char *data, size_t len)
{
    mx_stream_grow(s, s->len + len);
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    mx_stream_emit_lines(s);
}

void mx_stream_read(mx_stream_t *s)
{
    if (s->fd >= 0)
        (void)mx_stream_read_once(s);
}

void mx_stream_drain(mx_stream_t *s)
{
    while (s->fd >= 0) {
        struct pollfd p = { .fd = s->fd, .events = POLLIN };
        if (poll(&p, 1, 0) <= 0 || !mx_stream_read_once(s))
            break;
    }
}

void mx_stream_close(mx_stream_t *s)
{
    if (s->len > 0)
        (void)mx_stream_emit(s, s->buf, s->len, true, true);
    s->len = 0;
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

/* ---- stdin -> rank 0 ---------------------------------------------------------------------- */

bool mx_stdin_wants_input(const mx_stdin_t *in)
{
    return !in->remote && in->to_fd >= 0 && !in->eof && in->len < sizeof(in->buf);
}

void mx_stdin_read(mx_stdin_t *in)
{
    ssize_t n = read(STDIN_FILENO, in->buf + in->len, sizeof(in->buf) - in->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        in->eof = true;
        if (in->len == 0)
            mx_stdin_close(in);
        return;
    }
    in->len += (size_t)n;
}

void mx_stdin_write(mx_stdin_t *in)
{
    ssize_t n = write(in->to_fd, in->buf, in->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n < 0) {             /* rank 0 closed its stdin or is gone: drop the rest */
        in->eof = true;
        mx_stdin_close(in);
        return;
    }
    memmove(in->buf, in->buf + n, in->len - (size_t)n);
    in->len -= (size_t)n;
    if (in->len == 0 && in->eof)
        mx_stdin_close(in);
}

void mx_stdin_close(mx_stdin_t *in)
{
    if (in->to_fd >= 0)
        close(in->to_fd);
    in->to_fd = -1;
    in->len = 0;
}
