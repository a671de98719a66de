/* SPDX-License-Identifier: Apache-2.0 */
/* One writer for bkbench's result records, as JSON or as CSV: each op
 * family lists its fields once, and both outputs come from that list.
 * JSON: one object per record, inside an array per family. CSV: one row
 * per record, its columns the union of every family's fields (a nested
 * object's fields as "object.field"), a field a record lacks empty. */
#ifndef BK_TOOL_BENCH_RECORD_H
#define BK_TOOL_BENCH_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum rec_mode {
    REC_JSON,                             /* write JSON to f */
    REC_CSV_COLUMNS,                      /* CSV, first pass: collect the columns */
    REC_CSV_ROWS,                         /* CSV, second pass: write the rows to f */
    REC_EACH_ROW,                         /* as REC_CSV_ROWS, a callback per row */
};

struct rec;
typedef void (*rec_row_fn)(const struct rec *r, void *user);

struct rec {
    enum rec_mode mode;
    FILE *f;
    size_t items;                         /* records in the current list */
    unsigned fields;                      /* members in the current object (JSON) */
    const char *section;                  /* the list's name, CSV's first column */
    char prefix[64];                      /* "cublasLt." inside a nested object (CSV) */
    char **columns, **cells;              /* CSV: names, the current row's values */
    size_t ncolumns, capacity;
    rec_row_fn row;                       /* REC_EACH_ROW: called at each rec_end */
    void *row_user;
};

/* A list of records: the JSON array that is the member 'section' (the
 * caller writes the member's name), or the CSV rows whose "section" is
 * that name. */
void rec_list_begin(struct rec *r, const char *section);
void rec_list_end(struct rec *r);
void rec_begin(struct rec *r);
void rec_end(struct rec *r);
/* Fields of the current record. A string of NULL is null. */
void rec_str(struct rec *r, const char *key, const char *v);
void rec_num(struct rec *r, const char *key, double v, bool valid);   /* %.6g or null */
void rec_whole(struct rec *r, const char *key, double v);             /* %.0f */
void rec_int(struct rec *r, const char *key, long long v);
void rec_uint(struct rec *r, const char *key, unsigned long long v);
void rec_bool(struct rec *r, const char *key, bool v);
void rec_null(struct rec *r, const char *key);
/* An array of integers; CSV joins them with spaces. */
void rec_ints(struct rec *r, const char *key, const long long *v, size_t n);
/* A nested object (one level). */
void rec_object_begin(struct rec *r, const char *key);
void rec_object_end(struct rec *r);

/* A JSON writer on f. */
struct rec rec_json(FILE *f);
/* Writes the records that records() lists as CSV to f: a header line,
 * then one line per record, fields quoted as RFC 4180 says where they
 * need it. Returns 0, or -1 when a write failed. */
typedef void (*rec_source_fn)(struct rec *r, const void *user);
int rec_write_csv(FILE *f, rec_source_fn records, const void *user);
/* Calls row() for each record that records() lists, with its fields as
 * CSV has them: rec_cell gives one (NULL when the record lacks it). */
void rec_each_row(rec_source_fn records, const void *user, rec_row_fn row, void *row_user);
const char *rec_cell(const struct rec *r, const char *key);

#endif /* BK_TOOL_BENCH_RECORD_H */
