#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch peers of libbk's block-sparse attention (bkbench --op attention).

Times, on a CUDA device, forward and backward:
  sdpa         torch.nn.functional.scaled_dot_product_attention, dense, on the
               "full" cases, and with is_causal=True beside the "window" cases
               (a reference: dense causal attention does more work than the
               window, but it is what a model without block sparsity runs);
  flex         torch.nn.attention.flex_attention compiled with torch.compile
               (dynamic=False), its BlockMask the same block pattern as
               bkbench's with BLOCK_SIZE = (blockQ, blockK): active blocks the
               causal diagonal cuts are partial blocks (a causal mask_mod runs
               in them), the others full blocks. The BlockMask is made from the
               blocks directly (BlockMask.from_kv_blocks): create_block_mask
               evaluates a mask function on every (head, query, key), a compile
               per pattern at 32 x 8192^2; where that is small (--quick) it runs
               too and must give the same blocks ("blockMaskCheck");
  fa4          FlashAttention-4 (flash_attn.cute.flash_attn_func on [B, L, H, D]
               copies), dense on the "full" cases and causal ("fa4-c") beside
               the "window" cases, where it imports (else rows "n/a" that say
               so; --no-fa4 leaves it out);
  fa4-sparse   the same with its own block sparsity on the random patterns
               (50%, 25%, 10%): every active block a full block of
               block_sparse_tensors, BLOCK_SIZE = (blockQ, blockK), and the
               transposed lists (each key block's query blocks) for the
               backward's block_sparse_tensors_bwd; a block size its tiles do
               not take is "n/a" with its message.
The shapes, patterns and dtypes are bkbench's GPU cases (B = 2, L = 8192,
H * D = 2048, D = 64 and 128, blocks 64 and 128, f16 and bf16; the patterns
full, 50%, 25%, 10% and window; bkbench's LIST form of the 10% pattern is the
same blocks, so it has no rows of its own here). flex runs its own kernel
tiles first and, where they do not divide the block (they are 128 wide on
the H100), tiles of the block's size through kernel_options.

The patterns are made exactly as tools/attention_op.c makes them (splitmix64
seeded with 0xB10C5EED + N, partial Fisher-Yates per block row, the diagonal
block always kept; the window an eighth of L plus the sink column, causal);
each result carries the FNV-1a hash of its mask, which bkbench's JSON also
has ("patternHash"), so a comparison can check that both ran the same blocks.

TFLOP/s count the active blocks only, as bkbench does: forward 4 * blockQ *
blockK * D per active block (summed over every batch and head), backward 2.5
times that; with the causal flag a block the diagonal cuts counts as a whole
one (sdpa causal is counted as the causal blocks of the case's block size).

Each time is the median of --repeats runs after --warmup, each run between
two CUDA events; the backward times torch.autograd.grad of a retained graph
(the forward is not in it). A configuration FlexAttention cannot run (an
error while compiling or running, e.g. a block size its kernels do not
tile) is reported "n/a" with the reason, never fatal.

With --sweep it runs bkbench's head-size sweep instead: D = 32, 64, 80, 96,
128, 160, 192, 256 (Dv = D) and D = 192 with Dv = 128, full and 25% with
blocks of 128, B = 2, L = 4096, H = 2048 / D; TFLOP/s count
2 * blockQ * blockK * (D + Dv) per active block forward.

With --varlen it times the peers of bkbench's packed variable-length cases
("varlen", and "varlen-c" causal): the 16 sequences of VARLEN_LENGTHS (512 to
8192 tokens, 65536 in all; with --quick bkbench's host list, 40, 8, 64, 24),
H * D = 2048, D = 64 and 128, f16 and bf16:
  sdpa-loop    one scaled_dot_product_attention call per sequence on its rows
               of the packed q, k, v [1, H, L, D], as a user without
               variable-length support runs them (SDPA takes no cu_seqlens);
               the backward is one torch.autograd.grad over every sequence's
               output into the packed tensors' gradients;
  fa-varlen    flash_attn.flash_attn_varlen_func on q, k, v [L, H, D] with the
               sequences' offsets (cu_seqlens), where flash_attn imports (else
               a row "n/a" that says so).
TFLOP/s count each sequence's own blocks at bkbench's block size (128; 32
with --quick), as bkbench does: ceil(n / blk)^2 blocks a sequence of n tokens,
causal ceil(n / blk) * (ceil(n / blk) + 1) / 2, summed over the sequences and
heads, 2 * blk * blk * (D + Dv) each forward, 2.5 times that backward.
--varlen also times the peers of bkbench's "causal" row beside them, the
dense causal case of the main shapes (B = 2, L = 8192, blocks of 128), as
--train does below.

With --train it times the peers of bkbench's training shapes: many short
sequences, B = 32 at L = 512 and B = 16 at L = 1024 (with --quick bkbench's
B = 4 at L = 64 and B = 2 at L = 128), H * D = 2048, D = 64 and 128, f16 and
bf16, dense ("full") and causal ("causal"):
  sdpa         scaled_dot_product_attention, is_causal=True for "causal";
  fa4          FlashAttention-4, flash_attn.cute.flash_attn_func on [B, L, H, D]
               copies, causal for "causal", where it imports (else a row "n/a"
               that says so).
TFLOP/s count bkbench's blocks of 128 (16 with --quick): every block, causal
the blocks the diagonal cuts as whole ones, nb * (nb + 1) / 2 of nb * nb a
batch entry and head.

With --dtype f32 it times SDPA on bkbench's F32 cases instead ("f32"):
dense ("full") at D = 64, 128 and 256 and causal ("causal") at D = 128,
B = 2, L = 4096, H * D = 2048 (with --quick bkbench's: B = 1, L = 32, H * D
= 256, blocks of 16), F32 inputs with TF32 off (PyTorch picks its
memory-efficient backend, the one that takes F32); TFLOP/s count every
block of 128, causal the blocks the diagonal cuts as whole ones. flex does
not run them.

With --append beside --json FILE, the results already in FILE stay and this
run's follow them (each run's settings in "runs"): the main cases, --sweep
and --train of one device run then make one report.

  python3 bench/attention-peers.py [--quick] [--sweep] [--json FILE [--append]] [--dtype bf16]
      [--d 64] [--block 128] [--pattern 10%] [--direction fwd|bwd|both]
      [--no-sdpa] [--no-flex] [--no-fa4] [--warmup N] [--repeats N]
  python3 bench/attention-peers.py --varlen [--quick] [--json FILE] [--dtype bf16]
      [--d 128] [--pattern varlen-c] [--direction fwd|bwd|both] [--warmup N] [--repeats N]
  python3 bench/attention-peers.py --train [--quick] [--json FILE] [--dtype bf16]
      [--d 128] [--pattern causal] [--direction fwd|bwd|both] [--no-sdpa] [--warmup N]
      [--repeats N]
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

