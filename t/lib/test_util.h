/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the libbk tests: the device under test, device
 * buffers, command submission, expected-error checks and a counting
 * allocator. The numeric helpers are in test_numeric.h. */
#ifndef BK_TEST_UTIL_H
#define BK_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#include "tap.h"
#include "test_numeric.h"

/* ---- The device under test ----------------------------------------------
 * BK_TEST_DEVICE = host (default) | cuda | auto. When cuda is asked for and
 * no CUDA device opens, the test is skipped (1..0 # SKIP), or fails when
 * BK_TEST_REQUIRE_GPU=1. Call before printing any TAP line. */
BkContext bkt_open_device(void);
/* A context on the host device whatever BK_TEST_DEVICE says. */
BkContext bkt_open_host(void);
/* A context on CUDA device 0, with the same skip/fail rule as above. */
BkContext bkt_open_cuda(void);
/* The device type the context runs on, and its short name. */
BkDeviceType bkt_device_type(BkContext ctx);
const char *bkt_device_name(BkDeviceType type);
/* Queue 0 of the context (bails out if it cannot be had). */
BkQueue bkt_queue(BkContext ctx);
/* True when the program runs under valgrind or an emulator (the harness
 * sets BK_TEST_UNDER_VALGRIND or BK_TEST_RUNNER): a timing means nothing
 * there. */
bool bkt_emulated(void);

/* ---- Device buffers -------------------------------------------------- */
struct bkt_buffer {
    BkMemory memory;
    BkDeviceAddress address;
    uint64_t size;         /* as allocated: the request rounded up to 4 bytes */
};

/* Allocation, upload and download that bail out on failure: they are
 * set-up, not what the test checks. */
struct bkt_buffer bkt_alloc(BkContext ctx, uint64_t size);
void bkt_free(BkContext ctx, struct bkt_buffer *buf);
void bkt_upload(BkContext ctx, BkDeviceAddress dst, const void *src, uint64_t size);
void bkt_download(BkContext ctx, void *dst, BkDeviceAddress src, uint64_t size);

/* Record one command into a one-time command buffer, submit it to queue 0
 * and wait; a plan that needs a workspace is given a fresh one. Return the first failing result (recording or submission). */
BkResult bkt_fill(BkContext ctx, BkDeviceAddress dst, uint64_t size, uint32_t pattern);
BkResult bkt_run(BkContext ctx, BkPlan plan, uint32_t bindingCount,
                 const BkDeviceAddress *bindings);
/* The same on queue queueIndex, in a buffer of the given usage submitted
 * 'submits' times before the wait. */
BkResult bkt_run_on(BkContext ctx, uint32_t queueIndex, BkCommandBufferUsage usage,
                    uint32_t submits, BkPlan plan, uint32_t bindingCount,
                    const BkDeviceAddress *bindings);

/* A plan for one op info struct; the result of bkCreatePlan. */
BkResult bkt_create_plan(BkContext ctx, const void *opInfo, BkPlan *plan);

/* 32-bit pattern that is a NaN read as f64, f32, f16 or bf16: poison for
 * outputs, and the sentinel in the gaps of strided outputs. */
#define BKT_POISON 0x7FF87FF8u

/* ---- Expected results and messages ------------------------------------
 * BKT_EXPECT(call, code, needle, description...) runs call and emits one
 * TAP line: ok when it returns code and, for an error, when the message
 * callback received a message during the call, that message equals
 * bkGetLastErrorMessage(), and it contains needle (NULL: any). */
#define BKT_EXPECT(call, code, needle, ...)                              \
    do {                                                                 \
        bkt_expect_begin();                                              \
        BkResult bkt_result_ = (call);                                   \
        bkt_expect_end(bkt_result_, (code), (needle), __VA_ARGS__);      \
    } while (0)

void bkt_expect_begin(void);
bool bkt_expect_end(BkResult got, BkResult want, const char *needle, const char *fmt, ...)
    TAP_PRINTF(4, 5);
/* The needle to report for a call that gave r: the first of needles (a
 * NULL-terminated list) missing from the last message, else the first. */
const char *bkt_pick_needle(BkResult r, const char *const *needles);

/* bkCreatePlan(ctx, info) must give code and, on failure, a message with
 * every needle of the NULL-terminated list (the first missing one is the
 * one reported); one TAP line. A failed create must leave the handle
 * NULL: bkt_stray_plans() counts those that did not, for the test to
 * check once at its end. BKT_EXPECT_PLAN takes the needles as arguments. */
bool bkt_expect_plan(BkContext ctx, const void *info, BkResult code, const char *what,
                     const char *const *needles);
long bkt_stray_plans(void);
#define BKT_EXPECT_PLAN(ctx, info, code, what, ...) \
    bkt_expect_plan((ctx), (info), (code), (what), (const char *const[]){ __VA_ARGS__, NULL })

/* Installs the message callback BKT_EXPECT relies on (the bkt_open_*
 * functions do it); tests of the callback itself re-install it after. */
void bkt_capture_messages(void);
/* Messages the capture callback received since the process started. */
unsigned bkt_message_count(void);

/* ---- A plan's binding slots ------------------------------------------- */
/* What a slot of a plan must be (BkBindingProperties). */
struct bkt_slot_want {
    const char *name;
    uint64_t size;
    uint32_t alignment;
    bool written;
};
/* Whether plan's binding slots are exactly want[0..count) (names, sizes,
 * alignments, written flags; the first difference as a TAP comment under
 * what); *props receives the plan's properties. */
bool bkt_slots_match(BkPlan plan, const char *what, const struct bkt_slot_want *want,
                     uint32_t count, BkPlanProperties *props);
/* Addresses for want's slots in big, 256-byte aligned with a 256-byte gap
 * after each, 0 for a slot of no bytes; returns the bytes they span. */
uint64_t bkt_slot_addresses(const struct bkt_buffer *big, const struct bkt_slot_want *want,
                            uint32_t count, BkDeviceAddress *addr);

/* ---- Counting host allocator -------------------------------------------- */
struct bkt_alloc_stats {
    long allocations;      /* successful pfnAllocation calls */
    long frees;            /* pfnFree calls with a non-NULL pointer */
    long calls;            /* every pfnAllocation call, failed ones too */
    long fail_from;        /* calls numbered >= fail_from return NULL; -1: never */
    long bad_alignment;    /* calls whose alignment was not a power of two */
    long unknown_frees;    /* frees of pointers this allocator never returned */
    void *live[4096];      /* what is allocated now, to catch wrong frees */
};
/* Callbacks that count into stats (zeroed here, fail_from = -1). */
BkAllocationCallbacks bkt_counting_allocator(struct bkt_alloc_stats *stats);
long bkt_alloc_live(const struct bkt_alloc_stats *stats);
/* Makes a plan for op_info with an allocator that fails from its k-th
 * call, for every k below the calls one creation makes (*points of them):
 * true when each try gave BK_ERROR_OUT_OF_HOST_MEMORY and a null plan and
 * left nothing allocated, freed nothing foreign and asked for no bad
 * alignment. *made is false (and the result too) when no plan can be
 * made even with a working allocator; its message is then the last one. */
bool bkt_plan_allocation_failures_clean(BkContext ctx, const void *op_info, bool *made,
                                        long *points);

#endif /* BK_TEST_UTIL_H */
