/* A process outside the job: opens its own FI_EP_RDM endpoint on the provider a rank uses, and
 * sends that rank packets it must drop (tests/ofi/ofi_foreign.sh): garbage, a packet too short for
 * the prefix, and packets shaped like Weft's with a wrong job key (an EAGER header that would match
 * a posted receive if it were delivered).
 *
 * usage: ofi_intruder ADDRFILE COUNT    (ADDRFILE: "<provider> <hex name>", WEFT_OFI_ADDR_FILE)
 * Exit 0 when all COUNT packets were sent. */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIE(...) do { fprintf(stderr, "ofi_intruder: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define TRY(call) do { int r_ = (call); if (r_) DIE("%s: %s", #call, fi_strerror(-r_)); } while (0)

int main(int argc, char **argv)
{
    if (argc != 3)
        DIE("usage: ofi_intruder ADDRFILE COUNT");
    char prov[64], hex[600];
    FILE *f = fopen(argv[1], "r");
    if (!f || fscanf(f, "%63s %599s", prov, hex) != 2)
        DIE("cannot read %s", argv[1]);
    fclose(f);
    int count = atoi(argv[2]);
    uint8_t name[300];
    size_t nlen = strlen(hex) / 2;
    for (size_t i = 0; i < nlen; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        name[i] = (uint8_t)v;
    }

    struct fi_info *hints = fi_allocinfo(), *fi;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->fabric_attr->prov_name = strdup(prov);
    TRY(fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, hints, &fi));
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    TRY(fi_fabric(fi->fabric_attr, &fabric, NULL));
    TRY(fi_domain(fabric, fi, &domain, NULL));
    struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_CONTEXT };
    TRY(fi_cq_open(domain, &cqa, &cq, NULL));
    struct fi_av_attr ava = { .type = FI_AV_TABLE, .count = 1 };
    TRY(fi_av_open(domain, &ava, &av, NULL));
    TRY(fi_endpoint(domain, fi, &ep, NULL));
    TRY(fi_ep_bind(ep, &av->fid, 0));
    TRY(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    TRY(fi_enable(ep));
    fi_addr_t dst;
    if (fi_av_insert(av, name, 1, &dst, 0, NULL) != 1)
        DIE("fi_av_insert of %s failed", hex);

    /* Weft's packet: key(8) src(4) flags(2) seq(2), then the 40-byte header (type 1 = EAGER) */
    static char pkt[4096];
    int sent = 0;
    for (int i = 0; i < count; i++) {
        size_t len;
        memset(pkt, 0, sizeof(pkt));
        switch (i % 3) {
        case 0:   /* garbage */
            for (size_t j = 0; j < 200; j++)
                pkt[j] = (char)(j * 7 + i);
            len = 200;
            break;
        case 1:   /* shorter than the prefix */
            len = 3;
            break;
        default: { /* Weft-shaped, wrong key, claiming rank 0, an EAGER of 8 bytes */
            uint64_t key = 0x1234567890abcdefull + (uint64_t)i;
            memcpy(pkt, &key, 8);
            pkt[16] = 1;
            len = 16 + 40 + 8;
            break;
        }
        }
        ssize_t r;
        while ((r = fi_send(ep, pkt, len, NULL, dst, NULL)) == -FI_EAGAIN) {
            struct fi_cq_entry e;
            if (fi_cq_read(cq, &e, 1) == 1)
                DIE("a completion before any send was posted");
        }
        if (r)
            DIE("fi_send: %s", fi_strerror((int)-r));
        for (;;) {   /* one at a time: the buffer is reused */
            struct fi_cq_entry e;
            ssize_t n = fi_cq_read(cq, &e, 1);
            if (n == 1)
                break;
            if (n != -FI_EAGAIN)
                DIE("fi_cq_read: %s", fi_strerror((int)-n));
        }
        sent++;
    }
    sleep(1);   /* let the rank read it all before the connection closes */
    fi_close(&ep->fid);
    fi_close(&av->fid);
    fi_close(&cq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(fi);
    fi_freeinfo(hints);
    printf("ofi_intruder: sent %d packets to %s\n", sent, argv[1]);
    return 0;
}
