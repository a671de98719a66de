#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time one Llama-3-70B decoder layer as a decode step in PyTorch, the peer of bkbench's
decode-step cases.

The step is bkbench's: W4A16 qkv (8192 -> 10240), attention over the KV cache (H 64, Hkv 8,
D 128, Lq 1), W4A16 o (8192 -> 8192), W4A16 gate-up (8192 -> 57344), SwiGLU, W4A16 down
(28672 -> 8192); bf16, batch M = 1, 8, 16, 32 and 64, KV lengths 4096 and 32768. The linears are
torch.ops.aten._weight_int4pack_mm on weights packed by _convert_weight_to_int4pack (random
int4 values, groups of 128), the attention F.scaled_dot_product_attention(..., enable_gqa=True)
with q taken from the qkv output, the activation F.silu(gate) * up. Each layer has its own
weights and KV cache, and enough layers rotate that their bytes are twice the L2 cache. Steps
are timed with CUDA events back to back on one stream: the median, 10th and 90th percentile in
us over --repeats runs after --warmup, the step and each op alone. The floor of a step is its
int4 weights, scales, K and V read once at the read bandwidth measured here (a sum over a
4 GiB tensor). Output: one line per case, and with --json a list of objects whose "case"
names are bkbench's ("bf16 M8 KV4096").
"""
import argparse
import json
import sys

from peers_timing import percentiles, read_bandwidth

HIDDEN, HEADS, KV_HEADS, D, FFN, GROUP = 8192, 64, 8, 128, 28672, 128
MS = [1, 8, 16, 32, 64]
KVS = [4096, 32768]
# The linears' weights [K, N], in the order of the step.
LINEARS = [("qkv", HIDDEN, (HEADS + 2 * KV_HEADS) * D), ("o", HEADS * D, HIDDEN),
           ("gate-up", HIDDEN, 2 * FFN), ("down", FFN, HIDDEN)]


def case_name(m, kv):
    return "bf16 M%d KV%d" % (m, kv)


def int4_weight(torch, k, n):
    """A random int4 weight [K, N] packed for _weight_int4pack_mm, and its scales and zeros."""
    q = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device="cuda")
    packed = torch.ops.aten._convert_weight_to_int4pack(q, 8)
    scales = (torch.rand(k // GROUP, n, 2, device="cuda") * 0.02).to(torch.bfloat16)
    return packed, scales


def weight_bytes(k, n):
    """int4 values and bf16 group scales, as bkbench counts them (no zeros)."""
    return k * n // 2 + (k // GROUP) * n * 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, action="append", choices=MS)
    ap.add_argument("--kv", type=int, action="append", choices=KVS)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    bw = read_bandwidth(torch)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    print("read bandwidth %.0f GB/s, L2 %.0f MiB" % (bw / 1e9, l2 / 2.0**20))
    mm = torch.ops.aten._weight_int4pack_mm
    rows = []
    for kv in args.kv or KVS:
        for m in args.m or MS:
            w_bytes = sum(weight_bytes(k, n) for _, k, n in LINEARS)
            kv_bytes = 2 * m * KV_HEADS * kv * D * 2
            layers = max(2, -(-2 * l2 // (w_bytes + kv_bytes)))
            weights = [{name: int4_weight(torch, k, n) for name, k, n in LINEARS}
                       for _ in range(layers)]
            cache = [(torch.rand(m, KV_HEADS, kv, D, device="cuda", dtype=torch.bfloat16) * 4 - 2,
                      torch.rand(m, KV_HEADS, kv, D, device="cuda", dtype=torch.bfloat16) * 4 - 2)
                     for _ in range(layers)]
            x = torch.rand(m, HIDDEN, device="cuda", dtype=torch.bfloat16) * 4 - 2
            act = {}

            def linear(name, i, a):
                packed, scales = weights[i][name]
                return mm(a.contiguous(), packed, GROUP, scales)

            def qkv(i):
                act["qkv"] = linear("qkv", i, x)

            def attention(i):
                q = act["qkv"][:, :HEADS * D].view(m, HEADS, 1, D)
                k, v = cache[i]
                act["y"] = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

            def o(i):
                act["o"] = linear("o", i, act["y"].reshape(m, HEADS * D))

            def gate_up(i):
                act["gu"] = linear("gate-up", i, act["o"])

            def swiglu(i):
                act["h"] = F.silu(act["gu"][:, :FFN]) * act["gu"][:, FFN:]

            def down(i):
                act["out"] = linear("down", i, act["h"])

            ops = [("qkv", qkv), ("attention", attention), ("o", o), ("gate-up", gate_up),
                   ("swiglu", swiglu), ("down", down)]

            def step(i):
                for _, fn in ops:
                    fn(i)

            step(0)
            med, p10, p90 = percentiles(torch, step, layers, args.warmup, args.repeats)
            floor_us = (w_bytes + kv_bytes) / bw * 1e6
            row = {"case": case_name(m, kv), "peer": "torch", "dtype": "bf16", "m": m, "kv": kv,
                   "us": med, "us_p10": p10, "us_p90": p90, "layers": layers,
                   "weight_bytes": w_bytes, "kv_bytes": kv_bytes, "floor_us": floor_us,
                   "read_bandwidth": bw, "ops": {}}
            for name, fn in ops:
                row["ops"][name] = percentiles(torch, fn, layers, args.warmup, args.repeats)[0]
            rows.append(row)
            print("%-18s torch %9.1f us [%9.1f, %9.1f]  floor %8.1f  %3.0f%% of floor  %s" %
                  (row["case"], med, p10, p90, floor_us, 100 * floor_us / med,
                   " ".join("%s %.1f" % kv_ for kv_ in row["ops"].items())))
            sys.stdout.flush()
            del weights, cache, x, act
            torch.cuda.empty_cache()
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
