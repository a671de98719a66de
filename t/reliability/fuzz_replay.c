/* SPDX-License-Identifier: Apache-2.0 */
/* The fuzz harness without libFuzzer, for any C compiler (TAP):
 *
 *   fuzz-replay                 replay the committed corpus, then a fixed
 *                               pseudo-random stream of new and mutated inputs
 *   fuzz-replay FILE...         replay these inputs (e.g. libFuzzer crash files)
 *   fuzz-replay --unpack DIR    write each corpus input to a file in DIR
 *   fuzz-replay --pack DIR...   print a corpus made of the files in DIRs
 *
 * The corpus is t/reliability/fuzz-corpus.txt (BK_FUZZ_CORPUS overrides):
 * one input per line in hex, '-' for the empty input, '#' comments.
 * BK_FUZZ_INPUTS sets the stream's length, BK_FUZZ_SEED its seed. */
#include "config.h"

#include "fuzz_harness.h"
#include "fuzz_ops.h"
#include "rel_util.h"
#include "../lib/tap.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT_BYTES 4096

struct corpus {
    unsigned char **data;
    size_t *size;
    size_t count;
};

static int hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void corpus_add(struct corpus *c, const unsigned char *data, size_t size)
{
    c->data = realloc(c->data, sizeof *c->data * (c->count + 1));
    c->size = realloc(c->size, sizeof *c->size * (c->count + 1));
    if (!c->data || !c->size)
        tap_bail("out of memory");
    c->data[c->count] = malloc(size ? size : 1);
    if (!c->data[c->count])
        tap_bail("out of memory");
    memcpy(c->data[c->count], data, size);
    c->size[c->count++] = size;
}

static void corpus_free(struct corpus *c)
{
    for (size_t i = 0; i < c->count; i++)
        free(c->data[i]);
    free(c->data);
    free(c->size);
}

/* Returns false on failure: *bad_line is the line that is not hex, or 0
 * when the file cannot be read (errno says why). */
static bool corpus_load(const char *path, struct corpus *c, unsigned *bad_line)
{
    *bad_line = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    static char line[2 * MAX_INPUT_BYTES + 16];
    static unsigned char buf[MAX_INPUT_BYTES];
    unsigned lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strcspn(line, "\r\n");
        line[len] = '\0';
        if (len == 0 || line[0] == '#')
            continue;
        if (strcmp(line, "-") == 0) {
            corpus_add(c, buf, 0);
            continue;
        }
        size_t n = 0;
        bool ok = len % 2 == 0 && len / 2 <= MAX_INPUT_BYTES;
        for (size_t i = 0; ok && i < len; i += 2) {
            int hi = hex_digit(line[i]), lo = hex_digit(line[i + 1]);
            ok = hi >= 0 && lo >= 0;
            buf[n++] = (unsigned char)(hi << 4 | lo);
        }
        if (!ok) {
            *bad_line = lineno;
            break;
        }
        corpus_add(c, buf, n);
    }
    fclose(f);
    return *bad_line == 0;
}

static const char *corpus_path(void)
{
    static char path[4096];
    const char *env = getenv("BK_FUZZ_CORPUS");
    if (env && *env)
        return env;
    const char *top = getenv("top_srcdir");
    snprintf(path, sizeof path, "%s/t/reliability/fuzz-corpus.txt", top && *top ? top : ".");
    return path;
}

static void print_hex(FILE *out, const unsigned char *data, size_t size)
{
    if (size == 0)
        fputc('-', out);
    for (size_t i = 0; i < size; i++)
        fprintf(out, "%02x", data[i]);
    fputc('\n', out);
}

/* The input as TAP diagnostics, 64 bytes a line. */
static void diag_input(const unsigned char *data, size_t size)
{
    tap_diag("input of %zu bytes (hex):", size);
    for (size_t at = 0; at < size; at += 64) {
        char line[160];
        size_t n = size - at < 64 ? size - at : 64, k = 0;
        for (size_t i = 0; i < n; i++)
            k += (size_t)snprintf(line + k, sizeof line - k, "%02x", data[at + i]);
        tap_diag("  %s", line);
    }
}

/* Runs one input; true when it broke no property. */
static bool replay_one(const unsigned char *data, size_t size)
{
    unsigned long before = bk_fuzz_violations();
    LLVMFuzzerTestOneInput(data, size);
    return bk_fuzz_violations() == before;
}

static unsigned long long env_number(const char *name, unsigned long long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : fallback;
}

static int replay_files(int argc, char **argv)
{
    static unsigned char buf[1 << 20];
    for (int i = 0; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            tap_ok(false, "read %s: %s", argv[i], strerror(errno));
            continue;
        }
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        tap_ok(replay_one(buf, n), "replay %s (%zu bytes)", argv[i], n);
    }
    return tap_done();
}

static int unpack(const char *dir)
{
    struct corpus c = { 0 };
    unsigned bad;
    if (!corpus_load(corpus_path(), &c, &bad)) {
        fprintf(stderr, "fuzz-replay: cannot read %s (%s; line %u; set top_srcdir or "
                "BK_FUZZ_CORPUS)\n", corpus_path(), bad ? "bad hex" : strerror(errno), bad);
        return 1;
    }
    for (size_t i = 0; i < c.count; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/corpus-%04zu", dir, i);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(c.data[i], 1, c.size[i], f) != c.size[i] || fclose(f) != 0) {
            fprintf(stderr, "fuzz-replay: cannot write %s\n", path);
            return 1;
        }
    }
    corpus_free(&c);
    return 0;
}

