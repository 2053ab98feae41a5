/*
 * fuzz_spec.c — brisk-lab's scenario-file reader (tools/lab/spec_parse.c) on arbitrary bytes: libyaml's
 * parser and the schema walk over whatever document comes out. Nothing in a file may crash the reader; a
 * file it refuses is status 2, one it accepts must describe a runnable experiment (a name, at least one
 * flow, at least one row, rows of distinct names (sweeps too), bounds that name known figures and rows or are checks, ${...} values bound to fields
 * inside the description).
 */
#include <string.h>

#include "fuzz/harness.h"
#include "lab/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct lab_spec s; /* large: not on the stack */
    if (size > 65536)
        return 0;
    int rc = lab_spec_parse("fuzz.yaml", data, size, &s, NULL); /* messages: the reader's job, not ours */
    if (rc != 0 && rc != 2)
        fh_fail("spec: status %d", rc);
    if (rc == 0) {
        if (!s.name[0] || s.nflows < 1 || s.nflows > SPEC_MAX_FLOWS || s.nrows < 1 || s.nrows > SPEC_MAX_ROWS ||
            s.nexpect < 0 || s.nexpect > SPEC_MAX_EXPECT || s.limit_ns == 0)
            fh_fail("spec: an accepted file that is not runnable");
        for (int i = 0; i < s.nexpect; i++)
            if (!s.expect[i].check[0] && (!s.expect[i].figure[0] || (!s.expect[i].has_min && !s.expect[i].has_max)))
                fh_fail("spec: an accepted bound without a check, or without a figure or a limit");
        /* ${...} values land inside the spec, in a field of their width; rows change flows of their kind. */
        for (int i = 0; i < s.nbinds; i++) {
            size_t w = (size_t)(s.binds[i].width < 0 ? -s.binds[i].width : s.binds[i].width);
            if (s.binds[i].off + w > sizeof(s) || (w != 4 && w != 8) || !s.binds[i].expr[0])
                fh_fail("spec: an accepted ${...} value outside the spec");
        }
        /* Rows (a sweep's as much as hand-written ones) have names of their own. */
        for (int k = 0; k < s.nrows; k++)
            for (int j = 0; j < k; j++)
                if (!s.rows[k].name[0] || !strcmp(s.rows[k].name, s.rows[j].name))
                    fh_fail("spec: an accepted row without a name of its own");
        for (int k = 0; k < s.nrows; k++)
            for (int i = 0; i < s.rows[k].nflows; i++)
                if (i >= s.nflows || s.rows[k].flows[i].kind != s.flows[i].kind)
                    fh_fail("spec: an accepted row changing a flow it does not have");
        /* A topology: every flow between two different hosts a path joins, every link between known nodes. */
        int nodes = s.topology ? s.nnodes : 2;
        for (int i = 0; i < s.nflows; i++) {
            const struct spec_flow *f = &s.flows[i];
            if (f->from < 0 || f->to < 0 || f->from >= nodes || f->to >= nodes || f->from == f->to)
                fh_fail("spec: an accepted flow between unknown hosts");
            if (s.topology && (s.nodes[f->from].router || s.nodes[f->to].router ||
                               lab_spec_first_link(&s, f->from, lab_spec_host_link(&s, f->to)) < 0))
                fh_fail("spec: an accepted flow without a path");
        }
        for (int i = 0; s.topology && i < s.ntlinks; i++)
            if (s.tlinks[i].a < 0 || s.tlinks[i].b < 0 || s.tlinks[i].a >= s.nnodes || s.tlinks[i].b >= s.nnodes)
                fh_fail("spec: an accepted link to an unknown node");
    }
    return 0;
}
