/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Benchmark helper (not a test, not the agent): the floor of a plan. Asks the kernel for the state
 * node-reset's plan of the bench node reads, the same requests, and throws every answer away
 * unparsed: each legacy table of both families (IPT_SO_GET_INFO + IPT_SO_GET_ENTRIES), the
 * nf_tables generation, tables, chains and rules of ip and ip6, the ipsets, the conntrack table, the
 * links, routes, routing rules and qdiscs, the mount table, and /proc (each process's stat and its
 * root, netns and exe links). One thread, one reused buffer per kind. What it leaves out is what a
 * plan adds: parsing, classifying, deciding, the file checks, the report. Exit 0 when every request
 * was answered. */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/ipset/ip_set.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char buf[1 << 16];

/* One request, then its answer (a dump's every part, or an acknowledgement) read and dropped. */
static int ask(struct mnl_socket *nl, struct nlmsghdr *nlh) {
        unsigned seq = nlh->nlmsg_seq, port = mnl_socket_get_portid(nl);

        if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
                return -1;
        for (;;) {
                ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof buf);
                int r;

                if (n < 0)
                        return -1;
                r = mnl_cb_run(buf, n, seq, port, NULL, NULL);
                if (r <= MNL_CB_STOP)
                        return r < 0 ? -1 : 0;
        }
}

static struct nlmsghdr *request(char *b, unsigned type, unsigned flags, unsigned seq, const void *hdr, size_t len) {
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(b);

        nlh->nlmsg_type = type;
        nlh->nlmsg_flags = NLM_F_REQUEST | flags;
        nlh->nlmsg_seq = seq;
        memcpy(mnl_nlmsg_put_extra_header(nlh, len), hdr, len);
        return nlh;
}

static int nfnl(struct mnl_socket *nl, unsigned subsys, unsigned msg, int family, unsigned flags, unsigned seq) {
        char b[MNL_SOCKET_BUFFER_SIZE];
        struct nfgenmsg g = { .nfgen_family = family, .version = NFNETLINK_V0 };
        struct nlmsghdr *nlh = request(b, subsys << 8 | msg, flags, seq, &g, sizeof g);

        if (subsys == NFNL_SUBSYS_IPSET)
                mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL, IPSET_PROTOCOL);
        return ask(nl, nlh);
}

static int netfilter(void) {
        static const int families[] = { NFPROTO_IPV4, NFPROTO_IPV6 };
        static const unsigned dumps[] = { NFT_MSG_GETTABLE, NFT_MSG_GETCHAIN, NFT_MSG_GETRULE };
        struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
        unsigned seq = 1;
        int r = 0;

        if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
                return -1;
        for (size_t f = 0; f < 2 && r == 0; f++) {
                r = nfnl(nl, NFNL_SUBSYS_NFTABLES, NFT_MSG_GETGEN, AF_UNSPEC, NLM_F_ACK, seq++);
                for (size_t d = 0; d < 3 && r == 0; d++)
                        r = nfnl(nl, NFNL_SUBSYS_NFTABLES, dumps[d], families[f], NLM_F_DUMP, seq++);
                r = r ?: nfnl(nl, NFNL_SUBSYS_NFTABLES, NFT_MSG_GETGEN, AF_UNSPEC, NLM_F_ACK, seq++);
        }
        r = r ?: nfnl(nl, NFNL_SUBSYS_IPSET, IPSET_CMD_LIST, NFPROTO_IPV4, NLM_F_DUMP, seq++);
        r = r ?: nfnl(nl, NFNL_SUBSYS_CTNETLINK, IPCTNL_MSG_CT_GET, AF_UNSPEC, NLM_F_DUMP, seq++);
        mnl_socket_close(nl);
        return r;
}

