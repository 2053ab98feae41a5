/*
 * ssjson.c — brisk-ss's object and lines for a simulated connection (ssjson.h): the same code brisk-ss uses
 * (ctl_conn_json, ss_print_socket, ss_info_string), so the lab's lines and a live process's read alike.
 */
#include "lab/ssjson.h"

#include <stdlib.h>
#include <string.h>

#include "introspect/ctl.h"
#include "introspect/ssline.h"

/* brisk-ss's object, its addresses from the tuple: an IPv6 connection's too (conn_info's laddr and raddr
 * are IPv4's, 0 for IPv6). */
static json_t *conn_json(const struct brisk_conn_info *i, const char *cc)
{
    json_t *o = ctl_conn_json(i, cc);
    char text[BRISK_ADDR_STRLEN];
    if (o && i->tuple.laddr.family == BRISK_AF_INET6) {
        json_object_set_new(o, "laddr", json_string(brisk_addr_format(&i->tuple.laddr, text)));
        json_object_set_new(o, "raddr", json_string(brisk_addr_format(&i->tuple.raddr, text)));
    }
    return o;
}

/* ss writes an IPv6 address in brackets before its port ([2001:db8::1]:5001); the JSON keeps it bare. */
static void bracket(json_t *o, const char *key)
{
    const char *a = json_string_value(json_object_get(o, key));
    char text[BRISK_ADDR_STRLEN + 2];
    if (a && strchr(a, ':')) {
        snprintf(text, sizeof(text), "[%s]", a);
        json_object_set_new(o, key, json_string(text));
    }
}

static char *socket_line(json_t *obj)
{
    char *buf = NULL;
    size_t len = 0;
    json_t *o = json_deep_copy(obj);
    FILE *f = o ? open_memstream(&buf, &len) : NULL;
    if (!f) {
        json_decref(o);
        return NULL;
    }
    bracket(o, "laddr");
    bracket(o, "raddr");
    ss_print_socket(f, o);
    json_decref(o);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    /* One line: without its newline, and without the padding after the last column. */
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
        buf[--len] = '\0';
    return buf;
}

char *lab_ss_json(const struct brisk_conn_info *i, const char *cc, uint64_t now_ns)
{
    json_t *o = conn_json(i, cc);
    char *ss = o ? socket_line(o) : NULL, *info = o ? ss_info_string(o, (int64_t)now_ns) : NULL, *text = NULL;
    if (ss && info && json_object_set_new(o, "ss", json_string(ss)) == 0 &&
        json_object_set_new(o, "info", json_string(info)) == 0)
        text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    free(ss);
    free(info);
    json_decref(o);
    return text;
}

int lab_ss_print(FILE *f, const char *indent, const struct brisk_conn_info *i, const char *cc,
                 uint64_t now_ns, int header)
{
    json_t *o = conn_json(i, cc);
    char *ss = o ? socket_line(o) : NULL, *info = o ? ss_info_string(o, (int64_t)now_ns) : NULL;
    int rc = ss && info ? 0 : 1;
    if (rc == 0) {
        if (header) {
            fputs(indent, f);
            ss_print_header(f);
        }
        fprintf(f, "%s%s\n%s\t %s\n", indent, ss, indent, info);
    }
    free(ss);
    free(info);
    json_decref(o);
    return rc;
}