SEED = 0xB10C5EED
MASK64 = (1 << 64) - 1
WINDOW_DIVISOR = 8                 # the window is L / 8 tokens, 1024 at L = 8192
PATTERNS = ["full", "50%", "25%", "10%", "window"]
# "causal": the dense causal case of the main shapes beside the packed ones.
VARLEN_PATTERNS = ["causal", "varlen", "varlen-c"]
TRAIN_PATTERNS = ["full", "causal"]
# bkbench's training shapes, (B, L): on a GPU with blocks of 128, and with
# --quick with blocks of 16 (tools/bkbench/bench_attention.c).
TRAIN_SHAPES = [(32, 512), (16, 1024)]
TRAIN_QUICK_SHAPES = [(4, 64), (2, 128)]
# bkbench's F32 cases (tools/bkbench/bench_attention.c, f32_shapes): (D,
# pattern) at B = 2, L = 4096, H * D = 2048, blocks of 128 (--quick: B = 1,
# L = 32, H * D = 256, blocks of 16).
F32_SHAPES = [(64, "full"), (128, "full"), (256, "full"), (128, "causal")]
# bkbench's packed sequences (tools/bkbench/bench_varlen.c): on a GPU, and
# on the host and with --quick.
VARLEN_LENGTHS = [8192, 512, 4096, 2048, 8192, 1024, 6144, 3072,
                  8192, 512, 4096, 7168, 2048, 1536, 8192, 512]
VARLEN_QUICK_LENGTHS = [40, 8, 64, 24]


# ---- Patterns, as tools/attention_op.c makes them ----------------------------

