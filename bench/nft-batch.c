/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Benchmark helper (not a test, not the agent): the nf_tables floor. Reads deletions, one per line,
 *   delete table FAMILY TABLE
 *   flush chain FAMILY TABLE CHAIN
 *   delete chain FAMILY TABLE CHAIN
 *   delete rule FAMILY TABLE CHAIN HANDLE
 * (FAMILY ip, ip6 or inet), all from the file named by argv[1] before anything is sent, then sends
 * them as one transaction and reads its acknowledgements: the bare kernel operation the benches
 * compare node-reset's firewall phase with. Exit 0 when the kernel accepted the whole batch. */

#include <errno.h>
#include <inttypes.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static int family_of(const char *s) {
        return !strcmp(s, "ip")     ? NFPROTO_IPV4
               : !strcmp(s, "ip6")  ? NFPROTO_IPV6
               : !strcmp(s, "inet") ? NFPROTO_INET
                                    : -1;
}

/* One line's message into the batch; -1 for a line this helper does not know. */
static int add_line(struct mnl_nlmsg_batch *b, uint32_t seq, const char *line) {
        char verb[16], kind[16], fam[16], table[256], chain[256];
        uint64_t handle = 0;
        int n = sscanf(line, "%15s %15s %15s %255s %255s %" SCNu64, verb, kind, fam, table, chain, &handle);
        int family = n >= 4 ? family_of(fam) : -1;
        struct nlmsghdr *nlh;

        if (family < 0)
                return -1;
        if (!strcmp(kind, "table") && !strcmp(verb, "delete") && n == 4) {
                struct nftnl_table *t = nftnl_table_alloc();

                nftnl_table_set_str(t, NFTNL_TABLE_NAME, table);
                nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_DELTABLE, family, NLM_F_ACK, seq);
                nftnl_table_nlmsg_build_payload(nlh, t);
                nftnl_table_free(t);
        } else if (!strcmp(kind, "chain") && !strcmp(verb, "delete") && n == 5) {
                struct nftnl_chain *c = nftnl_chain_alloc();

                nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
                nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, chain);
                nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_DELCHAIN, family, NLM_F_ACK, seq);
                nftnl_chain_nlmsg_build_payload(nlh, c);
                nftnl_chain_free(c);
        } else if (!strcmp(kind, "chain") && !strcmp(verb, "flush") && n == 5) {
                /* A rule deletion naming a chain and no handle: every rule of that chain. */
                struct nftnl_rule *r = nftnl_rule_alloc();

                nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table);
                nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
                nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_DELRULE, family, NLM_F_ACK, seq);
                nftnl_rule_nlmsg_build_payload(nlh, r);
                nftnl_rule_free(r);
        } else if (!strcmp(kind, "rule") && !strcmp(verb, "delete") && n == 6) {
                struct nftnl_rule *r = nftnl_rule_alloc();

                nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table);
                nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
                nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, handle);
                nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_DELRULE, family, NLM_F_ACK, seq);
                nftnl_rule_nlmsg_build_payload(nlh, r);
                nftnl_rule_free(r);
        } else
                return -1;
        return mnl_nlmsg_batch_next(b) ? 0 : -2;
}

int main(int argc, char **argv) {
        char buf[MNL_SOCKET_BUFFER_SIZE * 4], line[1024];
        static char batch[16 << 20];
        struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(batch, sizeof batch);
        uint32_t seq = (uint32_t) time(NULL), first = seq;
        struct mnl_socket *nl;
        unsigned lineno = 0;
        int r;
        FILE *f;

        if (argc != 2 || !(f = fopen(argv[1], "re"))) {
                fprintf(stderr, "usage: nft-batch FILE (one deletion per line)\n");
                return 2;
        }
        nftnl_batch_begin(mnl_nlmsg_batch_current(b), seq++);
        (void) mnl_nlmsg_batch_next(b);
        while (fgets(line, sizeof line, f)) {
                lineno++;
                if (line[strspn(line, " \t\n")] == '\0')
                        continue;
                r = add_line(b, seq++, line);
                if (r < 0) {
                        fprintf(stderr, "%s:%u: %s: %s", argv[1], lineno,
                                r == -2 ? "the batch is full" : "not a deletion this helper knows", line);
                        return 2;
                }
        }
        fclose(f);
        nftnl_batch_end(mnl_nlmsg_batch_current(b), seq);
        (void) mnl_nlmsg_batch_next(b);

        nl = mnl_socket_open(NETLINK_NETFILTER);
        /* Acks without the request copied in, and room for thousands of them. */
        if (!nl || mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &(int) { 1 }, sizeof(int)) < 0 ||
            setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUFFORCE, &(int) { 64 << 20 }, sizeof(int)) < 0 ||
            mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
                perror("netlink");
                return 1;
        }
        if (mnl_socket_sendto(nl, mnl_nlmsg_batch_head(b), mnl_nlmsg_batch_size(b)) < 0) {
                perror("sendto");
                return 1;
        }
        /* Every message asked for an ack: read one per message, each must say 0. */
        for (uint32_t acks = 0; acks < seq - first - 1;) {
                ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof buf);
                int len = (int) n;

                if (n <= 0) {
                        perror("recvfrom");
                        return 1;
                }
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
                        const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);

                        if (h->nlmsg_type != NLMSG_ERROR)
                                continue;
                        if (e->error != 0) {
                                fprintf(stderr, "the kernel refused message %u of the batch: %s\n",
                                        h->nlmsg_seq - first, strerror(-e->error));
                                return 1;
                        }
                        acks++;
                }
        }
        mnl_socket_close(nl);
        mnl_nlmsg_batch_stop(b);
        return 0;
}