static int pack(int argc, char **argv)
{
    static unsigned char buf[MAX_INPUT_BYTES];
    printf("# libbk fuzz corpus: one input per line in hex ('-' is the empty input).\n"
           "# Regenerate with t/reliability/fuzz-campaign.sh --update-corpus.\n");
    for (int d = 0; d < argc; d++) {
        struct dirent **names;
        int n = scandir(argv[d], &names, NULL, alphasort);
        if (n < 0) {
            fprintf(stderr, "fuzz-replay: cannot list %s\n", argv[d]);
            return 1;
        }
        for (int i = 0; i < n; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[d], names[i]->d_name);
            FILE *f = names[i]->d_name[0] == '.' ? NULL : fopen(path, "rb");
            if (f) {
                size_t len = fread(buf, 1, sizeof buf, f);
                if (fgetc(f) == EOF) /* longer inputs are left out */
                    print_hex(stdout, buf, len);
                fclose(f);
            }
            free(names[i]);
        }
        free(names);
    }
    return 0;
}

/* Every op family, and attention with the per-sequence or paged structs,
 * has plans made and runs recorded by the inputs replayed so far. */
static bool corpus_covers_every_family(void)
{
    const struct bk_fuzz_stats s = bk_fuzz_get_stats();
    bool every = true;
    for (unsigned f = 0; f < fz_family_count(); f++) {
        tap_diag("  %-15s plans %lu, runs recorded %lu", fz_family_name(f), s.family_plans[f],
                 s.family_runs[f]);
        every = every && s.family_plans[f] > 0 && s.family_runs[f] > 0;
    }
    tap_diag("  runs with C == D in place: %lu", s.in_place_runs);
    tap_diag("  attention with per-sequence or paged structs: plans %lu, runs recorded %lu",
             s.chained_plans, s.chained_runs);
    return every && s.chained_plans > 0 && s.chained_runs > 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--unpack") == 0)
        return unpack(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "--pack") == 0)
        return pack(argc - 2, argv + 2);
    if (argc >= 2)
        return replay_files(argc - 1, argv + 1);

    tap_plan(5);
    struct corpus c = { 0 };
    unsigned bad = 0;
    const char *path = corpus_path();
    bool loaded = corpus_load(path, &c, &bad);
    if (!tap_ok(loaded && c.count > 0, "corpus %s: %zu inputs", path, c.count))
        tap_diag("cannot read it (%s, line %u); set BK_FUZZ_CORPUS", strerror(errno), bad);

    unsigned long failures = 0;
    for (size_t i = 0; i < c.count; i++)
        if (!replay_one(c.data[i], c.size[i]) && failures++ == 0) {
            tap_diag("corpus input %zu: %s", i, bk_fuzz_first_violation());
            diag_input(c.data[i], c.size[i]);
        }
    tap_ok(failures == 0, "replay of the corpus breaks no property (%lu inputs broke one)",
           failures);
    /* Coverage is the corpus's own: the stream below draws from the
     * corpus, so what it reaches shifts whenever an input joins. */
    tap_ok(corpus_covers_every_family(), "the corpus alone has plans made and runs recorded "
                                         "in every op family (and attention with per-sequence "
                                         "or paged structs)");

    /* New inputs: random bytes, or a corpus input with a few bytes changed,
     * cut or extended, the way libFuzzer's simplest mutations work. */
    const unsigned long count =
        (unsigned long)env_number("BK_FUZZ_INPUTS", rel_slow_run() ? 2000 : 10000);
    struct rel_rng rng = { env_number("BK_FUZZ_SEED", 0x626b66757a7aull) };
    tap_diag("stream: %lu inputs from seed 0x%llx", count, (unsigned long long)rng.s);
    static unsigned char buf[MAX_INPUT_BYTES];
    failures = 0;
    for (unsigned long i = 0; i < count; i++) {
        size_t n;
        if (c.count && rel_below(&rng, 4)) {
            size_t k = rel_below(&rng, c.count);
            n = c.size[k];
            memcpy(buf, c.data[k], n);
            for (unsigned m = 1 + rel_below(&rng, 4); m > 0; m--) {
                unsigned what = rel_below(&rng, 4);
                if (what == 0 && n < MAX_INPUT_BYTES)
                    buf[n++] = (unsigned char)rel_next(&rng);
                else if (what == 1 && n)
                    n = rel_below(&rng, n);
                else if (n)
                    buf[rel_below(&rng, n)] ^= (unsigned char)(1u << rel_below(&rng, 8));
            }
        } else {
            n = rel_below(&rng, 512);
            for (size_t j = 0; j < n; j++)
                buf[j] = (unsigned char)rel_next(&rng);
        }
        if (!replay_one(buf, n) && failures++ == 0) {
            tap_diag("stream input %lu: %s", i, bk_fuzz_first_violation());
            diag_input(buf, n);
        }
    }
    tap_ok(failures == 0, "%lu pseudo-random inputs break no property (%lu broke one)", count,
           failures);

    struct bk_fuzz_stats s = bk_fuzz_get_stats();
    tap_diag("inputs %lu: plans created %lu, rejected %lu; runs recorded %lu, rejected %lu; "
             "submits %lu", s.inputs, s.plans_created, s.plans_rejected, s.runs_recorded,
             s.runs_rejected, s.submits);
    tap_ok(s.plans_created > s.inputs / 10 && s.runs_recorded > s.inputs / 20 && s.submits > 0,
           "the inputs reach plan creation, recording and submission");
    corpus_free(&c);
    return tap_done();
}
