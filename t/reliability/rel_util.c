/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the reliability tests: see rel_util.h. */
#include "config.h"

#include "rel_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Counting allocator ------------------------------------------------ */

#define REL_MAGIC 0x626b616c6c6f6321ull  /* "bkalloc!" */

/* Stored just below every block we hand out. */
struct block_header {
    uint64_t magic;
    void *base;            /* what the system allocator returned */
};

static void *(*sys_malloc_fn)(size_t) = malloc;
static void (*sys_free_fn)(void *) = free;

void rel_alloc_set_system(void *(*sys_malloc)(size_t), void (*sys_free)(void *))
{
    sys_malloc_fn = sys_malloc;
    sys_free_fn = sys_free;
}

static void *counting_alloc(void *user, size_t size, size_t alignment)
{
    struct rel_alloc *a = user;
    long call = atomic_fetch_add(&a->calls, 1) + 1;
    long fail_at = atomic_load(&a->fail_at);
    if ((fail_at && (call == fail_at || (call > fail_at && atomic_load(&a->fail_after)))) ||
        (a->max_size && size > a->max_size)) {
        atomic_fetch_add(&a->failed, 1);
        atomic_store(&a->last_failed_size, size);
        return NULL;
    }
    if (alignment == 0 || (alignment & (alignment - 1))) {
        atomic_fetch_add(&a->bad_aligns, 1);
        alignment = 64;
    }
    if (alignment < sizeof(struct block_header))
        alignment = sizeof(struct block_header);
    size_t total = size + alignment + sizeof(struct block_header);
    if (total < size)
        return NULL;
    char *base = sys_malloc_fn(total);
    if (!base)
        return NULL;
    uintptr_t p = ((uintptr_t)base + sizeof(struct block_header) + alignment - 1) &
                  ~(uintptr_t)(alignment - 1);
    struct block_header *h = (struct block_header *)p - 1;
    h->magic = REL_MAGIC;
    h->base = base;
    atomic_fetch_add(&a->live, 1);
    return (void *)p;
}

static void counting_free(void *user, void *mem)
{
    struct rel_alloc *a = user;
    if (!mem)
        return;
    struct block_header *h = (struct block_header *)mem - 1;
    if (h->magic != REL_MAGIC) {
        atomic_fetch_add(&a->bad_frees, 1);
        return;
    }
    h->magic = 0;
    atomic_fetch_sub(&a->live, 1);
    sys_free_fn(h->base);
}

BkAllocationCallbacks rel_alloc_callbacks(struct rel_alloc *a)
{
    atomic_init(&a->calls, 0);
    atomic_init(&a->live, 0);
    atomic_init(&a->failed, 0);
    atomic_init(&a->bad_frees, 0);
    atomic_init(&a->bad_aligns, 0);
    atomic_init(&a->fail_at, 0);
    atomic_init(&a->fail_after, false);
    atomic_init(&a->last_failed_size, 0);
    a->max_size = 0;
    return (BkAllocationCallbacks){
        .pUserData = a, .pfnAllocation = counting_alloc, .pfnFree = counting_free,
    };
}

void rel_alloc_fail_in(struct rel_alloc *a, long n, bool and_after)
{
    atomic_store(&a->fail_after, and_after);
    atomic_store(&a->fail_at, n > 0 ? atomic_load(&a->calls) + n : 0);
}

/* ---- Messages ------------------------------------------------------------ */

static _Thread_local unsigned msg_count;
static _Thread_local char msg_copy[1024];

static void capture(BkResult result, const char *message, void *user)
{
    (void)result, (void)user;
    msg_count++;
    snprintf(msg_copy, sizeof msg_copy, "%s", message ? message : "");
}

void rel_capture_messages(void)
{
    bkSetMessageCallback(capture, NULL);
}

unsigned rel_message_count(void)
{
    return msg_count;
}

const char *rel_last_message(void)
{
    return msg_copy;
}

const char *rel_check_failure(BkResult r, unsigned mark)
{
    if (r >= 0)
        return "the call did not fail";
    if (strcmp(bkResultString(r), "BK_RESULT_UNKNOWN") == 0)
        return "the result is not a BkResult";
    if (msg_count == mark)
        return "no message reached the message callback";
    const char *last = bkGetLastErrorMessage();
    if (!last || !*last)
        return "bkGetLastErrorMessage() is empty";
    if (strcmp(last, msg_copy) != 0)
        return "the callback's message differs from bkGetLastErrorMessage()";
    return NULL;
}

