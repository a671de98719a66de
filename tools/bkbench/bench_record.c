/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's record writer: JSON and CSV from one list of fields. */
#define _POSIX_C_SOURCE 200809L

#include "bench_record.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tool_common.h"

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        tool_die("out of host memory");
    return p;
}

struct rec rec_json(FILE *f)
{
    return (struct rec){.mode = REC_JSON, .f = f};
}

/* The column's index; in the first pass a new name is appended. */
static size_t column(struct rec *r, const char *key)
{
    char name[128];
    snprintf(name, sizeof name, "%s%s", r->prefix, key);
    for (size_t i = 0; i < r->ncolumns; i++)
        if (strcmp(r->columns[i], name) == 0)
            return i;
    if (r->mode != REC_CSV_COLUMNS)
        tool_die("CSV: no column '%s' in the first pass", name);
    if (r->ncolumns == r->capacity) {
        size_t cap = r->capacity ? 2 * r->capacity : 64;
        char **c = realloc(r->columns, cap * sizeof *c);
        if (!c)
            tool_die("out of host memory");
        r->columns = c;
        r->capacity = cap;
    }
    r->columns[r->ncolumns] = xstrdup(name);
    return r->ncolumns++;
}

/* The JSON member's name, after a comma unless it is the first. */
static void json_key(struct rec *r, const char *key)
{
    fprintf(r->f, "%s\"%s\": ", r->fields++ ? ", " : "", key);
}

/* A field: JSON gets text as it is, CSV the same text in its cell
 * (csv, when not NULL, instead: a string without JSON's quotes). */
static void field(struct rec *r, const char *key, const char *json, const char *csv)
{
    if (r->mode == REC_JSON) {
        json_key(r, key);
        fputs(json, r->f);
        return;
    }
    size_t i = column(r, key);
    if (r->mode == REC_CSV_ROWS || r->mode == REC_EACH_ROW) {
        free(r->cells[i]);
        r->cells[i] = xstrdup(csv ? csv : json);
    }
}

static void fieldf(struct rec *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fieldf(struct rec *r, const char *key, const char *fmt, ...)
{
    char text[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    field(r, key, text, NULL);
}

void rec_list_begin(struct rec *r, const char *section)
{
    r->section = section;
    r->items = 0;
    if (r->mode == REC_JSON)
        fputc('[', r->f);
}

void rec_list_end(struct rec *r)
{
    if (r->mode == REC_JSON)
        fputs("\n  ]", r->f);
}

void rec_begin(struct rec *r)
{
    r->fields = 0;
    r->prefix[0] = '\0';
    if (r->mode == REC_JSON) {
        fprintf(r->f, "%s\n    {", r->items ? "," : "");
    } else {
        size_t i = column(r, "section");
        if (r->mode != REC_CSV_COLUMNS) {
            for (size_t k = 0; k < r->ncolumns; k++) {
                free(r->cells[k]);
                r->cells[k] = NULL;
            }
            r->cells[i] = xstrdup(r->section);
        }
    }
    r->items++;
}

/* One CSV field, quoted where RFC 4180 needs it. */
static void csv_cell(FILE *f, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void rec_end(struct rec *r)
{
    if (r->mode == REC_JSON) {
        fputc('}', r->f);
    } else if (r->mode == REC_EACH_ROW) {
        r->row(r, r->row_user);
    } else if (r->mode == REC_CSV_ROWS) {
        for (size_t k = 0; k < r->ncolumns; k++) {
            if (k)
                fputc(',', r->f);
            csv_cell(r->f, r->cells[k]);
        }
        fputc('\n', r->f);
    }
}

void rec_str(struct rec *r, const char *key, const char *v)
{
    if (!v) {
        rec_null(r, key);
    } else if (r->mode == REC_JSON) {
        json_key(r, key);
        tool_json_string(r->f, v);
    } else {
        field(r, key, v, v);
    }
}

void rec_num(struct rec *r, const char *key, double v, bool valid)
{
    if (valid)
        fieldf(r, key, "%.6g", v);
    else
        rec_null(r, key);
}

void rec_whole(struct rec *r, const char *key, double v)
{
    fieldf(r, key, "%.0f", v);
}

void rec_int(struct rec *r, const char *key, long long v)
{
    fieldf(r, key, "%lld", v);
}

void rec_uint(struct rec *r, const char *key, unsigned long long v)
{
    fieldf(r, key, "%llu", v);
}

void rec_bool(struct rec *r, const char *key, bool v)
{
    field(r, key, v ? "true" : "false", NULL);
}

void rec_null(struct rec *r, const char *key)
{
    field(r, key, "null", "");
}

void rec_ints(struct rec *r, const char *key, const long long *v, size_t n)
{
    char json[256] = "[", csv[256] = "";
    size_t j = 1, c = 0;
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(json + j, sizeof json - j, "%s%lld", i ? ", " : "", v[i]);
        int x = snprintf(csv + c, sizeof csv - c, "%s%lld", i ? " " : "", v[i]);
        if (w < 0 || x < 0 || (size_t)w >= sizeof json - j || (size_t)x >= sizeof csv - c)
            tool_die("record field '%s': too many values", key);
        j += (size_t)w;
        c += (size_t)x;
    }
    snprintf(json + j, sizeof json - j, "]");
    field(r, key, json, csv);
}

void rec_object_begin(struct rec *r, const char *key)
{
    if (r->mode == REC_JSON) {
        json_key(r, key);
        fputc('{', r->f);
        r->fields = 0;
    } else {
        snprintf(r->prefix, sizeof r->prefix, "%s.", key);
    }
}

void rec_object_end(struct rec *r)
{
    if (r->mode == REC_JSON) {
        fputc('}', r->f);
        r->fields = 1;                    /* the object was a member */
    } else {
        r->prefix[0] = '\0';
    }
}

/* The columns of every record (a first pass), and cells for a row. */
static void collect_columns(struct rec *r, rec_source_fn records, const void *user)
{
    records(r, user);
    r->cells = calloc(r->ncolumns ? r->ncolumns : 1, sizeof *r->cells);
    if (!r->cells)
        tool_die("out of host memory");
}

static void free_columns(struct rec *r)
{
    for (size_t k = 0; k < r->ncolumns; k++) {
        free(r->cells[k]);
        free(r->columns[k]);
    }
    free(r->cells);
    free(r->columns);
}

int rec_write_csv(FILE *f, rec_source_fn records, const void *user)
{
    struct rec r = {.mode = REC_CSV_COLUMNS, .f = f};
    collect_columns(&r, records, user);
    for (size_t k = 0; k < r.ncolumns; k++) {
        if (k)
            fputc(',', f);
        csv_cell(f, r.columns[k]);
    }
    fputc('\n', f);
    r.mode = REC_CSV_ROWS;
    records(&r, user);
    free_columns(&r);
    return ferror(f) ? -1 : 0;
}

void rec_each_row(rec_source_fn records, const void *user, rec_row_fn row, void *row_user)
{
    struct rec r = {.mode = REC_CSV_COLUMNS, .row = row, .row_user = row_user};
    collect_columns(&r, records, user);
    r.mode = REC_EACH_ROW;
    records(&r, user);
    free_columns(&r);
}

const char *rec_cell(const struct rec *r, const char *key)
{
    for (size_t i = 0; i < r->ncolumns; i++)
        if (strcmp(r->columns[i], key) == 0)
            return r->cells[i];
    return NULL;
}
