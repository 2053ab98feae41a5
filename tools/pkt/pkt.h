/*
 * pkt.h — brisk-pkt: the packetdrill script language run against one brisk stack in virtual time.
 *
 * A script is a timeline of events. Each event has a time (absolute "0.100", relative "+0.1", a range
 * "+0.1~+0.2", or "*" for "whenever") and one action: an inbound packet ("<", injected into the stack), an
 * outbound packet (">", expected from the stack and compared field by field), a system call with its
 * expected result, a shell command between backquotes (sysctl lines become brisk settings), or a "%{ }%"
 * block of assertions on the connection's tcp_info. docs/conformance.md describes the language as brisk-pkt
 * accepts it and the differences from packetdrill.
 *
 * The modules:
 *   lex.c    tokens with line and column (numbers, words, punctuation, strings, backquoted and %{ }% text)
 *   parse.c  the script: options, events, packets, system calls with their argument expressions
 *   code.c   the %{ }% language: assert / print over tcpi_* values (a small Python subset)
 *   sym.c    the symbolic constants system calls use (AF_INET, TCP_NODELAY, EAGAIN, POLLIN, ...)
 *   match.c  the wire, for every backend: frames built for inbound packets, outbound ones parsed, compared
 *   call.c   system calls, for every backend: arguments evaluated, results and filled-in values checked
 *   net.c    the virtual backend: the stack's device, its clock and deadlines (the table run.c drives)
 *   sys.c    the virtual backend's system calls, on brisk's socket API with Linux's blocking semantics
 *   kernel.c the kernel backend (--kernel): a network namespace, a TAP device, the real clock
 *   ksys.c   the kernel backend's system calls, made for real on a second thread
 *   run.c    the interpreter: the event loop, timing tolerance, the verdict
 *   main.c   the command line: one script or a tree of them, a pass/fail table, --json
 */
#ifndef BRISK_PKT_H
#define BRISK_PKT_H

#include <stddef.h>
#include <stdint.h>

#include "brisk/brisk.h"

/* Verdicts (and exit statuses of one script). */
enum pkt_status {
    PKT_PASS = 0,
    PKT_FAIL = 1,        /* the stack did not behave as the script says */
    PKT_BAD_SCRIPT = 2,  /* the script is malformed */
    PKT_UNSUPPORTED = 3, /* the script uses something brisk or brisk-pkt does not have */
};

/* ---- tokens (lex.c) ---- */
enum tok_kind {
    TOK_EOF,
    TOK_INT,     /* 1000, 0x10, -1 is '-' then INT */
    TOK_FLOAT,   /* 0.100, .1 (text kept; time values are parsed exactly from it) */
    TOK_IPV4,    /* 192.0.2.1 */
    TOK_WORD,    /* identifiers: write, SOCK_STREAM, S, win, ... */
    TOK_STRING,  /* "text" (escapes \n \t \\ \" ) */
    TOK_BACKQ,   /* `shell command` */
    TOK_CODE,    /* %{ code }% */
    TOK_OPTION,  /* --name or --name=value at the start of a script */
    TOK_ELLIPSIS, /* ... */
    TOK_PUNCT,   /* one character: + * ~ < > . , : ( ) [ ] { } = | - */
};

struct tok {
    enum tok_kind kind;
    int line, col;
    char punct;      /* TOK_PUNCT */
    int64_t num;     /* TOK_INT */
    char *text;      /* WORD, FLOAT, IPV4, STRING, BACKQ, CODE, OPTION (malloc'ed) */
    int space_after; /* whitespace follows the token (flags like "S." need the dot attached) */
};

struct lexer;
/* Tokenizes `src` (NUL-terminated). Returns NULL with err (file:line:col message) on a lexical error. */
struct tok *pkt_lex(const char *path, const char *src, size_t *ntok, char *err, size_t errlen);
void pkt_toks_free(struct tok *t, size_t n);

/* ---- expressions (system call arguments and results) ---- */
enum expr_kind {
    EX_INT,      /* number */
    EX_WORD,     /* a symbol: evaluated through sym.c */
    EX_STRING,
    EX_ELLIPSIS, /* ... : "any" / "the default" */
    EX_LIST,     /* [a, b] */
    EX_STRUCT,   /* {a, b} or {name=value, ...} */
    EX_OR,       /* a | b */
    EX_ASSIGN,   /* name=value inside a struct; lhs may be a call: msg_iov(1)=[...] */
    EX_CALL,     /* htons(8080), inet_addr("1.2.3.4"), msg_name(...) */
};

struct expr {
    enum expr_kind kind;
    int line, col;
    int64_t num;          /* EX_INT */
    char *text;           /* EX_WORD, EX_STRING, EX_CALL (function name) */
    struct expr **kids;   /* EX_LIST, EX_STRUCT, EX_CALL arguments; EX_OR / EX_ASSIGN: [lhs, rhs] */
    size_t nkids;
};

/* ---- packets ---- */
#define PKT_OPTS_MAX 40

struct pkt_tcp {
    uint8_t flags;           /* BRISK_TCP_* */
    uint32_t seq, end;       /* script space: relative sequence numbers */
    uint32_t len;            /* payload bytes */
    int has_ack;             /* "ack N" given */
    uint32_t ack;
    int32_t win;             /* -1: not given (outbound: not checked) */
    uint16_t urg;
    int opts_any;            /* "<...>": outbound options not checked */
    uint8_t opts[PKT_OPTS_MAX]; /* raw option bytes in script order (SACK / TS in script space) */
    uint8_t opts_len;
    uint64_t opts_map;       /* bit i: a sack or TS option starts at opts[i] (mapped to live values) */
    int opts_raw;            /* an "opt" option was written (inbound only: sent exactly as written) */
    int16_t tos;             /* "[tos 0x..]" / "(tos ...)": -1 not checked */
    uint16_t sport, dport;   /* "src>dst" port override (0: the socket's) */
};