/* ---- Tensors --------------------------------------------------------------- */

size_t rel_type_size(BkDataType t)
{
    switch (t) {
    case BK_DATA_TYPE_F64: return 8;
    case BK_DATA_TYPE_F32: case BK_DATA_TYPE_I32: case BK_DATA_TYPE_U32: return 4;
    case BK_DATA_TYPE_F16: case BK_DATA_TYPE_BF16: case BK_DATA_TYPE_U16: return 2;
    case BK_DATA_TYPE_U8: case BK_DATA_TYPE_I8: return 1;
    default: return 0;
    }
}

static bool all_zero_strides(const BkTensorDesc *d)
{
    for (uint32_t k = 0; k < d->rank; k++)
        if (d->stride[k] != 0)
            return false;
    return true;
}

int64_t rel_stride(const BkTensorDesc *d, uint32_t k)
{
    if (!all_zero_strides(d))
        return d->stride[k];
    int64_t s = 1;
    for (uint32_t j = d->rank; j-- > k + 1;)
        s *= d->extent[j];
    return s;
}

static const struct rel_size REL_BIG = { UINT64_MAX, true };

static struct rel_size size_of(uint64_t v)
{
    return (struct rel_size){ v, false };
}

/* Products and sums stay big once big, except that a product with 0 is 0. */
static struct rel_size size_mul(struct rel_size a, struct rel_size b)
{
    if ((!a.big && a.value == 0) || (!b.big && b.value == 0))
        return size_of(0);
    uint64_t r;
    return a.big || b.big || __builtin_mul_overflow(a.value, b.value, &r) ? REL_BIG : size_of(r);
}

static struct rel_size size_add(struct rel_size a, struct rel_size b)
{
    uint64_t r;
    return a.big || b.big || __builtin_add_overflow(a.value, b.value, &r) ? REL_BIG : size_of(r);
}

bool rel_tensor_size(const BkTensorDesc *d, struct rel_size *count, struct rel_size *span)
{
    size_t elem = rel_type_size(d->dataType);
    if (!elem || d->rank < 1 || d->rank > BK_MAX_TENSOR_RANK)
        return false;
    bool zero = all_zero_strides(d), empty = false;
    for (uint32_t k = 0; k < d->rank; k++) {
        if (d->extent[k] < 0 || (!zero && d->stride[k] < 1))
            return false;
        empty |= d->extent[k] == 0;
    }
    struct rel_size n = size_of(1), last = size_of(0), stride = size_of(1);
    for (uint32_t k = d->rank; k-- > 0;) {
        const uint64_t e = (uint64_t)d->extent[k];
        const struct rel_size s = zero ? stride : size_of((uint64_t)d->stride[k]);
        n = size_mul(n, size_of(e));
        if (e > 1)
            last = size_add(last, size_mul(size_of(e - 1), s));
        if (zero)
            stride = size_mul(stride, size_of(e));
    }
    *count = empty ? size_of(0) : n;
    *span = empty ? size_of(0) : size_mul(size_add(last, size_of(1)), size_of(elem));
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int rel_tensor_aliases(const BkTensorDesc *d, long limit)
{
    struct rel_size size, span;
    if (!rel_tensor_size(d, &size, &span) || rel_size_above(size, (uint64_t)limit))
        return -1;
    const long count = (long)size.value;
    int64_t *off = malloc(sizeof *off * (size_t)(count ? count : 1));
    if (!off)
        return -1;
    int64_t idx[BK_MAX_TENSOR_RANK] = { 0 };
    for (long i = 0; i < count; i++) {
        int64_t o = 0;
        for (uint32_t k = 0; k < d->rank; k++)
            o += idx[k] * rel_stride(d, k);
        off[i] = o;
        for (uint32_t k = d->rank; k-- > 0;) {
            if (++idx[k] < d->extent[k])
                break;
            idx[k] = 0;
        }
    }
    qsort(off, (size_t)count, sizeof *off, cmp_i64);
    int dup = 0;
    for (long i = 1; i < count && !dup; i++)
        dup = off[i] == off[i - 1];
    free(off);
    return dup;
}

bool rel_slow_run(void)
{
    const char *v = getenv("BK_TEST_UNDER_VALGRIND");
    return v && *v && strcmp(v, "0") != 0;
}
