/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations backward in f64 against central finite differences of
 * libbk's own forward, contracted with dy: every kind, several shapes.
 * Each y element depends only on its own a and b, so shifting every a (or
 * every b) at once gives all the differences in four forward runs. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "gated_case.h"

#define STEP 1e-6

struct shift { const struct gated_case *c; void *x; double sign; bool b_half; };

static void shift_visit(void *user, const struct gated_offsets *o)
{
    struct shift *s = user;
    double *x = s->x;
    x[s->b_half ? o->xb : o->xa] += s->sign * STEP;
}

/* libbk's forward at x shifted by sign*STEP on the a or b half: the
 * shifted x is kept, since the true step is (x + h) - (x - h) as stored. */
static void forward_shifted(BkContext ctx, const struct gated_case *fc,
                            const struct gated_data *base, double sign, bool b_half,
                            struct gated_data *out)
{
    gated_data_alloc(fc, out);
    memcpy(out->host[GATED_X], base->host[GATED_X], base->bytes[GATED_X]);
    struct shift s = { fc, out->host[GATED_X], sign, b_half };
    gated_for_each(fc, shift_visit, &s);
    if (gated_case_run(ctx, fc, out) != BK_SUCCESS)
        tap_bail("forward run failed");
}

struct fd_check {
    const struct gated_case *c;
    const struct gated_data *d;
    struct gated_data plus[2], minus[2];   /* shifted on the a [0] or b [1] half */
    long bad;
};

static void fd_visit(void *user, const struct gated_offsets *o)
{
    struct fd_check *s = user;
    const double *x = s->d->host[GATED_X], *dy = s->d->host[GATED_DY], *dx = s->d->host[GATED_DX];
    const int64_t at[2] = { o->xa, o->xb }, out[2] = { o->dxa, o->dxb };
    for (int h = 0; h < 2; h++) {
        const double *yp = s->plus[h].host[GATED_Y], *ym = s->minus[h].host[GATED_Y];
        const double *xp = s->plus[h].host[GATED_X], *xm = s->minus[h].host[GATED_X];
        double step = xp[at[h]] - xm[at[h]];
        double fd = dy[o->y] * (yp[o->y] - ym[o->y]) / step;
        double got = dx[out[h]];
        double scale = fabs(dy[o->y]) * (1 + fabs(x[o->xa])) * (1 + fabs(x[o->xb]));
        if (fabs(fd - got) <= 1e-6 * fabs(got) + 1e-8 * scale)
            continue;
        if (s->bad++ < 3)
            tap_diag("d%s at a = %.17g, b = %.17g, dy = %.17g: finite difference %.17g, "
                     "backward %.17g", h ? "b" : "a", x[o->xa], x[o->xb], dy[o->y], fd, got);
    }
}

static void check_case(BkContext ctx, const struct gated_case *c, struct bkt_rng *rng)
{
    struct gated_data d;
    gated_data_alloc(c, &d);
    gated_data_randomize(c, &d, rng, true);   /* keep b off ReGLU's kink */
    bool ran = gated_case_run(ctx, c, &d) == BK_SUCCESS;

    struct gated_case fc = *c;   /* the forward over the same x, y laid out as dy */
    fc.backward = false;
    struct fd_check s = { .c = c, .d = &d };
    for (int h = 0; ran && h < 2; h++) {
        forward_shifted(ctx, &fc, &d, +1, h, &s.plus[h]);
        forward_shifted(ctx, &fc, &d, -1, h, &s.minus[h]);
    }
    if (ran)
        gated_for_each(c, fd_visit, &s);
    tap_ok(ran && s.bad == 0, "finite differences: %s", c->label);
    for (int h = 0; ran && h < 2; h++) {
        gated_data_free(&s.plus[h]);
        gated_data_free(&s.minus[h]);
    }
    gated_data_free(&d);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(303);
    struct gated_shape all[32];
    unsigned n = gated_shapes(&rng, all, 32);
    /* Contiguous, padded/transposed, and rank 8 are enough here. */
    const unsigned pick[] = { 1, 4, 9 };
    for (unsigned k = 0; k < GATED_KIND_COUNT; k++)
        for (unsigned i = 0; i < sizeof pick / sizeof pick[0] && pick[i] < n; i++) {
            struct gated_case c;
            gated_case_init(&c, gated_kinds[k], BK_DATA_TYPE_F64, true, &all[pick[i]], &rng);
            check_case(ctx, &c, &rng);
        }
    bkDestroyContext(ctx);
    return tap_done();
}
