#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time PyTorch's SDPA and FlashAttention-4 on attention over a KV cache (a decode step), the
peers of bkbench's attention-decode cases, and measure the device's read bandwidth in the same
run.

The cases are bkbench's GPU decode cases with the same names: contiguous caches (CASES), and
paged caches (PAGED_CASES, the contiguous name plus " page<N>", and " NHD" where bkbench stores
its pool token by token), each at every --d (64, 128) and --dtype, and the cases of a head
size of their own (HEAD_SIZE_CASES: 256 and 96, those named by --d where it is given).
A contiguous case is q [B, H, Lq, D], k and v [B, Hkv, Lk, D], random in [-2, 2). A paged case
has a pool of B * ceil(Lk / page) pages of page keys each, the pages shuffled over the pool
(torch.randperm) into a block table [B, pages a sequence] (int32), every sequence Lk keys long.
Causal is aligned bottom-right where asked (query i sees keys j <= i + Lk - Lq), the scale
1 / sqrt(D). The peers (--peer, default both):
  sdpa   torch.nn.functional.scaled_dot_product_attention with enable_gqa, causal through a
         boolean mask; a paged case reads its pool's pages gathered into a contiguous cache
         (SDPA takes no block table), the same keys in the same order;
  fa4    FlashAttention-4 (flash_attn.cute, the CuTe DSL package) with its defaults (grouped
         heads packed into the query tile, pack_gqa; num_splits 1, the only value it takes on
         sm_90): flash_attn_func(q, k, v, softmax_scale, causal) on [B, Lq, H, D] and
         [B, Lk, Hkv, D] copies of a contiguous case, and flash_attn_varlen_func(q, k, v,
         seqused_k, max_seqlen_k, page_table, softmax_scale, causal) on a paged case's own
         pool k, v [pages, page, Hkv, D] with its block table and lengths. Where it does not
         import, one line says why and SDPA runs alone.
FA4 compiles a kernel at the first call of each configuration (seconds to tens of seconds;
FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1 keeps the compiled kernels on disk across runs), so
each case has one untimed call first; its output is checked against SDPA's on the same keys
(a contiguous gather of the pages for a paged case): a maximum absolute difference above 2e-2
prints a warning and the case is timed all the same.