enum pkt_icmp_type { ICMP_UNREACH, ICMP_TIME_EXCEEDED, ICMP_SOURCE_QUENCH, ICMP_ECHO_REPLY_T };

struct pkt_icmp {
    uint8_t type, code;
    int32_t mtu;             /* frag_needed's next-hop MTU, -1 none */
    int has_echoed;          /* "[seq:end(len)]": the quoted TCP segment (our data, in our sequence space) */
    uint32_t seq, end, len;
};

enum pkt_action { ACT_INBOUND, ACT_OUTBOUND, ACT_SYSCALL, ACT_COMMAND, ACT_CODE };

enum pkt_time_kind { TIME_ABS, TIME_REL, TIME_ANY, TIME_ABS_RANGE, TIME_REL_RANGE };

struct pkt_syscall {
    char *name;
    struct expr **args;
    size_t nargs;
    struct expr *result;
    char *errno_name; /* "EAGAIN" or NULL */
    int blocking;     /* "start...end": the call may block and return at `end_us` */
    int64_t end_us;   /* as written: for a relative start, relative to the same point as the start */
};

struct pkt_event {
    int line, col;
    enum pkt_time_kind tkind;
    int64_t t_us, t_end_us; /* as written (relative offsets for REL kinds) */
    enum pkt_action act;
    int is_icmp;            /* packet events: ICMP instead of TCP */
    struct pkt_tcp tcp;
    struct pkt_icmp icmp;
    struct pkt_syscall sys;
    char *text;             /* ACT_COMMAND: the command; ACT_CODE: the code */
};

struct pkt_script {
    char *path;
    struct pkt_event *ev;
    size_t nev;
    char *init_cmd; /* a `command` before the first event (packetdrill's init command), or NULL */
    /* "--name=value" lines at the top (and on the command line, which win). */
    char **opt_name, **opt_value;
    size_t nopt;
};

/* Parses a script. Returns PKT_PASS, or PKT_BAD_SCRIPT with err set to "file:line:col: error: ...". */
int pkt_parse(const char *path, const char *src, struct pkt_script *out, char *err, size_t errlen);
void pkt_script_free(struct pkt_script *s);

/* ---- symbols (sym.c) ---- */
/* The value of a symbolic constant ("SOCK_STREAM", "EAGAIN"); 0 if unknown. */
int pkt_sym(const char *name, int64_t *out);
/* The name of errno value e ("EAGAIN"), or NULL. */
const char *pkt_errno_name(int e);

/* ---- shell commands (sysctl.c) ---- */
/* One sysctl assignment of a command: `name` as written ("net.ipv4.tcp_sack", or "net/ipv4/tcp_sack" from
 * the /proc/sys form) and its value. Returns PKT_PASS, or another status with err set. */
typedef int (*pkt_sysctl_fn)(void *ctx, const char *name, const char *value, char *err, size_t errlen);
/* Splits `cmd` into simple commands and calls fn for each sysctl assignment; other commands are accepted
 * (ethtool -K ... off, true) or unsupported. Returns the first status other than PKT_PASS, err saying why. */
int pkt_command_run(const char *cmd, pkt_sysctl_fn fn, void *ctx, char *err, size_t errlen);
/* Applies a `command`'s sysctls to s. PKT_PASS, PKT_UNSUPPORTED (a command or sysctl brisk cannot honour) or
 * PKT_BAD_SCRIPT (a malformed value); err says which. */
int pkt_command_apply(const char *cmd, struct brisk_settings *s, char *err, size_t errlen);

/* ---- the %{ }% language (code.c) ---- */
/* One named value the code may read (tcpi_rtt, ...). */
struct pkt_var {
    const char *name;
    int64_t value;
};
/* Runs `code` with the given variables; returns PKT_PASS, PKT_FAIL (an assert failed: err says which, with
 * the values), PKT_BAD_SCRIPT (syntax) or PKT_UNSUPPORTED (a name it does not know). print() output goes
 * to `out` (may be NULL). */
int pkt_code_run(const char *code, const struct pkt_var *vars, size_t nvars, char *out, size_t outlen,
                 char *err, size_t errlen);

/* ---- the run (run.c) ---- */
struct pkt_config {
    const char *profile;      /* compatibility profile applied first (default "linux-6.x") */
    const char *const *sets;  /* "name=value" brisk settings applied after it and the script's sysctls */
    size_t nsets;
    const char *const *opts;  /* packetdrill options from the command line, "name=value" (they override the
                                 script's own option lines) */
    size_t nopts;
    int64_t tolerance_us;     /* default 4000 (packetdrill's) */
    int tolerance_percent;    /* of the time since the previous event, when larger */
    int verbose;              /* print every packet and call to stdout */
    uint64_t seed;
    int kernel;               /* run against this machine's Linux (kernel.c) instead of a brisk stack */
};

struct pkt_result {
    int status;     /* enum pkt_status */
    int line;       /* where it stopped (0 = end) */
    char msg[1024]; /* "file:line: ..." for anything but PASS */
    uint64_t virtual_ns; /* virtual time run */
    unsigned events;     /* events executed */
};

void pkt_config_default(struct pkt_config *c);
/* Whether this machine can run scripts against its kernel (root, /dev/net/tun, network namespaces): 0, or
 * -1 with why set. */
int kernel_probe(char *why, size_t n);
/* Runs a parsed script. */
void pkt_run(const struct pkt_script *s, const struct pkt_config *cfg, struct pkt_result *r);

#endif