def splitmix64(state):
    """Returns (new state, next value)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def random_pattern(heads, nbq, nbk, bq, bk, percent):
    """mask [heads, nbq, nbk] as bytes: each block row keeps max(1, round(
    percent of nbk)) blocks, its diagonal one and the rest drawn at random."""
    keep = min(max((percent * nbk + 50) // 100, 1), nbk)
    mask = bytearray(heads * nbq * nbk)
    state = SEED + percent
    for ph in range(heads):
        for i in range(nbq):
            row = (ph * nbq + i) * nbk
            j0 = min(nbk - 1, i * bq // bk)
            mask[row + j0] = 1
            cand = [j for j in range(nbk) if j != j0]
            n = len(cand)
            for t in range(keep - 1):
                state, r = splitmix64(state)
                r = t + r % (n - t)
                cand[t], cand[r] = cand[r], cand[t]
                mask[row + cand[t]] = 1
    return mask


def window_pattern(lq, lk, bq, bk, window):
    """mask [1, nbq, nbk]: the sink column and the blocks holding a query q
    and a key k with 0 <= q - k < window (q aligned bottom-right)."""
    nbq, nbk = -(-lq // bq), -(-lk // bk)
    off = lk - lq
    mask = bytearray(nbq * nbk)
    for i in range(nbq):
        q_lo, q_hi = i * bq + off, min((i + 1) * bq, lq) - 1 + off
        for j in range(nbk):
            k_lo, k_hi = j * bk, min((j + 1) * bk, lk) - 1
            mask[i * nbk + j] = 1 if j == 0 or (q_hi - k_lo >= 0 and q_lo - k_hi < window) else 0
    return mask


def fnv1a(mask):
    h = 0xCBF29CE484222325
    for byte in mask:
        h ^= 1 if byte else 0
        h = (h * 0x100000001B3) & MASK64
    return h


def active_blocks(case, mask, heads_in_mask):
    """Active blocks over every batch and head; with causal, a block counts
    when one of its (query, key) pairs is visible."""
    nbq, nbk, bq, bk = case["nbq"], case["nbk"], case["block"], case["block"]
    l, off = case["l"], 0
    total = 0
    for ph in range(heads_in_mask):
        for i in range(nbq):
            last_q = min((i + 1) * bq, l) - 1
            for j in range(nbk):
                if case["causal"] and j * bk > last_q + off:
                    break
                if mask is None or mask[(ph * nbq + i) * nbk + j]:
                    total += 1
    return total * case["batch"] * (case["heads"] // heads_in_mask)


def causal_blocks(case):
    """The causal pattern's blocks at the case's block size (sdpa causal)."""
    return active_blocks(dict(case, causal=True), None, 1)


# ---- Cases --------------------------------------------------------------------

# The head-size sweep, as bkbench runs it (tools/bkbench/bench_attention.c):
# (D, Dv) pairs, full and 25% with blocks of 128, B = 2, L = 4096, H = 2048 / D.
SWEEP_HEADS = [(32, 32), (64, 64), (80, 80), (96, 96), (128, 128), (160, 160), (192, 192),
               (256, 256), (192, 128)]


def case_of(args, dtype, d, dv, block, pattern, seq, batch=None):
    batch = batch or args.batch
    heads = max(args.width // d, 1)
    nb = -(-seq // block)
    case = dict(dtype=dtype, batch=batch, heads=heads, l=seq, d=d, dv=dv,
                block=block, pattern=pattern, causal=pattern in ("window", "causal"),
                nbq=nb, nbk=nb, window=None, mask=None, mask_heads=1)
    case["shape"] = "%dx%dx%dx%d" % (batch, heads, seq, d) + ("" if dv == d else "/%d" % dv)
    return case


def make_cases(args):
    """bkbench's cases: with --sweep its head-size sweep (blocks of 128), else every D, block
    and pattern; each for every dtype."""
    if args.dtypes == ["f32"]:
        seq, block, width = (32, 16, 256) if args.quick else (4096, 128, args.width)
        f32_args = argparse.Namespace(**dict(vars(args), width=width))
        batch = 1 if args.quick else 2
        return [case_of(f32_args, "f32", d, d, block, pattern, seq, batch)
                for d, pattern in F32_SHAPES if not args.d or d in args.d]
    if args.sweep:
        seq = args.seq if args.seq_given or args.quick else 4096
        shapes = [(d, dv, 128, pattern) for d, dv in SWEEP_HEADS if not args.d or d in args.d
                  for pattern in args.pattern or ["full", "25%"]]
    else:
        seq = args.seq
        shapes = [(d, d, block, pattern) for d in args.ds for block in args.blocks
                  for pattern in args.patterns]
    return [case_of(args, dtype, d, dv, block, pattern, seq)
            for dtype in args.dtypes for d, dv, block, pattern in shapes]


def build_pattern(case):
    """The case's mask (None for full and causal), its heads, hash and active
    blocks."""
    p = case["pattern"]
    if p == "window":
        case["window"] = case["l"] // WINDOW_DIVISOR
        case["mask"] = window_pattern(case["l"], case["l"], case["block"], case["block"],
                                      case["window"])
    elif p not in ("full", "causal"):
        case["mask_heads"] = case["heads"]          # one random pattern per head
        case["mask"] = random_pattern(case["heads"], case["nbq"], case["nbk"], case["block"],
                                      case["block"], int(p.rstrip("%")))
    case["hash"] = None if case["mask"] is None else "%016x" % fnv1a(case["mask"])
    case["active"] = active_blocks(case, case["mask"], case["mask_heads"])
    case["total"] = case["batch"] * case["heads"] * case["nbq"] * case["nbk"]


def flops(case, active, backward):
    f = 2.0 * case["block"] * case["block"] * (case["d"] + case["dv"]) * active
    return 2.5 * f if backward else f


# ---- Packed sequences (--varlen) ----------------------------------------------------

def varlen_case(args, dtype, d, pattern):
    """One of bkbench's packed cases: its blocks are each sequence's own at
    bkbench's block size, summed over the sequences and heads."""
    lengths = VARLEN_QUICK_LENGTHS if args.quick else VARLEN_LENGTHS
    block = 32 if args.quick else 128
    heads = max(args.width // d, 1)
    causal = pattern == "varlen-c"
    tokens = sum(lengths)
    nbs = [-(-n // block) for n in lengths]
    return dict(dtype=dtype, batch=1, heads=heads, l=tokens, d=d, dv=d, block=block,
                pattern=pattern, causal=causal, window=None, hash=None, lengths=lengths,
                active=heads * sum(nb * (nb + 1) // 2 if causal else nb * nb for nb in nbs),
                total=heads * sum(nb * nb for nb in nbs),
                shape="1x%dx%dx%d" % (heads, tokens, d))


def varlen_offsets(lengths):
    """0, then each sequence's end: cu_seqlens."""
    out = [0]
    for n in lengths:
        out.append(out[-1] + n)
    return out


def time_outputs(torch, forward, inputs3, out_grads, want, warmup, repeats):
    """{'fwd': us, 'bwd': us}: forward(q, k, v) returns a list of outputs,
    out_grads(outputs) their gradients; the backward is one autograd.grad
    over all of them into q, k and v."""
    q, k, v = inputs3
    out = {}
    if "fwd" in want:
        with torch.no_grad():
            out["fwd"] = median_us(torch, lambda: forward(q, k, v), warmup, repeats)
    if "bwd" in want:
        qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
        ys = forward(qg, kg, vg)
        dys = out_grads(ys)
        out["bwd"] = median_us(
            torch, lambda: torch.autograd.grad(ys, (qg, kg, vg), dys, retain_graph=True),
            warmup, repeats)
        del ys, qg, kg, vg
    return out


def varlen_sdpa(torch, case, tensors, args):
    """A scaled_dot_product_attention call per sequence, on its rows of the
    packed [1, H, L, D] tensors (views, no copies)."""
    q, k, v, dy = tensors
    bounds = varlen_offsets(case["lengths"])
    spans = list(zip(bounds[:-1], bounds[1:]))
    scale, causal = 1.0 / math.sqrt(case["d"]), case["causal"]
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def forward(q, k, v):
        return [sdpa(q[:, :, a:b], k[:, :, a:b], v[:, :, a:b], is_causal=causal, scale=scale)
                for a, b in spans]
    return time_outputs(torch, forward, (q, k, v), lambda ys: [dy[:, :, a:b] for a, b in spans],
                        args.want, args.warmup, args.repeats)


def import_varlen_flash():
    """flash_attn_varlen_func and where it came from, or (None, why)."""
    errors = []
    for module in ("flash_attn", "flash_attn_interface"):
        try:
            mod = __import__(module)
            return mod.flash_attn_varlen_func, module
        except Exception as e:                       # not installed, or built for another torch
            errors.append(short(e))
    return None, "flash_attn not installed: " + " / ".join(errors)


def varlen_flash(torch, fn, case, tensors, args):
    """flash_attn_varlen_func on [L, H, D] copies of the packed tensors."""
    q, k, v, dy = (t[0].transpose(0, 1).contiguous() for t in tensors)
    cu = torch.tensor(varlen_offsets(case["lengths"]), dtype=torch.int32, device="cuda")
    longest = max(case["lengths"])
    scale, causal = 1.0 / math.sqrt(case["d"]), case["causal"]

    def forward(q, k, v):
        y = fn(q, k, v, cu, cu, longest, longest, softmax_scale=scale, causal=causal)
        return [y[0] if isinstance(y, tuple) else y]  # flash_attn_interface adds lse
    return time_outputs(torch, forward, (q, k, v), lambda ys: [dy], args.want, args.warmup,
                        args.repeats)


def run_varlen(torch, args, emit):
    flash, flash_note = import_varlen_flash()
    fa4 = import_fa4()
    ops = {"fwd": "attention-fwd", "bwd": "attention-bwd"}
    for dtype in args.dtypes:
        for d in args.ds:
            for pattern in args.pattern or VARLEN_PATTERNS:
                if pattern == "causal":
                    case = case_of(args, dtype, d, d, 32 if args.quick else 128, pattern,
                                   args.seq)
                    build_pattern(case)
                    dense_peers(torch, case, args, fa4, emit)
                    continue
                case = varlen_case(args, dtype, d, pattern)
                extra = {"sequences": len(case["lengths"]), "seqForm": "packed",
                         "seqLengths": case["lengths"]}
                tensors = inputs(torch, case, {"f16": torch.float16,
                                               "bf16": torch.bfloat16}[dtype])
                peers = [] if args.no_sdpa else [("sdpa-loop", varlen_sdpa, None)]
                peers.append(("fa-varlen", varlen_flash, flash))
                for peer, timer, fn in peers:
                    if peer == "fa-varlen" and fn is None:
                        for direction in args.want:
                            emit(case, peer, ops[direction], "n/a", case["active"],
                                 message=flash_note, extra=extra)
                        continue
                    try:
                        us = (timer(torch, case, tensors, args) if fn is None
                              else timer(torch, fn, case, tensors, args))
                        note = ("%d calls" % len(case["lengths"]) if peer == "sdpa-loop"
                                else "cu_seqlens")
                        for direction in args.want:
                            emit(case, peer, ops[direction], "ok", case["active"],
                                 us[direction], note=note, extra=extra)
                    except Exception as e:
                        for direction in args.want:
                            emit(case, peer, ops[direction], "n/a", case["active"],
                                 message=short(e), extra=extra)
                    torch.cuda.empty_cache()
                del tensors
                torch.cuda.empty_cache()


# ---- Dense cases: the training shapes (--train), causal (--varlen) -------------------

def import_fa4():
    """FlashAttention-4's flash_attn_func and None, or (None, why)."""
    try:
        from flash_attn.cute import flash_attn_func
        return flash_attn_func, None
    except Exception as e:                           # not installed, or built for another torch
        return None, "FlashAttention-4 (flash_attn.cute) not installed: " + short(e)


def dense_peers(torch, case, args, fa4, emit):
    """SDPA (is_causal for a causal case) and FlashAttention-4 (fa4: import_fa4's
    pair) on a dense case, every block or the causal ones."""
    ops = {"fwd": "attention-fwd", "bwd": "attention-bwd"}
    tensors = inputs(torch, case, {"f16": torch.float16, "bf16": torch.bfloat16}[case["dtype"]])
    scale, causal = 1.0 / math.sqrt(case["d"]), case["causal"]
    fn, why = fa4
    peers = [] if args.no_sdpa else ["sdpa"]
    peers.append("fa4")
    for peer in peers:
        if peer == "fa4" and fn is None:
            for direction in args.want:
                emit(case, peer, ops[direction], "n/a", case["active"], message=why)
            continue
        try:
            if peer == "sdpa":
                sdpa = torch.nn.functional.scaled_dot_product_attention
                us = time_both(torch, lambda q, k, v: sdpa(q, k, v, is_causal=causal,
                                                           scale=scale),
                               tensors, args.want, args.warmup, args.repeats)
                note = "dense causal" if causal else "dense"
            else:
                us = fa4_times(torch, fn, tensors, args, softmax_scale=scale, causal=causal)
                note = "flash_attn.cute" + (" causal" if causal else "")
            for direction in args.want:
                emit(case, peer, ops[direction], "ok", case["active"], us[direction], note=note)
        except Exception as e:
            for direction in args.want:
                emit(case, peer, ops[direction], "n/a", case["active"], message=short(e))
        torch.cuda.empty_cache()
    del tensors
    torch.cuda.empty_cache()


def block_lists(torch, m):
    """A block pattern m [..., rows, columns] (bool) as lists: each row's count
    of active blocks and its columns, the active ones first (int32), the
    form of FlexAttention's BlockMask and FlashAttention-4's block sparsity."""
    counts = m.sum(-1, dtype=torch.int32)
    order = torch.argsort(m.to(torch.int8), dim=-1, descending=True, stable=True)
    return counts.contiguous(), order.to(torch.int32).contiguous()


def fa4_times(torch, fn, tensors, args, **kwargs):
    """{'fwd': us, 'bwd': us} of FlashAttention-4's fn(q, k, v, **kwargs) on
    [B, L, H, D] copies of the [B, H, L, D] tensors (its layout; it returns
    (y, lse))."""
    blhd = tuple(t.transpose(1, 2).contiguous() for t in tensors)
    us = time_both(torch, lambda q, k, v: fn(q, k, v, **kwargs), blhd, args.want,
                   args.warmup, args.repeats)
    del blhd
    return us


def fa4_block_lists(torch, case, transpose):
    """FlashAttention-4's BlockSparseTensorsTorch of the case's random pattern:
    every active block a full block (counts [B, H, rows], indices [B, H, rows,
    columns], the active columns first), by query block, or with transpose by
    key block (the backward's)."""
    from flash_attn.cute.block_sparsity import BlockSparseTensorsTorch
    nbq, nbk, hp, b = case["nbq"], case["nbk"], case["mask_heads"], case["block"]
    pat = torch.frombuffer(bytearray(case["mask"]), dtype=torch.uint8).to("cuda")
    pat = pat.view(hp, nbq, nbk).bool().expand(case["heads"], nbq, nbk)
    if transpose:
        pat = pat.transpose(1, 2)
    counts, order = block_lists(torch, pat[None].expand(case["batch"], *pat.shape))
    return BlockSparseTensorsTorch(mask_block_cnt=torch.zeros_like(counts),
                                   mask_block_idx=torch.zeros_like(order),
                                   full_block_cnt=counts, full_block_idx=order,
                                   block_size=(b, b))


def fa4_peers(torch, case, tensors, args, fa4, emit):
    """FlashAttention-4 beside a main case: dense on "full", causal beside
    "window", its block sparsity on the random patterns."""
    ops = {"fwd": "attention-fwd", "bwd": "attention-bwd"}
    pattern, scale = case["pattern"], 1.0 / math.sqrt(case["d"])
    if pattern == "full":
        peer, active, causal, note = "fa4", case["total"], False, "dense"
    elif pattern in ("window", "causal"):
        peer, active, causal, note = "fa4-c", causal_blocks(case), True, "dense causal"
    else:
        peer, active, causal, note = "fa4-sparse", case["active"], False, "block_sparse_tensors"
    fn, why = fa4
    if fn is None:
        for direction in args.want:
            emit(case, peer, ops[direction], "n/a", active, message=why)
        return
    try:
        kwargs = {"softmax_scale": scale, "causal": causal}
        if peer == "fa4-sparse":
            kwargs["block_sparse_tensors"] = fa4_block_lists(torch, case, False)
            kwargs["block_sparse_tensors_bwd"] = fa4_block_lists(torch, case, True)
        us = fa4_times(torch, fn, tensors, args, **kwargs)
        for direction in args.want:
            emit(case, peer, ops[direction], "ok", active, us[direction],
                 note="flash_attn.cute " + note)
    except Exception as e:
        for direction in args.want:
            emit(case, peer, ops[direction], "n/a", active, message=short(e))
    torch.cuda.empty_cache()


def run_train(torch, args, emit):
    """bkbench's training shapes: SDPA and FlashAttention-4, full and causal."""
    fa4 = import_fa4()
    shapes = TRAIN_QUICK_SHAPES if args.quick else TRAIN_SHAPES
    block = 16 if args.quick else 128
    for dtype in args.dtypes:
        for d in args.ds:
            for batch, seq in shapes:
                for pattern in args.pattern or TRAIN_PATTERNS:
                    case = case_of(args, dtype, d, d, block, pattern, seq, batch)
                    build_pattern(case)
                    dense_peers(torch, case, args, fa4, emit)


# ---- Timing -------------------------------------------------------------------

def median_us(torch, fn, warmup, repeats):
    for _ in range(warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))


def inputs(torch, case, dtype):
    """q, k [B, H, L, D], v, dy [B, H, L, Dv] with bkbench's magnitudes (0.25..2,
    random signs)."""
    def one(cols):
        shape = (case["batch"], case["heads"], case["l"], cols)
        x = torch.rand(shape, device="cuda", dtype=torch.float32) * 1.75 + 0.25
        sign = torch.randint(0, 2, shape, device="cuda", dtype=torch.int8) * 2 - 1
        return (x * sign).to(dtype)
    return one(case["d"]), one(case["d"]), one(case["dv"]), one(case["dv"])


def time_both(torch, forward, tensors, want, warmup, repeats):
    """{'fwd': us, 'bwd': us} for the directions wanted. forward(q, k, v)
    returns the output, or (output, lse)."""
    q, k, v, dy = tensors
    out = {}
    if "fwd" in want:
        with torch.no_grad():
            out["fwd"] = median_us(torch, lambda: forward(q, k, v), warmup, repeats)
    if "bwd" in want:
        qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
        y = forward(qg, kg, vg)
        y = y[0] if isinstance(y, tuple) else y
        out["bwd"] = median_us(
            torch, lambda: torch.autograd.grad(y, (qg, kg, vg), dy, retain_graph=True),
            warmup, repeats)
        del y, qg, kg, vg
    return out


def short(err):
    text = "%s: %s" % (type(err).__name__, str(err).strip().splitlines()[0] if str(err) else "")
    return text[:300]


# ---- FlexAttention --------------------------------------------------------------

# The pattern create_block_mask's mask function reads: a module-level function
# (create_block_mask takes no bound method) and state, not a closure per case.
PATTERN = {"mask": None, "bq": 64, "bk": 64}


def pattern_mod(b, h, q_idx, kv_idx):
    return PATTERN["mask"][h, q_idx // PATTERN["bq"], kv_idx // PATTERN["bk"]]


def pattern_causal_mod(b, h, q_idx, kv_idx):
    return pattern_mod(b, h, q_idx, kv_idx) & (kv_idx <= q_idx)


def causal_mod(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


# create_block_mask evaluates the mask function on every (head, query, key);
# beyond this many it costs a compile per pattern, so the BlockMask is made
# from the blocks directly and create_block_mask only checks it on small runs.
CHECK_LIMIT = 1 << 28


class Flex:
    """flex_attention compiled once; BlockMasks of the cases' patterns."""

    def __init__(self, torch):
        self.torch = torch
        from torch.nn.attention import flex_attention as fa
        self.fa = fa
        # One compiled graph per dtype, shape, block size, mask function and
        # direction: more than dynamo's default cache allows, and falling back
        # to eager flex_attention would materialize every score.
        cfg = torch._dynamo.config
        cfg.cache_size_limit = max(getattr(cfg, "cache_size_limit", 8), 256)
        if hasattr(cfg, "accumulated_cache_size_limit"):
            cfg.accumulated_cache_size_limit = max(cfg.accumulated_cache_size_limit, 4096)
        self.compiled = torch.compile(fa.flex_attention, dynamic=False)
        self.options = {}              # (dtype, d, block, direction) -> kernel options that ran

    def block_mask(self, case):
        """The BlockMask of the case's pattern, every head spelled out so that
        one compiled kernel serves all patterns of a shape and block size:
        active blocks the causal diagonal cuts are partial blocks (causal_mod
        inside), the others full. Returns (BlockMask, its active blocks,
        'create_block_mask agrees' / 'create_block_mask differs' / '')."""
        torch, fa = self.torch, self.fa
        nbq, nbk, hp, b = case["nbq"], case["nbk"], case["mask_heads"], case["block"]
        l, heads = case["l"], case["heads"]
        mask = case["mask"] if case["mask"] is not None else bytes([1]) * (nbq * nbk)
        pat = torch.frombuffer(bytearray(mask), dtype=torch.uint8).to("cuda")
        pat = pat.view(hp, nbq, nbk).bool()
        if case["causal"]:
            i = torch.arange(nbq, device="cuda")[:, None]
            j = torch.arange(nbk, device="cuda")[None, :]
            q_lo, q_hi = i * b, torch.clamp((i + 1) * b, max=l) - 1
            k_lo, k_hi = j * b, torch.clamp((j + 1) * b, max=l) - 1
            whole = k_hi <= q_lo                     # every pair visible
            full, partial = pat & whole, pat & (k_lo <= q_hi) & ~whole
        else:
            full, partial = pat, torch.zeros_like(pat)

        kv_num, kv_idx = block_lists(torch, partial.expand(heads, nbq, nbk)[None])
        full_num, full_idx = block_lists(torch, full.expand(heads, nbq, nbk)[None])
        bm = fa.BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx, BLOCK_SIZE=(b, b),
                                         mask_mod=causal_mod if case["causal"] else None)
        active = int(kv_num.sum().item() + full_num.sum().item()) * case["batch"]
        check = ""
        if hp * l * l <= CHECK_LIMIT:
            PATTERN["mask"], PATTERN["bq"], PATTERN["bk"] = pat, b, b
            ref = fa.create_block_mask(pattern_causal_mod if case["causal"] else pattern_mod,
                                       B=None, H=hp, Q_LEN=l, KV_LEN=l, device="cuda",
                                       BLOCK_SIZE=(b, b))
            same = (torch.equal(ref.to_dense().expand(1, heads, nbq, nbk),
                                bm.to_dense()) and
                    torch.equal(ref.full_kv_num_blocks.expand(1, heads, nbq), full_num))
            check = "create_block_mask agrees" if same else "CREATE_BLOCK_MASK DIFFERS"
        return bm, active, check

    def run(self, case, block_mask, scale, tensors, direction, args):
        """The median time of one direction, trying flex's own kernel tiles
        first and then tiles of the pattern's block (kernel_options), the one
        that ran last time first. Returns (us, options) or raises the errors."""
        b = case["block"]
        tiles = {"fwd_BLOCK_M": b, "fwd_BLOCK_N": b, "bwd_BLOCK_M1": b // 2,
                 "bwd_BLOCK_N1": b, "bwd_BLOCK_M2": b, "bwd_BLOCK_N2": b // 2}
        key = (case["dtype"], case["d"], case["dv"], b, direction)
        tries = [None, tiles]
        if self.options.get(key) == tiles:
            tries.reverse()
        errors = []
        for options in tries:
            def forward(q, k, v):
                if options:
                    return self.compiled(q, k, v, block_mask=block_mask, scale=scale,
                                         kernel_options=options)
                return self.compiled(q, k, v, block_mask=block_mask, scale=scale)
            try:
                us = time_both(self.torch, forward, tensors, [direction], args.warmup,
                               args.repeats)[direction]
                self.options[key] = options
                return us, options
            except Exception as e:
                errors.append(("tiles %d: " % b if options else "") + short(e))
                self.torch._dynamo.reset()
                self.torch.cuda.empty_cache()
        raise RuntimeError(" / ".join(errors))


# ---- Main ---------------------------------------------------------------------------

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="B = 1, L = 1024: a smoke test of the script (seconds + compiles)")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, help="Lq = Lk (8192; 4096 with --sweep)")
    ap.add_argument("--width", type=int, default=2048, help="H * D")
    ap.add_argument("--dtype", action="append", choices=["f16", "bf16", "f32"],
                    help="f32: bkbench's F32 cases, SDPA only (alone)")
    ap.add_argument("--d", action="append", type=int, choices=range(1, 257), metavar="D")
    ap.add_argument("--sweep", action="store_true",
                    help="bkbench's head-size sweep: D 32..256 and 192/128, full and 25%%, "
                         "blocks of 128, L = 4096")
    ap.add_argument("--block", action="append", type=int, choices=[64, 128])
    ap.add_argument("--varlen", action="store_true",
                    help="bkbench's packed sequences: an SDPA call per sequence and "
                         "flash_attn_varlen_func, varlen and varlen-c")
    ap.add_argument("--train", action="store_true",
                    help="bkbench's training shapes: SDPA and FlashAttention-4, full and "
                         "causal, B = 32 at L = 512 and B = 16 at L = 1024")
    ap.add_argument("--pattern", action="append", choices=PATTERNS + VARLEN_PATTERNS)
    ap.add_argument("--direction", choices=["fwd", "bwd", "both"], default="both")
    ap.add_argument("--no-sdpa", action="store_true")
    ap.add_argument("--no-flex", action="store_true")
    ap.add_argument("--no-fa4", action="store_true",
                    help="leave FlashAttention-4 out of the main cases")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--json", metavar="FILE", help="write the results here too (after each)")
    ap.add_argument("--append", action="store_true",
                    help="with --json: keep the results already in FILE, this run's after "
                         "them (each run's settings in \"runs\")")
    args = ap.parse_args()
    args.seq_given = args.seq is not None
    if args.seq is None:
        args.seq = 8192
    if args.quick:
        args.batch, args.seq = 1, 1024
        args.warmup, args.repeats = min(args.warmup, 2), min(args.repeats, 5)
    args.dtypes = args.dtype or ["f16", "bf16"]
    args.ds = args.d or [64, 128]
    args.blocks = args.block or [64, 128]
    args.patterns = args.pattern or PATTERNS
    args.want = ["fwd", "bwd"] if args.direction == "both" else [args.direction]
    mode = "--varlen" if args.varlen else "--train" if args.train else ""
    names = {"--varlen": VARLEN_PATTERNS, "--train": TRAIN_PATTERNS}.get(mode, PATTERNS)
    if args.pattern and any(p not in names for p in args.pattern):
        ap.error("--pattern takes %s%s" % (", ".join(names), " with " + mode if mode
                                            else " (the others with --varlen or --train)"))
    if args.varlen + args.sweep + args.train > 1:
        ap.error("--varlen, --sweep and --train are different runs")
    if "f32" in args.dtypes and (len(args.dtypes) > 1 or args.varlen or args.sweep or
                                 args.train or args.pattern):
        ap.error("--dtype f32 runs bkbench's F32 cases alone")
    return args


HEADER = "%-9s %-13s %-5s %-14s %3s %-8s %6s %9s %7s %s" % (
    "peer", "op", "dtype", "shape(BxHxLxD)", "blk", "pattern", "active", "us", "TF/s", "note")


def row_text(r):
    head = "%-9s %-13s %-5s %-14s %3d %-8s %5.1f%%" % (
        r["peer"], r["op"], r["dtype"], r["shape"], r["blockQ"], r["pattern"],
        100.0 * r["density"])
    if r["status"] != "ok":
        return "%s %9s %7s %s" % (head, "n/a", "-", r["message"][:120])
    return "%s %9.1f %7.2f %s" % (head, r["us"], r["tflopPerS"], r.get("note", ""))


def main():
    args = parse_args()
    try:
        import torch
    except ImportError as e:
        print("attention-peers: no PyTorch: %s" % e)
        return 1
    if not torch.cuda.is_available():
        print("attention-peers: no CUDA device for PyTorch")
        return 1
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    # F32 products in F32: no TF32 in SDPA's matrix products.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    report = {"tool": "attention-peers", "torch": torch.__version__,
              "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
              "settings": {"warmup": args.warmup, "repeats": args.repeats, "batch": args.batch,
                           "seq": args.seq, "width": args.width,
                           "flops": "forward 4*blockQ*blockK*D per active block, "
                                    "backward 2.5x; causal diagonal blocks count whole" +
                                    ("; each packed sequence's own blocks, summed"
                                     if args.varlen else ""),
                           "varlen": args.varlen, "train": args.train},
              "results": []}
    report["runs"] = [dict(report["settings"], sweep=args.sweep)]
    if args.json and args.append and os.path.exists(args.json):
        with open(args.json) as f:
            before = json.load(f)
        report["results"] = before.get("results", [])
        report["runs"] = before.get("runs", [before.get("settings", {})]) + report["runs"]
    print("attention-peers: torch %s (CUDA %s) on %s; median of %d after %d warm-up"
          % (torch.__version__, torch.version.cuda, report["device"], args.repeats,
             args.warmup))
    print("TFLOP/s over the active blocks: forward 4*blk*blk*D each, backward 2.5x")
    if args.varlen:
        print("varlen: each packed sequence's own blocks, summed; compare with bkbench's "
              "varlen rows")
    if args.train:
        print("train: bkbench's training shapes, every block or the causal ones; SDPA and "
              "FlashAttention-4")
    print(HEADER)
    sys.stdout.flush()

    flex, flex_error = None, None
    if not args.no_flex and not args.varlen and not args.train:
        try:
            flex = Flex(torch)
        except Exception as e:                       # no flex_attention in this torch
            flex_error = short(e)
    sdpa_cache = {}                                  # (dtype, d, causal, dir) -> us
    fa4 = None if args.no_fa4 else import_fa4()
    t_start = time.time()

    def emit(case, peer, op, status, active, us=None, message="", note="", extra=None):
        r = {"peer": peer, "op": op, "dtype": case["dtype"], "shape": case["shape"],
             "batch": case["batch"], "heads": case["heads"], "lq": case["l"], "lk": case["l"],
             "d": case["d"], "dv": case["dv"], "blockQ": case["block"], "blockK": case["block"],
             "pattern": case["pattern"], "causal": case["causal"], "window": case["window"],
             "patternHash": case["hash"], "activeBlocks": active, "totalBlocks": case["total"],
             "density": active / case["total"],
             "flops": flops(case, active, op.endswith("bwd")), "status": status}
        if status == "ok":
            r["us"] = us
            r["tflopPerS"] = r["flops"] / (us * 1e-6) / 1e12
            if note:
                r["note"] = note
        else:
            r["message"] = message
        if extra:
            r.update(extra)
        report["results"].append(r)
        print(row_text(r))
        sys.stdout.flush()
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)

    if args.varlen or args.train:
        (run_varlen if args.varlen else run_train)(torch, args, emit)
        print("attention-peers: %d results in %.0f s" % (len(report["results"]),
                                                          time.time() - t_start))
        return 0

    for case in make_cases(args):
        build_pattern(case)
        dt = dtypes[case["dtype"]]
        scale = 1.0 / math.sqrt(case["d"])
        tensors = inputs(torch, case, dt)
        ops = {"fwd": "attention-fwd", "bwd": "attention-bwd"}

        # Dense SDPA: the full cases, and causal beside the window cases
        # (and F32's causal case).
        if not args.no_sdpa and case["pattern"] in ("full", "window", "causal"):
            causal = case["pattern"] in ("window", "causal")
            peer = "sdpa-c" if causal else "sdpa"
            active = causal_blocks(case) if causal else case["total"]
            key = (case["dtype"], case["d"], case["dv"], causal)
            try:
                if key not in sdpa_cache:
                    sdpa_cache[key] = time_both(
                        torch, lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
                            q, k, v, is_causal=causal, scale=scale),
                        tensors, args.want, args.warmup, args.repeats)
                for direction in args.want:
                    emit(case, peer, ops[direction], "ok", active, sdpa_cache[key][direction],
                         note="dense causal" if causal else "dense")
            except Exception as e:
                for direction in args.want:
                    emit(case, peer, ops[direction], "n/a", active, message=short(e))
                torch.cuda.empty_cache()

        if fa4 is not None and case["dtype"] != "f32":
            fa4_peers(torch, case, tensors, args, fa4, emit)

        if args.no_flex or case["dtype"] == "f32":
            continue
        if flex is None:
            for direction in args.want:
                emit(case, "flex", ops[direction], "n/a", case["active"],
                     message="no FlexAttention: " + flex_error)
            continue
        t0 = time.time()
        try:
            bm, flex_active, check = flex.block_mask(case)
        except Exception as e:
            for direction in args.want:
                emit(case, "flex", ops[direction], "n/a", case["active"],
                     message="BlockMask: " + short(e))
            continue
        extra = {"flexBlocks": flex_active}
        note = "" if flex_active == case["active"] else \
            "BLOCK MASK HAS %d BLOCKS, NOT %d" % (flex_active, case["active"])
        if check:
            extra["blockMaskCheck"] = check
            if check != "create_block_mask agrees":
                note = (note + " " if note else "") + check
        for direction in args.want:
            try:
                us, options = flex.run(case, bm, scale, tensors, direction, args)
            except Exception as e:
                emit(case, "flex", ops[direction], "n/a", case["active"], message=str(e),
                     extra=extra)
                continue
            row_note = note
            if options:
                row_note = ("tiles %d" % case["block"]) + (" " + note if note else "")
            emit(case, "flex", ops[direction], "ok", case["active"], us, note=row_note,
                 extra=dict(extra, kernelOptions=options))
        print("# %s %s %s block %d %s: flex %.0f s" % (case["dtype"], case["shape"],
                                                      case["pattern"], case["block"],
                                                      "causal" if case["causal"] else "",
                                                      time.time() - t0), file=sys.stderr)
        del tensors, bm
        torch.cuda.empty_cache()

    print("attention-peers: %d results in %.0f s" % (len(report["results"]),
                                                      time.time() - t_start))
    if args.json:
        print("attention-peers: JSON in %s" % args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
