/* posix-fdops — an ordinary Linux program that tests/posix/test_preload.sh runs under brisk-run: descriptor
 * operations on AF_INET TCP sockets against a kernel echo server.
 *
 *   posix-fdops ADDR PORT
 *
 * 1. dup: the duplicate sends, the original receives the echo;
 * 2. dup2 of a pipe onto the original's number: the number is the pipe's now, the socket lives on through
 *    the duplicate (another echo), and closing the duplicate ends it (the server sees EOF, we see ours);
 * 3. close_range over a fresh socket's number: a pipe that reuses the number is a pipe (ENOTSOCK), not a
 *    stale brisk socket.
 * Prints "ok - ..." per check; exit 0 if all held, 1 otherwise, 2 for bad arguments. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fails;
static void check(int cond, const char *what)
{
    printf("%s - %s\n", cond ? "ok  " : "FAIL", what);
    fails += !cond;
}

static int is_socket(int fd)
{
    int t;
    socklen_t len = sizeof(t);
    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &len) == 0 ? 1 : (errno == ENOTSOCK ? 0 : -1);
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[2]) <= 0 || atoi(argv[2]) > 65535) {
        fprintf(stderr, "usage: posix-fdops ADDR PORT\n");
        return 2;
    }
    struct sockaddr_in to;
    memset(&to, 0, sizeof(to));
    to.sin_family = AF_INET;
    to.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
        fprintf(stderr, "posix-fdops: bad ADDR %s\n", argv[1]);
        return 2;
    }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    check(s >= 0 && connect(s, (struct sockaddr *)&to, sizeof(to)) == 0, "connected");
    int d = dup(s);
    check(d >= 0 && d != s, "dup");
    char b[16];
    check(write(d, "ab", 2) == 2 && recv(s, b, 2, MSG_WAITALL) == 2 && !memcmp(b, "ab", 2),
          "dup: written through the duplicate, the echo read through the original");
    int pp[2];
    if (pipe(pp) < 0)
        return 1;
    check(dup2(pp[0], s) == s, "dup2 of a pipe onto the socket's number");
    check(is_socket(s) == 0, "dup2: the number is the pipe's now");
    check(write(d, "cd", 2) == 2 && recv(d, b, 2, MSG_WAITALL) == 2 && !memcmp(b, "cd", 2),
          "dup2: the socket lives on through its other number");
    check(shutdown(d, SHUT_WR) == 0 && read(d, b, sizeof(b)) == 0, "the echo server saw our FIN and closed");
    check(close(d) == 0, "close of the last number");
    close(s);
    close(pp[1]);

    int f = socket(AF_INET, SOCK_STREAM, 0);
    check(f >= 0 && is_socket(f) == 1, "a fresh socket");
    check(close_range((unsigned)f, (unsigned)f, 0) == 0, "close_range over it");
    int q[2];
    if (pipe(q) < 0)
        return 1;
    int reused = q[0] == f || q[1] == f;
    int num = q[0] == f ? q[0] : q[1];
    check(!reused || is_socket(num) == 0, "close_range: a pipe reusing the number is a pipe, not a stale socket");
    printf("number %d %s\n", f, reused ? "reused by the pipe" : "not reused");
    return fails ? 1 : 0;
}
