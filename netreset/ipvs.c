/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPVS through generic netlink (libnl-genl-3): count and clear the virtual services. */

#include <linux/ip_vs.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sys/stat.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/ipvs.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_sock *, nl_socket_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_msg *, nlmsg_free);

bool ipvs_present(void) {
        return access("/proc/net/ip_vs", F_OK) >= 0 || access("/sys/module/ip_vs", F_OK) >= 0;
}

/* libnl's NLE_* codes as errno values. */
static int nl_to_errno(int nle) {
        static const int map[] = {
                [NLE_INTR] = EINTR,       [NLE_BAD_SOCK] = EBADF,     [NLE_AGAIN] = EAGAIN,
                [NLE_NOMEM] = ENOMEM,     [NLE_EXIST] = EEXIST,       [NLE_INVAL] = EINVAL,
                [NLE_RANGE] = ERANGE,     [NLE_MSGSIZE] = EMSGSIZE,   [NLE_OPNOTSUPP] = EOPNOTSUPP,
                [NLE_AF_NOSUPPORT] = EAFNOSUPPORT, [NLE_OBJ_NOTFOUND] = ENOENT, [NLE_BUSY] = EBUSY,
                [NLE_NOACCESS] = EACCES,  [NLE_PERM] = EPERM,         [NLE_NODEV] = ENODEV,
        };
        int k = nle < 0 ? -nle : nle;

        return -(k < (int) ELEMENTSOF(map) && map[k] ? map[k] : EIO);
}

static int nl_failed(int nle, const char *what, char **reterr_msg) {
        int r = nl_to_errno(nle);

        return set_errmsg(reterr_msg, r, "%s: %s", what, nl_geterror(nle));
}

static int ipvs_connect(struct nl_sock **ret_sk, int *ret_family, char **reterr_msg) {
        CLEANUP(nl_socket_freep) struct nl_sock *sk = NULL;
        int k;

        if (!ipvs_present())
                return set_errmsg(reterr_msg, -EPROTONOSUPPORT, "IPVS not present in this kernel");
        sk = nl_socket_alloc();
        if (!sk)
                return -ENOMEM;
        k = genl_connect(sk);
        if (k < 0)
                return nl_failed(k, "cannot connect to generic netlink", reterr_msg);
        k = genl_ctrl_resolve(sk, IPVS_GENL_NAME);
        if (k < 0) {
                if (k == -NLE_OBJ_NOTFOUND)
                        return set_errmsg(reterr_msg, -EPROTONOSUPPORT, "IPVS not present in this kernel");
                return nl_failed(k, "cannot resolve the IPVS generic netlink family", reterr_msg);
        }
        *ret_family = k;
        *ret_sk = TAKE_PTR(sk);
        return 0;
}

static int count_cb(struct nl_msg *msg, void *arg) {
        (*(unsigned *) arg)++;
        return NL_OK;
}

static int count_on(struct nl_sock *sk, int family, unsigned *ret, char **reterr_msg) {
        CLEANUP(nlmsg_freep) struct nl_msg *msg = NULL;
        unsigned n = 0;
        int k;

        msg = nlmsg_alloc();
        if (!msg)
                return -ENOMEM;
        if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_DUMP, IPVS_CMD_GET_SERVICE,
                         IPVS_GENL_VERSION))
                return -ENOMEM;
        k = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, count_cb, &n);
        if (k >= 0)
                k = nl_send_auto(sk, msg);
        if (k >= 0)
                k = nl_recvmsgs_default(sk);
        if (k < 0)
                return nl_failed(k, "cannot list IPVS services", reterr_msg);
        *ret = n;
        return 0;
}

int ipvs_count_services(unsigned *ret, char **reterr_msg) {
        CLEANUP(nl_socket_freep) struct nl_sock *sk = NULL;
        int family = 0, r;

        r = ipvs_connect(&sk, &family, reterr_msg);
        if (r < 0)
                return r;
        return count_on(sk, family, ret, reterr_msg);
}

struct nl_msg *ipvs_flush_msg_new(int family) {
        struct nl_msg *msg = nlmsg_alloc();

        if (!msg)
                return NULL;
        if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0, IPVS_CMD_FLUSH, IPVS_GENL_VERSION)) {
                nlmsg_free(msg);
                return NULL;
        }
        return msg;
}

int ipvs_flush(char **reterr_msg) {
        CLEANUP(nl_socket_freep) struct nl_sock *sk = NULL;
        struct nl_msg *msg;
        unsigned n = 0;
        int family = 0, r, k;

        r = ipvs_connect(&sk, &family, reterr_msg);
        if (r < 0)
                return r;
        r = count_on(sk, family, &n, reterr_msg);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;
        msg = ipvs_flush_msg_new(family);
        if (!msg)
                return -ENOMEM;
        /* nl_send_sync() frees the message and waits for the kernel's ack. */
        k = nl_send_sync(sk, msg);
        if (k < 0)
                return nl_failed(k, "cannot flush IPVS", reterr_msg);
        return 1;
}
