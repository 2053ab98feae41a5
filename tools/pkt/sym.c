/*
 * sym.c — the symbolic constants a script's system calls use, with Linux's values.
 *
 * brisk-pkt emulates the Linux socket API on brisk, so the numbers are Linux's own, taken from the system
 * headers: a script's "SOL_TCP" is the 6 that setsockopt would receive, and the emulation (sys.c) switches
 * on the same macros. errno names map both ways, for results ("= -1 EAGAIN") and for messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "pkt/pkt.h"

#ifndef TCP_INQ
#define TCP_INQ 36
#endif
#ifndef TCP_NOTSENT_LOWAT
#define TCP_NOTSENT_LOWAT 25
#endif
#ifndef SIOCOUTQNSD
#define SIOCOUTQNSD 0x894B
#endif
#ifndef EPOLLRDHUP
#define EPOLLRDHUP 0x2000
#endif
#ifndef POLLRDHUP
#define POLLRDHUP 0x2000
#endif

struct sym {
    const char *name;
    int64_t value;
};

#define S(x) {#x, (int64_t)(x)}

static const struct sym syms[] = {
    /* socket() */
    S(AF_INET), S(AF_INET6), S(AF_UNSPEC), S(PF_INET), S(PF_INET6), S(SOCK_STREAM), S(SOCK_DGRAM), S(SOCK_RAW),
    S(SOCK_NONBLOCK), S(SOCK_CLOEXEC), S(IPPROTO_TCP), S(IPPROTO_UDP), S(IPPROTO_IP), S(IPPROTO_IPV6),
    S(IPPROTO_ICMP),
    /* levels */
    S(SOL_SOCKET), S(SOL_TCP), S(SOL_IP), S(SOL_IPV6),
    /* SOL_SOCKET options */
    S(SO_REUSEADDR), S(SO_REUSEPORT), S(SO_KEEPALIVE), S(SO_SNDBUF), S(SO_RCVBUF), S(SO_LINGER), S(SO_ERROR),
    S(SO_RCVLOWAT), S(SO_SNDLOWAT), S(SO_RCVTIMEO), S(SO_SNDTIMEO), S(SO_TYPE), S(SO_DOMAIN), S(SO_PROTOCOL),
    S(SO_ACCEPTCONN), S(SO_OOBINLINE), S(SO_ZEROCOPY), S(SO_MAX_PACING_RATE), S(SO_PRIORITY), S(SO_MARK),
    /* SOL_TCP options */
    S(TCP_NODELAY), S(TCP_MAXSEG), S(TCP_CORK), S(TCP_KEEPIDLE), S(TCP_KEEPINTVL), S(TCP_KEEPCNT),
    S(TCP_SYNCNT), S(TCP_LINGER2), S(TCP_DEFER_ACCEPT), S(TCP_WINDOW_CLAMP), S(TCP_INFO), S(TCP_QUICKACK),
    S(TCP_CONGESTION), S(TCP_MD5SIG), S(TCP_USER_TIMEOUT), S(TCP_FASTOPEN), S(TCP_NOTSENT_LOWAT), S(TCP_INQ),
    S(TCP_REPAIR), S(TCP_THIN_LINEAR_TIMEOUTS), S(TCP_SAVE_SYN), S(TCP_FASTOPEN_CONNECT), S(TCP_ULP),
    S(TCP_TX_DELAY),
    /* SOL_IP */
    S(IP_TOS), S(IP_TTL), S(IP_MTU_DISCOVER), S(IP_RECVERR), S(IP_PMTUDISC_DONT), S(IP_PMTUDISC_DO),
    S(IP_PMTUDISC_PROBE), S(IP_PMTUDISC_WANT),
    /* send / recv flags */
    S(MSG_OOB), S(MSG_PEEK), S(MSG_DONTROUTE), S(MSG_DONTWAIT), S(MSG_EOR), S(MSG_WAITALL), S(MSG_NOSIGNAL),
    S(MSG_MORE), S(MSG_TRUNC), S(MSG_ERRQUEUE), S(MSG_ZEROCOPY), S(MSG_FASTOPEN),
    /* shutdown */
    S(SHUT_RD), S(SHUT_WR), S(SHUT_RDWR),
    /* fcntl */
    S(F_GETFL), S(F_SETFL), S(F_GETFD), S(F_SETFD), S(O_RDONLY), S(O_WRONLY), S(O_RDWR), S(O_NONBLOCK),
    S(FD_CLOEXEC),
    /* ioctl */
    S(FIONREAD), S(FIONBIO), S(SIOCINQ), S(SIOCOUTQ), S(SIOCOUTQNSD),
    /* poll */
    S(POLLIN), S(POLLPRI), S(POLLOUT), S(POLLERR), S(POLLHUP), S(POLLNVAL), S(POLLRDNORM), S(POLLRDBAND),
    S(POLLWRNORM), S(POLLWRBAND), S(POLLRDHUP),
    /* epoll */
    S(EPOLLIN), S(EPOLLPRI), S(EPOLLOUT), S(EPOLLERR), S(EPOLLHUP), S(EPOLLRDNORM), S(EPOLLRDBAND),
    S(EPOLLWRNORM), S(EPOLLWRBAND), S(EPOLLRDHUP), S(EPOLLET), S(EPOLLONESHOT), S(EPOLLEXCLUSIVE),
    S(EPOLL_CTL_ADD), S(EPOLL_CTL_MOD), S(EPOLL_CTL_DEL), S(EPOLL_CLOEXEC),
    /* tcp_info state names used in %{ }% and getsockopt(TCP_INFO) */
    {"TCP_ESTABLISHED", 1}, {"TCP_SYN_SENT", 2}, {"TCP_SYN_RECV", 3}, {"TCP_FIN_WAIT1", 4},
    {"TCP_FIN_WAIT2", 5}, {"TCP_TIME_WAIT", 6}, {"TCP_CLOSE", 7}, {"TCP_CLOSE_WAIT", 8}, {"TCP_LAST_ACK", 9},
    {"TCP_LISTEN", 10}, {"TCP_CLOSING", 11},
    {"TCP_CA_Open", 0}, {"TCP_CA_Disorder", 1}, {"TCP_CA_CWR", 2}, {"TCP_CA_Recovery", 3}, {"TCP_CA_Loss", 4},
    {"TCPI_OPT_TIMESTAMPS", 1}, {"TCPI_OPT_SACK", 2}, {"TCPI_OPT_WSCALE", 4}, {"TCPI_OPT_ECN", 8},
    {"TCPI_OPT_ECN_SEEN", 16}, {"TCPI_OPT_SYN_DATA", 32},
    /* misc */
    {"NULL", 0},
};

