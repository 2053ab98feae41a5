/*
 * fuzz_pkt.c — brisk-pkt's script language on arbitrary text: the lexer, the parser and, for what parses,
 * the whole interpreter (system calls emulated on a brisk stack, packets injected and matched, %{ }% code)
 * on the virtual clock. Nothing a script says may crash brisk-pkt or the stack; a malformed script must be
 * reported as one (status 2, with "file:line:col"), and every run must end with a verdict. Also feeds the
 * text to the %{ }% evaluator directly, with a few variables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "pkt/pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    char *src = malloc(size + 1);
    if (!src)
        return 0;
    memcpy(src, data, size);
    src[size] = 0;

    static const struct pkt_var vars[] = {{"tcpi_rtt", 100000}, {"tcpi_snd_cwnd", 10}, {"x", -3}};
    char out[256], err[256];
    int rc = pkt_code_run(src, vars, 3, out, sizeof(out), err, sizeof(err));
    if (rc < PKT_PASS || rc > PKT_UNSUPPORTED)
        fh_fail("pkt: code returned %d", rc);

    struct pkt_script s;
    char perr[512];
    rc = pkt_parse("fuzz.pkt", src, &s, perr, sizeof(perr));
    if (rc == PKT_BAD_SCRIPT && strncmp(perr, "fuzz.pkt:", 9) != 0)
        fh_fail("pkt: a parse error without its location: %s", perr);
    if (rc == PKT_PASS && s.nev <= 64) {
        struct pkt_config cfg;
        pkt_config_default(&cfg);
        struct pkt_result res;
        pkt_run(&s, &cfg, &res);
        if (res.status < PKT_PASS || res.status > PKT_UNSUPPORTED)
            fh_fail("pkt: run status %d", res.status);
        if (res.status != PKT_PASS && res.msg[0] == 0)
            fh_fail("pkt: a verdict without a message");
    }
    pkt_script_free(&s);
    free(src);
    return 0;
}
