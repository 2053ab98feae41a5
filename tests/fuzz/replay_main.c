/*
 * replay_main.c — the fuzz targets without libFuzzer: a main() that runs LLVMFuzzerTestOneInput on every
 * file named on the command line, or on every file in a named directory. `make test` registers one ctest per
 * target replaying its committed corpus (tests/fuzz/corpus/<target>/): seeds and every crash once found, so
 * the normal gcc build, and the sanitizer build, keep them passing.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/harness.h"
#include "support/testutil.h"

static int run_file(const char *path)
{
    size_t len = 0;
    uint8_t *buf = brisk_test_read_file(path, &len);
    if (!buf) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 1;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof(*names));
            if (!names)
                abort();
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n])
            abort();
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_names); /* a stable order: failures reproduce */
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = run_file(names[i]);
        if (rc < 0)
            count = -1;
        else if (count >= 0)
            count += rc;
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    int total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
            return 1;
        }
        int rc = S_ISDIR(sb.st_mode) ? run_dir(argv[i]) : run_file(argv[i]);
        if (rc < 0)
            return 1;
        total += rc;
    }
    if (total == 0) {
        fprintf(stderr, "replay: no inputs\n");
        return 1;
    }
    printf("replayed %d inputs\n", total);
    return 0;
}