static int rtnl(void) {
        struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
        char b[MNL_SOCKET_BUFFER_SIZE];
        struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
        struct rtmsg rt = { .rtm_family = AF_UNSPEC };
        struct rtmsg rule4 = { .rtm_family = AF_INET }, rule6 = { .rtm_family = AF_INET6 };
        struct tcmsg tc = { .tcm_family = AF_UNSPEC };
        int r;

        if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
                return -1;
        r = ask(nl, request(b, RTM_GETLINK, NLM_F_DUMP, 1, &ifi, sizeof ifi));
        r = r ?: ask(nl, request(b, RTM_GETROUTE, NLM_F_DUMP, 2, &rt, sizeof rt));
        r = r ?: ask(nl, request(b, RTM_GETRULE, NLM_F_DUMP, 3, &rule4, sizeof rule4));
        r = r ?: ask(nl, request(b, RTM_GETRULE, NLM_F_DUMP, 4, &rule6, sizeof rule6));
        r = r ?: ask(nl, request(b, RTM_GETQDISC, NLM_F_DUMP, 5, &tc, sizeof tc));
        mnl_socket_close(nl);
        return r;
}

/* Every table the kernel lists for the family, read whole. */
static int legacy(int family) {
        static void *entries;
        static size_t allocated;
        const char *names = family == AF_INET ? "/proc/net/ip_tables_names" : "/proc/net/ip6_tables_names";
        int level = family == AF_INET ? SOL_IP : SOL_IPV6;
        int fd = socket(family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
        char table[XT_TABLE_MAXNAMELEN];
        FILE *f = fopen(names, "re");
        int r = fd < 0 || !f ? -1 : 0;

        while (r == 0 && fscanf(f, "%31s", table) == 1) {
                /* struct ipt_getinfo and ip6t_getinfo have one layout, as have the get_entries. */
                struct ipt_getinfo info = {};
                socklen_t len = sizeof info;
                size_t need;

                memcpy(info.name, table, strlen(table) + 1);
                if (getsockopt(fd, level, IPT_SO_GET_INFO, &info, &len) < 0) {
                        r = -1;
                        break;
                }
                need = sizeof(struct ipt_get_entries) + info.size;
                if (need > allocated) {
                        free(entries);
                        entries = malloc(need);
                        allocated = entries ? need : 0;
                        if (!entries) {
                                r = -1;
                                break;
                        }
                }
                memset(entries, 0, sizeof(struct ipt_get_entries));
                memcpy(((struct ipt_get_entries *) entries)->name, info.name, sizeof info.name);
                ((struct ipt_get_entries *) entries)->size = info.size;
                len = need;
                r = getsockopt(fd, level, IPT_SO_GET_ENTRIES, entries, &len) < 0 ? -1 : 0;
        }
        if (f)
                fclose(f);
        if (fd >= 0)
                close(fd);
        return r;
}

static int slurp(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        while ((n = read(fd, buf, sizeof buf)) > 0)
                ;
        close(fd);
        return n < 0 ? -1 : 0;
}

/* The mount table and every process's stat and links; a process gone meanwhile is no error. */
static int files(void) {
        static const char *const links[] = { "root", "ns/net", "exe" };
        DIR *d = opendir("/proc");
        struct dirent *de;
        char path[300], target[4096];
        unsigned n = 0;

        if (!d || slurp("/proc/self/mountinfo") < 0)
                return -1;
        while ((de = readdir(d)))
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9') {
                        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
                        (void) slurp(path);
                        for (size_t i = 0; i < 3; i++) {
                                snprintf(path, sizeof path, "/proc/%s/%s", de->d_name, links[i]);
                                n += readlink(path, target, sizeof target) > 0;
                        }
                }
        closedir(d);
        return n > 0 ? 0 : -1; /* no link readable: not the root this floor needs */
}

int main(void) {
        if (legacy(AF_INET) < 0 || legacy(AF_INET6) < 0 || netfilter() < 0 || rtnl() < 0 || files() < 0) {
                fprintf(stderr, "plan-floor: %s\n", strerror(errno));
                return 1;
        }
        return 0;
}