struct errname {
    const char *name;
    int value;
};

#define E(x) {#x, x}

static const struct errname errs[] = {
    E(EPERM),        E(ENOENT),     E(EINTR),        E(EIO),         E(EBADF),       E(EAGAIN),
    E(ENOMEM),       E(EACCES),     E(EFAULT),       E(EBUSY),       E(EEXIST),      E(EINVAL),
    E(ENFILE),       E(EMFILE),     E(ENOSPC),       E(EPIPE),       E(ERANGE),      E(ENOTSOCK),
    E(EDESTADDRREQ), E(EMSGSIZE),   E(EPROTOTYPE),   E(ENOPROTOOPT), E(EPROTONOSUPPORT),
    E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT), E(EAFNOSUPPORT), E(EADDRINUSE), E(EADDRNOTAVAIL),
    E(ENETDOWN),     E(ENETUNREACH), E(ENETRESET),   E(ECONNABORTED), E(ECONNRESET), E(ENOBUFS),
    E(EISCONN),      E(ENOTCONN),   E(ESHUTDOWN),    E(ETIMEDOUT),   E(ECONNREFUSED), E(EHOSTDOWN),
    E(EHOSTUNREACH), E(EALREADY),   E(EINPROGRESS),  E(ENOTTY),      E(EPROTO),      E(ENODATA),
    E(ENONET),
};

int pkt_sym(const char *name, int64_t *out)
{
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        if (strcmp(syms[i].name, name) == 0) {
            *out = syms[i].value;
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
        if (strcmp(errs[i].name, name) == 0) {
            *out = errs[i].value;
            return 1;
        }
    }
    if (strcmp(name, "EWOULDBLOCK") == 0) {
        *out = EAGAIN;
        return 1;
    }
    return 0;
}

const char *pkt_errno_name(int e)
{
    for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
        if (errs[i].value == e)
            return errs[i].name;
    return NULL;
}