Each peer is timed with CUDA events back to back on one stream: the median, 10th and 90th
percentile in us over --repeats runs after --warmup (a run's time includes the host's work to
launch it where that is longer than the kernel). The floor of a case is K and V read once at
the read bandwidth measured here (a sum over a 4 GiB tensor). Output: one line per case and
peer, and with --json a list of objects {case, peer, us, us_p10, us_p90, kv_bytes, floor_us,
read_bandwidth}, rewritten after each case (bkbench's decode rows carry the same case names).

  python3 bench/attention-decode-peers.py [--d 128] [--dtype bf16] [--peer sdpa|fa4]
      [--warmup N] [--repeats N] [--json FILE]
"""
import argparse
import json
import math
import sys
import time

from peers_timing import percentiles, read_bandwidth

CASES = [
    # B, H, Hkv, Lq, Lk, causal
    (8, 64, 8, 1, 8192, False), (8, 64, 8, 1, 32768, False), (1, 64, 8, 1, 131072, False),
    (32, 32, 8, 1, 4096, False), (8, 64, 8, 4, 32768, True), (8, 64, 8, 16, 8192, True),
    (8, 32, 32, 1, 8192, False), (1, 64, 8, 1, 4096, False), (8, 64, 8, 2, 32768, True),
    (8, 64, 8, 8, 16384, True), (1, 64, 8, 1, 32768, False),
]
# bkbench's paged caches (tools/bkbench/bench_decode.c): vLLM's, FlashInfer's and
# FlashAttention's page sizes.
PAGED_CASES = [
    # B, H, Hkv, Lq, Lk, causal, page
    (8, 64, 8, 1, 32768, False, 16), (8, 64, 8, 1, 32768, False, 64),
    (8, 64, 8, 1, 32768, False, 256), (32, 32, 8, 1, 4096, False, 16),
    (8, 64, 8, 4, 32768, True, 64), (8, 64, 8, 8, 16384, True, 64),
    (8, 64, 8, 16, 8192, True, 64),
    # bkbench's pools stored token by token ([pages, page, Hkv, D], " NHD"), as this script's
    # own pools always are: the same peer times under bkbench's names.
    (8, 64, 8, 1, 32768, False, 16, True), (32, 32, 8, 1, 4096, False, 16, True),
    (8, 64, 8, 4, 32768, True, 64, True),
]
# bkbench's cases of a head size of their own: Gemma-2's 256 (16 heads over 8), Phi-3's 96.
HEAD_SIZE_CASES = [
    # B, H, Hkv, Lq, Lk, causal, D
    (8, 16, 8, 1, 8192, False, 256), (8, 32, 32, 1, 4096, False, 96),
]
CHECK_TOLERANCE = 2e-2


def cases(ds):
    """(case, D): each contiguous and paged case at each D of ds (default 128), then the cases
    of a head size of their own whose D is in ds (all of them by default)."""
    for d in [x for x in ds if x in (64, 128)] if ds else [128]:
        for c in [c + (0,) for c in CASES] + PAGED_CASES:
            yield c, d
    for c in HEAD_SIZE_CASES:
        if not ds or c[6] in ds:
            yield c[:6] + (0,), c[6]


def case_name(c, d, dtype):
    b, h, hkv, lq, lk, causal = c[:6]
    page = c[6] if len(c) > 6 else 0
    by_token = len(c) > 7 and c[7]
    return "%s D%d B%d H%d/%d Lq%d Lk%d%s%s%s" % (dtype, d, b, h, hkv, lq, lk,
                                                  " causal" if causal else "",
                                                  " page%d" % page if page else "",
                                                  " NHD" if by_token else "")


def short(err):
    text = "%s: %s" % (type(err).__name__, str(err).strip().splitlines()[0] if str(err) else "")
    return text[:300]


def import_fa4():
    """FlashAttention-4's (flash_attn_func, flash_attn_varlen_func) and None, or (None, why)."""
    try:
        from flash_attn.cute import flash_attn_func, flash_attn_varlen_func
        return (flash_attn_func, flash_attn_varlen_func), None
    except Exception as e:                           # not installed, or built for another torch
        return None, "FlashAttention-4 (flash_attn.cute) not installed: " + short(e)


def first(y):
    """The output of a call that may also return the log-sum-exp."""
    return y[0] if isinstance(y, tuple) else y


def make_case(torch, c, d, tt):
    """The case's tensors: q [B, H, Lq, D], k and v [B, Hkv, Lk, D] (a paged case's pages
    gathered in its block table's order), the causal mask or None, and for a paged case the
    pool k, v [pages, page, Hkv, D], the block table [B, pages a sequence] and the lengths [B]
    (else Nones)."""
    b, h, hkv, lq, lk, causal = c[:6]
    page = c[6] if len(c) > 6 else 0
    q = torch.rand(b, h, lq, d, device="cuda", dtype=tt) * 4 - 2
    pool = None
    if page:
        per_seq = -(-lk // page)
        pages = b * per_seq
        k_pool = torch.rand(pages, page, hkv, d, device="cuda", dtype=tt) * 4 - 2
        v_pool = torch.rand(pages, page, hkv, d, device="cuda", dtype=tt) * 4 - 2
        table = torch.randperm(pages, device="cuda").to(torch.int32).view(b, per_seq)
        lengths = torch.full((b,), lk, device="cuda", dtype=torch.int32)
        rows = table.flatten().long()

        def gather(pool_t):
            return (pool_t[rows].view(b, per_seq * page, hkv, d)[:, :lk]
                    .transpose(1, 2).contiguous())
        k, v = gather(k_pool), gather(v_pool)
        pool = (k_pool, v_pool, table, lengths)
    else:
        k = torch.rand(b, hkv, lk, d, device="cuda", dtype=tt) * 4 - 2
        v = torch.rand(b, hkv, lk, d, device="cuda", dtype=tt) * 4 - 2
    mask = None
    if causal:  # bottom-right: query i sees keys j <= i + Lk - Lq
        i = torch.arange(lq, device="cuda")[:, None]
        j = torch.arange(lk, device="cuda")[None, :]
        mask = j <= i + (lk - lq)
    return q, k, v, mask, pool


def fa4_call(torch, fa4, c, d, q, k, v, pool):
    """A function that runs FA4 on the case ([B, Lq, H, D] out), on layout copies it holds."""
    flash_attn_func, flash_attn_varlen_func = fa4
    lk, causal = c[4], c[5]
    scale = 1.0 / math.sqrt(d)
    q4 = q.transpose(1, 2).contiguous()                  # [B, Lq, H, D]
    if pool is not None:
        k_pool, v_pool, table, lengths = pool
        return lambda: first(flash_attn_varlen_func(
            q4, k_pool, v_pool, seqused_k=lengths, max_seqlen_k=lk, page_table=table,
            softmax_scale=scale, causal=causal))
    k4 = k.transpose(1, 2).contiguous()                  # [B, Lk, Hkv, D]
    v4 = v.transpose(1, 2).contiguous()
    return lambda: first(flash_attn_func(q4, k4, v4, softmax_scale=scale, causal=causal))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, action="append", choices=[64, 96, 128, 256])
    ap.add_argument("--dtype", action="append", choices=["f16", "bf16"])
    ap.add_argument("--peer", action="append", choices=["sdpa", "fa4"])
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    peers = args.peer or ["sdpa", "fa4"]
    import torch
    import torch.nn.functional as F
    fa4 = None
    if "fa4" in peers:
        fa4, why = import_fa4()
        if fa4 is None:
            print("fa4: %s; %s" % (why, "SDPA only" if "sdpa" in peers else "nothing to time"))
            if "sdpa" not in peers:
                sys.exit(1)
    torch.manual_seed(0)
    bw = read_bandwidth(torch)
    print("read bandwidth %.0f GB/s" % (bw / 1e9))
    sys.stdout.flush()
    rows = []
    # FA4's configurations (one compiled kernel each) that ran, and the error of those that
    # failed at their first case: the later cases of a failed one are not tried again.
    fa4_ran, fa4_failed = set(), {}

    def emit(name, peer, med, p10, p90, kv_bytes, note=""):
        floor_us = kv_bytes / bw * 1e6
        rows.append({"case": name, "peer": peer, "us": med, "us_p10": p10, "us_p90": p90,
                     "kv_bytes": kv_bytes, "floor_us": floor_us, "read_bandwidth": bw})
        print("%-40s %-4s %8.1f us [%8.1f, %8.1f]  floor %8.1f  %3.0f%% of floor%s" %
              (name, peer, med, p10, p90, floor_us, 100 * floor_us / med, note))
        sys.stdout.flush()

    for dtype in args.dtype or ["f16", "bf16"]:
        tt = torch.float16 if dtype == "f16" else torch.bfloat16
        for c, d in cases(args.d):
            b, h, hkv, lq, lk, causal, page = c[:7]
            name = case_name(c, d, dtype)
            q, k, v, mask, pool = make_case(torch, c, d, tt)
            scale = 1.0 / math.sqrt(d)
            sdpa = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                          scale=scale, enable_gqa=True)
            kv_bytes = 2 * b * hkv * lk * d * 2
            if "sdpa" in peers:
                med, p10, p90 = percentiles(torch, lambda i: sdpa(), 1, args.warmup,
                                            args.repeats)
                emit(name, "sdpa", med, p10, p90, kv_bytes,
                     "  (contiguous gather)" if page else "")
            fn = None
            config = (dtype, d, page > 0, causal, h == hkv)
            if fa4 is not None and config in fa4_failed:
                print("%-40s fa4  n/a: %s" % (name, fa4_failed[config]))
            elif fa4 is not None:
                try:
                    fn = fa4_call(torch, fa4, c, d, q, k, v, pool)
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    y = fn()                  # compiles at a configuration's first call
                    torch.cuda.synchronize()
                    first_s = time.perf_counter() - t0
                    fa4_ran.add(config)
                    ref = sdpa()
                    diff = (y.transpose(1, 2).float() - ref.float()).abs().max().item()
                    del y, ref
                    if not diff <= CHECK_TOLERANCE:   # NaN fails too
                        print("%-40s fa4  WARNING: max |fa4 - sdpa| = %.3g > %g" %
                              (name, diff, CHECK_TOLERANCE))
                    med, p10, p90 = percentiles(torch, lambda i: fn(), 1, args.warmup,
                                                args.repeats)
                    note = "  max|diff| %.1e" % diff
                    if first_s >= 1.0:
                        note += ", first call %.1f s" % first_s
                    emit(name, "fa4", med, p10, p90, kv_bytes, note)
                except Exception as e:
                    if config not in fa4_ran:
                        fa4_failed[config] = short(e)
                    print("%-40s fa4  n/a: %s" % (name, short(e)))
                    sys.stdout.flush()
            del q, k, v, mask, pool, sdpa, fn
            torch.cuda.empty_cache()
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
