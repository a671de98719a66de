#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time PyTorch's SDPA on attention over a KV cache (a decode step), the peer of bkbench's
attention-decode cases, and measure the device's read bandwidth in the same run.

Each case is q [B, H, Lq, D], k and v [B, Hkv, Lk, D] (grouped-query heads through
enable_gqa), random in [-2, 2), causal aligned bottom-right where asked (Lq > 1), timed with CUDA
events back to back on one stream: the median, 10th and 90th percentile in us over --repeats
runs after --warmup. The floor of a case is K and V read once at the read bandwidth measured
here (a sum over a 4 GiB tensor). Output: one line per case, and with --json a list of objects
(bkbench's decode rows carry the same case names).
"""
import argparse
import json
import math
import sys

from peers_timing import percentiles, read_bandwidth

CASES = [
    # B, H, Hkv, Lq, Lk, causal
    (8, 64, 8, 1, 8192, False), (8, 64, 8, 1, 32768, False), (1, 64, 8, 1, 131072, False),
    (32, 32, 8, 1, 4096, False), (8, 64, 8, 4, 32768, True), (8, 64, 8, 16, 8192, True),
    (8, 32, 32, 1, 8192, False), (1, 64, 8, 1, 4096, False), (8, 64, 8, 2, 32768, True),
    (8, 64, 8, 8, 16384, True),
]


def case_name(c, d, dtype):
    b, h, hkv, lq, lk, causal = c
    return "%s D%d B%d H%d/%d Lq%d Lk%d%s" % (dtype, d, b, h, hkv, lq, lk,
                                              " causal" if causal else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, action="append", choices=[64, 128])
    ap.add_argument("--dtype", action="append", choices=["f16", "bf16"])
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    bw = read_bandwidth(torch)
    print("read bandwidth %.0f GB/s" % (bw / 1e9))
    rows = []
    for dtype in args.dtype or ["f16", "bf16"]:
        tt = torch.float16 if dtype == "f16" else torch.bfloat16
        for d in args.d or [128]:
            for c in CASES:
                b, h, hkv, lq, lk, causal = c
                q = torch.rand(b, h, lq, d, device="cuda", dtype=tt) * 4 - 2
                k = torch.rand(b, hkv, lk, d, device="cuda", dtype=tt) * 4 - 2
                v = torch.rand(b, hkv, lk, d, device="cuda", dtype=tt) * 4 - 2
                mask = None
                if causal:  # bottom-right: query i sees keys j <= i + Lk - Lq
                    i = torch.arange(lq, device="cuda")[:, None]
                    j = torch.arange(lk, device="cuda")[None, :]
                    mask = j <= i + (lk - lq)
                scale = 1.0 / math.sqrt(d)
                fn = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale,
                                                            enable_gqa=True)
                med, p10, p90 = percentiles(torch, lambda i: fn(), 1, args.warmup, args.repeats)
                kv_bytes = 2 * b * hkv * lk * d * 2
                floor_us = kv_bytes / bw * 1e6
                row = {"case": case_name(c, d, dtype), "peer": "sdpa", "us": med,
                       "us_p10": p10, "us_p90": p90, "kv_bytes": kv_bytes,
                       "floor_us": floor_us, "read_bandwidth": bw}
                rows.append(row)
                print("%-40s sdpa %8.1f us [%8.1f, %8.1f]  floor %8.1f  %3.0f%% of floor" %
                      (row["case"], med, p10, p90, floor_us, 100 * floor_us / med))
                sys.stdout.flush()
                del q, k, v, mask
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
