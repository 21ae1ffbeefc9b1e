/* A process outside the job that connects to a rank's tcp transport (its address read from
 * WEFT_TCP_ADDR_FILE's file: "IP:PORT") and sends what the rank must drop: garbage, a hello with a
 * wrong job key followed by a frame shaped like a Weft packet from rank 0, and a hello naming a rank
 * outside the job. Each kind on its own connection, cycled COUNT times. Exits 0 when every
 * connection was made and written.
 *
 * usage: tcp_intruder ADDRFILE COUNT */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int dial(const struct sockaddr_in *sa)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
        perror("tcp_intruder: connect");
        exit(1);
    }
    return fd;
}

/* The rank may close the connection as soon as it has read the hello it rejects: a later write then
 * meets a reset, which is the expected outcome, not a failure of the intruder. */
static void put(int fd, const void *b, size_t n)
{
    ssize_t r = send(fd, b, n, MSG_NOSIGNAL);
    if (r < 0 && (errno == ECONNRESET || errno == EPIPE))
        return;
    if (r != (ssize_t)n) {
        perror("tcp_intruder: write");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: tcp_intruder ADDRFILE COUNT\n");
        return 2;
    }
    char line[128] = "";
    FILE *f = fopen(argv[1], "r");
    if (!f || !fgets(line, sizeof(line), f)) {
        fprintf(stderr, "tcp_intruder: cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    char *colon = strrchr(line, ':');
    if (!colon)
        return 1;
    *colon = '\0';
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1)) };
    if (inet_pton(AF_INET, line, &sa.sin_addr) != 1) {
        fprintf(stderr, "tcp_intruder: bad address %s\n", line);
        return 1;
    }
    int count = atoi(argv[2]);
    for (int i = 0; i < count; i++) {
        int fd = dial(&sa);
        unsigned char buf[256];
        switch (i % 3) {
        case 0:   /* garbage */
            for (size_t k = 0; k < sizeof(buf); k++)
                buf[k] = (unsigned char)(k * 37 + i);
            put(fd, buf, sizeof(buf));
            break;
        case 1: { /* a hello with a wrong key, then an EAGER-like frame "from rank 0" */
            uint32_t h[4] = { 0x57465443u, 0, 0x12345678u, 0x9abcdef0u };
            put(fd, h, sizeof(h));
            uint32_t pre[2] = { 40 + 32, 0 };
            memset(buf, 0, 40 + 32);
            put(fd, pre, sizeof(pre));
            put(fd, buf, 40 + 32);
            break;
        }
        default: { /* a hello naming a rank outside the job */
            uint32_t h[4] = { 0x57465443u, 1000000, 1, 1 };
            put(fd, h, sizeof(h));
            break;
        }
        }
        close(fd);
    }
    printf("tcp_intruder: %d connections to %s:%s\n", count, line, colon + 1);
    return 0;
}
