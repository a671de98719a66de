#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time PyTorch's Tensor.to() on bkbench's conversion cases, their peer.

The cases are bkbench's --op convert: a row-major [rows, 4096] tensor converted f32 -> bf16,
bf16 -> f32, f32 -> f16 and f16 -> f32, and f32 -> bf16 once more from a view into a wider
[rows, 8192] buffer (row stride 8192), each into a new contiguous tensor. rows makes an f32
tensor of --size-mib MiB (256, bkbench's GPU default, gives 16384). Inputs hold random values;
the runs rotate among as many input sets as make twice --l2-mib, at least two, so that no run
finds its input in the L2 cache. Runs are timed with CUDA events back to back on one stream:
the median, 10th and 90th percentile in us over --repeats runs after --warmup. Bytes are
bkbench's: the input read once and the output written once. Output: one line per case, and
with --json a list of objects named as bkbench's "convert" results (op, from, to, shape,
inputStrides), with peer, bytes, us, usP10, usP90 and gbPerS.
"""
import argparse
import json
import sys

from peers_timing import percentiles

COLUMNS = 4096
# (from, to, row stride factor: 0 contiguous, 2 a view into [rows, 8192])
CASES = [("f32", "bf16", 0), ("bf16", "f32", 0), ("f32", "f16", 0), ("f16", "f32", 0),
         ("f32", "bf16", 2)]
SIZES = {"f32": 4, "f16": 2, "bf16": 2}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=float, default=256.0)
    ap.add_argument("--l2-mib", type=float, default=50.0)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    import torch
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    rows = int(args.size_mib * 1048576) // (COLUMNS * 4)
    if rows < 1:
        sys.exit("convert-peers: --size-mib holds no row of %d f32 values" % COLUMNS)
    out = []
    print("peer        from  to    shape              us      p10      p90     GB/s")
    for src, dst, factor in CASES:
        width = factor * COLUMNS if factor else COLUMNS
        in_bytes = rows * width * SIZES[src]
        sets = max(2, int(2 * args.l2_mib * 1048576 // in_bytes) + 1)
        bufs = [(torch.rand(rows, width, device="cuda") * 2 - 1).to(dtypes[src])
                for _ in range(sets)]
        views = [b[:, :COLUMNS] for b in bufs]
        med, p10, p90 = percentiles(torch, lambda i: views[i].to(dtypes[dst]), sets,
                                    args.warmup, args.repeats)
        nbytes = rows * COLUMNS * (SIZES[src] + SIZES[dst])
        shape = "%dx%d%s" % (rows, COLUMNS, " rs=%d" % width if factor else "")
        print("torch .to() %-5s %-5s %-17s %8.1f %8.1f %8.1f %8.1f" %
              (src, dst, shape, med, p10, p90, nbytes / (med * 1e-6) / 1e9))
        out.append({"op": "convert", "from": src, "to": dst, "shape": [rows, COLUMNS],
                    "inputStrides": [width, 1] if factor else None, "peer": "torch .to()",
                    "bytes": nbytes, "us": med, "usP10": p10, "usP90": p90,
                    "gbPerS": nbytes / (med * 1e-6) / 1e9})
        del bufs, views
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
