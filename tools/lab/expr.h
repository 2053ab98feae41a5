/*
 * expr.h — the arithmetic of a scenario file (docs/lab.md, "Scenario files: parameters and reports").
 *
 * A scenario file computes a few things from its parameters and its rows' figures: a link delay of half the
 * round trip (`${rtt / 2}`), a column that divides one row's figure by another's, a model line, the bounds of
 * its expected shape, the headline of the SUMMARY. Those are expressions in doubles, evaluated left to right
 * as C would evaluate the same text (so a figure computed from a file equals the one a C scenario computed):
 *
 *   ?: (right-assoc)  ||  &&  == != < <= > >=  + -  * /  unary - !   numbers (1448, 8e9, 0.85), names, (...)
 *   min(a, b, ...), max(a, b, ...), floor(x)
 *
 * A name is letters, digits, '_' and '.', resolved by the caller (a parameter, a named value, `ROW.FIGURE`,
 * `set.SETTING`). Comparisons and logic give 1 or 0. Nothing here allocates, and the input is hostile: the
 * nesting depth is bounded, every error is a message ("unknown name 'x'", "expected ')' after ...").
 */
#ifndef BRISK_LAB_EXPR_H
#define BRISK_LAB_EXPR_H

#include <stddef.h>

/* Resolves a name; returns 0 with *out, or nonzero if the name means nothing here. */
typedef int (*lab_expr_lookup)(void *ctx, const char *name, double *out);

/* Evaluates text. Returns 0 with *out, or -1 with a message in err (errlen bytes). */
int lab_expr_eval(const char *text, lab_expr_lookup lookup, void *ctx, double *out, char *err, size_t errlen);

/* Expands text with {EXPR:%FMT} fields (FMT one printf conversion of a double: %.1f, %+.1f, %.0f, %g ...) into
 * out. Returns 0, or -1 with a message in err. */
int lab_expr_format(const char *text, lab_expr_lookup lookup, void *ctx, char *out, size_t cap, char *err,
                    size_t errlen);

#endif
