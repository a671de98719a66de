/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's SVG chart: the rows' ratios as labelled horizontal bars. */
#define _POSIX_C_SOURCE 200809L

#include "bench_plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_common.h"

/* Which field of a section's records is its ratio, the first present
 * one of keys, and what a ratio of 1 means there. */
static const struct {
    const char *section;
    const char *keys[2];
    const char *unit;
} ratios[] = {
    {"results", {"roofline", NULL}, "of the copy roof"},
    {"gemm", {"reusableVsCublasLt", "peakFraction"}, "of cuBLASLt (else of peak)"},
    {"sparse24", {"cusparseLt.sparseVsCusparseLt", "speedup"},
     "of cuSPARSELt (else speedup over dense)"},
    {"w4a16", {"ofFloor", NULL}, "of the weight-read floor"},
    {"convert", {"roofline", NULL}, "of the copy roof"},
    {"attentionDecode", {"roofline", NULL}, "of the copy roof"},
    {"decodeStep", {"ofFloor", NULL}, "of the step's floor"},
};

/* The fields that name a row, in the label's order. */
static const char *const label_keys[] = {"op", "kind", "layer", "case", "pattern", "form",
                                         "dtype", "from", "to", "shape"};

#define MAX_BARS 4096u
#define BAR_H 14
#define BAR_GAP 4
#define LABEL_W 390
#define CHART_W 420
#define VALUE_W 110

struct bar {
    char label[112];
    char section[24];
    double value;
};

struct chart {
    struct bar *bars;
    unsigned n;
};

static void append(char *dst, size_t size, const char *s)
{
    size_t len = strlen(dst);
    if (len + 1 < size)
        snprintf(dst + len, size - len, "%s%s", len ? " " : "", s);
}

static void take_row(const struct rec *r, void *user)
{
    struct chart *c = user;
    const char *section = rec_cell(r, "section"), *status = rec_cell(r, "status");
    if (!section || c->n == MAX_BARS || (status && strcmp(status, "ok") != 0))
        return;
    for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
        if (strcmp(ratios[i].section, section) != 0)
            continue;
        const char *v = NULL;
        for (int k = 0; k < 2 && !(v && *v); k++)
            v = ratios[i].keys[k] ? rec_cell(r, ratios[i].keys[k]) : NULL;
        if (!v || !*v)
            return;
        struct bar *b = &c->bars[c->n++];
        memset(b, 0, sizeof *b);
        b->value = strtod(v, NULL);
        snprintf(b->section, sizeof b->section, "%s", section);
        for (size_t k = 0; k < sizeof label_keys / sizeof label_keys[0]; k++) {
            const char *s = rec_cell(r, label_keys[k]);
            char text[64];
            if (!s || !*s || (strcmp(label_keys[k], "dtype") == 0 &&
                              (rec_cell(r, "case") || rec_cell(r, "from"))))
                continue;
            snprintf(text, sizeof text, "%s", s);
            for (char *p = text; *p; p++)          /* "2 64" (CSV's list) -> "2x64" */
                if (*p == ' ' && strcmp(label_keys[k], "shape") == 0)
                    *p = 'x';
            append(b->label, sizeof b->label, text);
        }
        const char *strides = rec_cell(r, "inputStrides");
        if (strides && *strides) {             /* the strided gated case: "rs=12288" */
            char rs[40];
            snprintf(rs, sizeof rs, "rs=%.*s", (int)strcspn(strides, " "), strides);
            append(b->label, sizeof b->label, rs);
        }
        return;
    }
}

/* Text with XML's five special characters escaped. */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
    }
}

static const char *unit_of(const char *section)
{
    for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++)
        if (strcmp(ratios[i].section, section) == 0)
            return ratios[i].unit;
    return "";
}

static void write_svg(FILE *f, const char *title, const struct chart *c)
{
    double top = 1.0;                     /* the scale: at least the 100% line */
    for (unsigned i = 0; i < c->n; i++)
        if (c->bars[i].value > top)
            top = c->bars[i].value;
    unsigned headings = 0;
    for (unsigned i = 0; i < c->n; i++)
        headings += i == 0 || strcmp(c->bars[i].section, c->bars[i - 1].section) != 0;
    const int width = LABEL_W + CHART_W + VALUE_W;
    const int height = 40 + (int)(c->n * (BAR_H + BAR_GAP) + headings * 24) + 20;
    const double one = LABEL_W + CHART_W * (1.0 / top);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height);
    fprintf(f, "<text x=\"8\" y=\"18\" font-size=\"13\">");
    xml_text(f, title);
    fprintf(f, "</text>\n");
    int y = 40;
    for (unsigned i = 0; i < c->n; i++) {
        const struct bar *b = &c->bars[i];
        if (i == 0 || strcmp(b->section, c->bars[i - 1].section) != 0) {
            y += 8;
            fprintf(f, "<text class=\"section\" x=\"8\" y=\"%d\" font-weight=\"bold\">", y + 4);
            xml_text(f, b->section);
            fprintf(f, ": bars are the fraction ");
            xml_text(f, unit_of(b->section));
            fprintf(f, "</text>\n");
            y += 16;
        }
        double w = b->value > 0 ? CHART_W * b->value / top : 0;
        fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"end\">",
                LABEL_W - 6, y + BAR_H - 3);
        xml_text(f, b->label);
        fprintf(f, "</text>\n<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                   "fill=\"%s\"/>\n", LABEL_W, y, w, BAR_H, b->value >= 1 ? "#4a8" : "#48c");
        fprintf(f, "<text class=\"value\" x=\"%.1f\" y=\"%d\">%.1f%%</text>\n",
                LABEL_W + w + 4, y + BAR_H - 3, 100.0 * b->value);
        y += BAR_H + BAR_GAP;
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"30\" x2=\"%.1f\" y2=\"%d\" stroke=\"#c33\" "
               "stroke-dasharray=\"4 3\"/>\n", one, one, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"#c33\">100%%</text>\n", one + 3, y + 12);
    fprintf(f, "</svg>\n");
}

int bench_plot_write(const char *path, const char *title, rec_source_fn records,
                     const void *user)
{
    struct chart c = {calloc(MAX_BARS, sizeof *c.bars), 0};
    if (!c.bars)
        tool_die("out of host memory");
    rec_each_row(records, user, take_row, &c);
    FILE *f = fopen(path, "w");
    int bars = -1;
    if (f) {
        write_svg(f, title, &c);
        bars = fclose(f) == 0 ? (int)c.n : -1;
    }
    free(c.bars);
    return bars;
}
