/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the reliability tests (t/reliability/): a counting host
 * allocator that can fail on demand, a per-thread record of the messages
 * libbk sends, a small deterministic random generator and an independent
 * computation of a tensor's size. They use no other test helper, so the
 * fuzz harness can be built with nothing but libbk. */
#ifndef BK_REL_UTIL_H
#define BK_REL_UTIL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

/* ---- Counting allocator ------------------------------------------------
 * Every block carries a header, so frees of foreign pointers and bad
 * alignments are caught. Safe to share between threads. */
struct rel_alloc {
    atomic_long calls;        /* pfnAllocation calls, failed ones included */
    atomic_long live;         /* blocks handed out and not yet freed */
    atomic_long failed;       /* calls that returned NULL on purpose */
    atomic_long bad_frees;    /* pfnFree of a pointer this allocator never gave */
    atomic_long bad_aligns;   /* alignment 0 or not a power of two */
    atomic_long fail_at;      /* 1-based call number that fails; 0: none */
    atomic_bool fail_after;   /* ... and every call after it */
    atomic_size_t last_failed_size;  /* size asked for by the last failed call */
    size_t max_size;          /* larger requests fail (0: no limit) */
};

/* Zeroes the stats (no failures, no size limit) and returns callbacks
 * that count into them. */
BkAllocationCallbacks rel_alloc_callbacks(struct rel_alloc *a);
/* Make call number calls+n (n >= 1 counts from now) fail, or none (n = 0). */
void rel_alloc_fail_in(struct rel_alloc *a, long n, bool and_after);
/* Where the allocator gets its memory (default: malloc and free). */
void rel_alloc_set_system(void *(*sys_malloc)(size_t), void (*sys_free)(void *));

/* ---- Messages ------------------------------------------------------------
 * rel_capture_messages() installs a callback that keeps, per thread, how
 * many messages arrived and a copy of the last one. */
void rel_capture_messages(void);
unsigned rel_message_count(void);          /* this thread's */
const char *rel_last_message(void);        /* this thread's copy */

/* Checks a failed call: result negative and known, one message or more
 * sent during the call (since count 'mark'), not empty, the same text as
 * bkGetLastErrorMessage(). Returns NULL when all hold, else what broke. */
const char *rel_check_failure(BkResult r, unsigned mark);

/* ---- Random numbers (splitmix64: tiny, and the same everywhere) -------- */
struct rel_rng { uint64_t s; };
static inline uint64_t rel_next(struct rel_rng *g)
{
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform in [0, n), n > 0. */
static inline uint64_t rel_below(struct rel_rng *g, uint64_t n)
{
    return rel_next(g) % n;
}

/* ---- Tensors, computed independently of libbk --------------------------
 * Element size of a data type, 0 when unknown. */
size_t rel_type_size(BkDataType t);
/* A count or size that may pass 2^64 (big: its value is then unknown,
 * and `value` UINT64_MAX). 64-bit words with an overflow flag rather than
 * a 128-bit type, which 32-bit targets do not have. */
struct rel_size {
    uint64_t value;
    bool big;
};
/* Whether s is above limit. */
static inline bool rel_size_above(struct rel_size s, uint64_t limit)
{
    return s.big || s.value > limit;
}
/* Element count and byte span (base to one past the last element) of a
 * descriptor, exact below 2^64, with all-zero strides meaning row-major
 * contiguous. false when rank, type, an extent or a stride is invalid (not
 * counting size). Empty tensors have span 0. */
bool rel_tensor_size(const BkTensorDesc *d, struct rel_size *count, struct rel_size *span);
/* Whether two different indices of the tensor reach one element; exact,
 * by enumeration, for tensors of at most 'limit' elements (returns -1
 * beyond). */
int rel_tensor_aliases(const BkTensorDesc *d, long limit);
/* The stride of dimension k as libbk reads it (row-major when all zero). */
int64_t rel_stride(const BkTensorDesc *d, uint32_t k);

/* True under valgrind (the memcheck wrapper sets BK_TEST_UNDER_VALGRIND=1):
 * tests then run fewer iterations. */
bool rel_slow_run(void);

#endif /* BK_REL_UTIL_H */
