#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time PyTorch on bkbench's gated-activation cases, eager and under torch.compile, their peers.

The cases are bkbench's --op gated on the GPU: x [tokens, 2*hidden] for hidden 4096 and 8192,
and for hidden 4096 x as a view into a wider [tokens, 3*hidden] buffer (row stride 3*hidden:
gate and up projections of one fused matmul), where tokens makes x --size-mib MiB (256, bkbench's
GPU default); f32, f16, bf16 and f64; GLU, ReGLU, SwiGLU, GeGLU and GeGLU-tanh; forward and
backward. As in libbk, a = x[:, :hidden] is the value and b = x[:, hidden:] the gate:

  glu         F.glu(x, -1)                                       (a * sigmoid(b))
  reglu       a * F.relu(b)
  swiglu      a * F.silu(b)
  geglu       a * F.gelu(b)                                      (erf)
  geglu-tanh  a * F.gelu(b, approximate="tanh")

computed in the input's dtype, op by op (libbk computes the half types in f32 and rounds once).
The backward is written out by hand from x and dy, as in a torch.autograd.Function that saves x
(autograd proper would also time the forward): da = dy * g(b) and db = dy * a * g'(b) with
libbk's g' (doc: bk-gated-activation(7)), in elementwise torch ops, dx = torch.cat([da, db], -1),
a new contiguous tensor (libbk writes dx with x's row stride; the bytes are the same). At the
start, each kind's backward is checked against autograd of its forward in f64.

Peers: "torch eager" (the functions as written) and "torch.compile" (the same functions through
torch.compile with default mode, static shapes, compiled before the timing, dynamo reset for
each case; a compile that fails gives a record with status "failed" and its message, and the run
goes on). A compiled result is compared with the eager one ("agrees" in its record).

Inputs hold random values with |v| in [0.25, 2], as bkbench's. The runs rotate among as many
sets of inputs as bkbench's: enough that the sets' bytes (inputs and output) cover twice the L2
cache and at least 100 MiB, from 2 to 64 sets (--quick: 2); PyTorch allocates the outputs. Runs
are timed with CUDA events back to back on one stream: the median (of an even count, the mean of
the middle two), minimum and maximum in us over --repeats runs after --warmup. Bytes are
bkbench's: forward x read once and y written once (3 x tokens x hidden values), backward x and dy
read and dx written (5 x tokens x hidden). The copy bandwidth is measured here as bkbench does: a
device-to-device copy of max(256 MiB, one x, twice the L2) (--quick: max(16 MiB, twice the L2)),
bytes read + written over the median time; each record's "roofline" is its GB/s over it.

Output: one line per case and peer, and with --json a list of records named as bkbench's gated
results (op, kind, dtype, shape, inputStrides) with peer, status ("ok" or "failed"), bytes, sets,
us, usMin, usMax, gbPerS, roofline, copyGbPerS, and for torch.compile compileS (the first call,
compile included) and agrees; a failed record has message instead of the figures. The file is
rewritten after each record; bench/add-run.sh --gated-peers keeps it as "gatedPeers". --list
prints the cases without PyTorch; --check-cases FILE compares them (shapes, strides, bytes, sets)
with the gated results of a bkbench --json output or a bench/data run, and exits 1 where they
differ.
"""
import argparse
import json
import sys
import time

KINDS = ["glu", "reglu", "swiglu", "geglu", "geglu-tanh"]       # bkbench's order
DTYPES = ["f32", "f16", "bf16", "f64"]
SIZES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8}
# (hidden, row stride factor: 0 contiguous, 3 a view into [tokens, 3*hidden])
SHAPES = [(4096, 0), (8192, 0), (4096, 3)]
MIB = 1048576
MIN_GPU_ROTATE = 100 * MIB          # bkbench's floor: twice the H100's 50 MiB L2
MAX_SETS = 64
COPY_BYTES, QUICK_COPY_BYTES = 256 * MIB, 16 * MIB


# ---- Cases (no PyTorch) ---------------------------------------------------------------------

def make_cases(size_bytes, dtypes, kinds, directions):
    """bkbench's gated cases in its order (dtype, shape, direction, kind), as dicts with the
    record's fields and the working set (bytes of the buffers one run touches)."""
    out = []
    for dt in DTYPES:
        if dt not in dtypes:
            continue
        es = SIZES[dt]
        for hidden, factor in SHAPES:
            tokens = size_bytes // (2 * hidden * es)
            if tokens < 1:
                sys.exit("gated-peers: --size-mib holds no row of %d %s values" % (2 * hidden, dt))
            rs = factor * hidden
            x_row = rs if rs else 2 * hidden
            x_span = ((tokens - 1) * x_row + 2 * hidden) * es
            half = tokens * hidden * es                       # y, dy
            for direction in ("fwd", "bwd"):
                if direction not in directions:
                    continue
                bwd = direction == "bwd"
                for kind in KINDS:
                    if kind not in kinds:
                        continue
                    out.append({
                        "op": "gated-" + direction, "kind": kind, "dtype": dt,
                        "shape": [tokens, 2 * hidden], "inputStrides": [rs, 1] if rs else None,
                        "bytes": (5 if bwd else 3) * half,
                        "workingSet": x_span + (half + x_span if bwd else half),
                        "hidden": hidden, "rowStride": x_row})
    return out


def sets_for(working_set, rotate_bytes):
    """bkbench's bench_sets_for: enough sets to cover rotate_bytes, 2 to MAX_SETS."""
    sets = -(-rotate_bytes // working_set) if working_set else 2
    return min(max(sets, 2), MAX_SETS)


def settings(args, l2_bytes):
    """(size_bytes, warmup, repeats, rotate_bytes, copy_bytes) as bkbench chooses them."""
    quick = args.quick
    size_mib = args.size_mib if args.size_mib else (1.0 if quick else 256.0)
    size_bytes = int(size_mib * MIB)
    warmup = args.warmup if args.warmup is not None else (1 if quick else 5)
    repeats = args.repeats if args.repeats else (3 if quick else 50)
    rotate = 0 if quick else max(2 * l2_bytes, MIN_GPU_ROTATE)
    copy = QUICK_COPY_BYTES if quick else max(COPY_BYTES, size_bytes)
    copy = max(copy, 2 * l2_bytes)
    return size_bytes, warmup, repeats, rotate, copy


def case_label(c):
    shape = "%dx%d" % tuple(c["shape"])
    if c["inputStrides"]:
        shape += " rs=%d" % c["inputStrides"][0]
    return "%-9s %-10s %-4s %-17s" % (c["op"], c["kind"], c["dtype"], shape)


def key_of(r):
    return (r.get("op"), r.get("kind"), r.get("dtype"), tuple(r.get("shape") or ()),
            tuple(r["inputStrides"]) if r.get("inputStrides") else None)


def check_cases(path, cases, rotate_of):
    """Compares the cases with the gated results of bkbench's JSON in path (its own output, or
    a bench/data run holding it under "bkbench") of the same ops, kinds and dtypes: the same
    shapes and strides, bytes and sets. Returns the number of differences, each printed."""
    with open(path) as f:
        doc = json.load(f)
    bk = doc.get("bkbench", doc)
    keep = {(c["op"], c["kind"], c["dtype"]) for c in cases}
    theirs = {key_of(r): r for r in bk.get("results", [])
              if (r.get("op"), r.get("kind"), r.get("dtype")) in keep}
    rotate = rotate_of(bk)
    bad = 0
    for c in cases:
        r = theirs.pop(key_of(c), None)
        if r is None:
            print("gated-peers: %s: not in %s" % (case_label(c), path))
            bad += 1
            continue
        sets = sets_for(c["workingSet"], rotate) if rotate is not None else None
        if r.get("bytes") != c["bytes"] or (sets is not None and r.get("sets") != sets):
            print("gated-peers: %s: bytes %s sets %s here, %s and %s in %s" %
                  (case_label(c), c["bytes"], sets, r.get("bytes"), r.get("sets"), path))
            bad += 1
    for k in theirs:
        print("gated-peers: %s %s %s %s %s: in %s, not here" % (k + (path,)))
        bad += 1
    return bad


# ---- The functions timed ----------------------------------------------------------------------

def functions(torch):
    """{kind: (forward(x), backward(x, dy))}, libbk's semantics in plain PyTorch."""
    import math
    F = torch.nn.functional
    sqrt1_2, c = math.sqrt(0.5), math.sqrt(2.0 / math.pi)
    inv_sqrt_2pi = 1.0 / math.sqrt(2.0 * math.pi)

    def glu(x):
        return F.glu(x, -1)

    def glu_bwd(x, dy):
        a, b = x.chunk(2, -1)
        s = torch.sigmoid(b)
        return torch.cat([dy * s, dy * a * s * (1 - s)], -1)

    def reglu(x):
        a, b = x.chunk(2, -1)
        return a * F.relu(b)

    def reglu_bwd(x, dy):
        a, b = x.chunk(2, -1)
        return torch.cat([dy * F.relu(b), torch.where(b > 0, dy * a, 0)], -1)

    def swiglu(x):
        a, b = x.chunk(2, -1)
        return a * F.silu(b)

    def swiglu_bwd(x, dy):
        a, b = x.chunk(2, -1)
        s = torch.sigmoid(b)
        return torch.cat([dy * b * s, dy * a * s * (1 + b * (1 - s))], -1)

    def geglu(x):
        a, b = x.chunk(2, -1)
        return a * F.gelu(b)

    def geglu_bwd(x, dy):
        a, b = x.chunk(2, -1)
        cdf = 0.5 * (1 + torch.erf(b * sqrt1_2))
        pdf = torch.exp(-0.5 * b * b) * inv_sqrt_2pi
        return torch.cat([dy * b * cdf, dy * a * (cdf + b * pdf)], -1)

    def geglu_tanh(x):
        a, b = x.chunk(2, -1)
        return a * F.gelu(b, approximate="tanh")

    def geglu_tanh_bwd(x, dy):
        a, b = x.chunk(2, -1)
        t = torch.tanh(c * (b + 0.044715 * b * b * b))
        dh = 0.5 * (1 + t) + 0.5 * b * (1 - t * t) * c * (1 + 3 * 0.044715 * b * b)
        return torch.cat([dy * 0.5 * b * (1 + t), dy * a * dh], -1)

    return {"glu": (glu, glu_bwd), "reglu": (reglu, reglu_bwd), "swiglu": (swiglu, swiglu_bwd),
            "geglu": (geglu, geglu_bwd), "geglu-tanh": (geglu_tanh, geglu_tanh_bwd)}


def check_backwards(torch, fns, kinds):
    """Each kind's hand-written backward against autograd of its forward, in f64 on the GPU.
    Returns the kinds that differ."""
    gen = torch.Generator(device="cuda").manual_seed(1)
    bad = []
    for kind in kinds:
        fwd, bwd = fns[kind]
        x = random_values(torch, (64, 256), torch.float64, gen).requires_grad_()
        dy = random_values(torch, (64, 128), torch.float64, gen)
        want, = torch.autograd.grad(fwd(x), x, dy)
        got = bwd(x.detach(), dy)
        if not torch.allclose(got, want, rtol=1e-12, atol=1e-12):
            bad.append("%s (largest difference %.3g)" % (kind, (got - want).abs().max().item()))
    return bad


# ---- Timing -------------------------------------------------------------------------------

def random_values(torch, shape, dtype, gen):
    """bkbench's input values: |v| in [0.25, 2], a random sign."""
    u = torch.rand(shape, dtype=torch.float32, device="cuda", generator=gen) * 2 - 1
    v = 0.25 + 1.75 * u.abs()
    return torch.where(u < 0, -v, v).to(dtype)


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def time_runs(torch, fn, inputs, warmup, repeats):
    """fn(*inputs[i % sets]) for the warm-up and timed runs, each timed run between two events
    on the current stream. Returns (median, min, max) in us."""
    sets = len(inputs)
    for i in range(warmup):
        fn(*inputs[i % sets])
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(repeats)]
    for i, (start, end) in enumerate(events):
        start.record()
        fn(*inputs[(warmup + i) % sets])
        end.record()
    torch.cuda.synchronize()
    us = [s.elapsed_time(e) * 1000.0 for s, e in events]
    return median(us), min(us), max(us)


def copy_bandwidth(torch, nbytes, warmup, repeats):
    """GB/s of a device-to-device copy of nbytes, read + written, over the median time."""
    src = torch.rand(nbytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    us, _, _ = time_runs(torch, lambda: dst.copy_(src), [()], warmup, repeats)
    del src, dst
    return 2.0 * (nbytes // 4 * 4) / (us * 1e-6) / 1e9


def short(e):
    lines = [s for s in str(e).strip().splitlines() if s.strip()]
    return ("%s: %s" % (type(e).__name__, lines[0] if lines else ""))[:300]


def make_record(c, peer, status, sets, copy_gbs, timing=None, extra=None):
    """The JSON record of case c timed by peer: bkbench's fields that name the case, then the
    figures; timing is (median, min, max) in us, None when the peer failed."""
    r = {k: c[k] for k in ("op", "kind", "dtype", "shape", "inputStrides")}
    r.update(peer=peer, status=status, bytes=c["bytes"], sets=sets)
    if timing:
        med, lo, hi = timing
        gbs = c["bytes"] / (med * 1e-6) / 1e9
        r.update(us=med, usMin=lo, usMax=hi, gbPerS=gbs, roofline=gbs / copy_gbs,
                 copyGbPerS=copy_gbs)
    r.update(extra or {})
    return r


TOLERANCE = {"f64": 1e-9, "f32": 1e-4, "f16": 2e-2, "bf16": 1e-1}


def run_case(torch, c, fns, dtypes, s, copy_gbs, emit):
    """Times one case eagerly and compiled; emit(record) for each."""
    _, warmup, repeats, rotate, _ = s
    dt = dtypes[c["dtype"]]
    tokens, hidden = c["shape"][0], c["hidden"]
    bwd = c["op"] == "gated-bwd"
    sets = sets_for(c["workingSet"], rotate)
    gen = torch.Generator(device="cuda").manual_seed(7)
    inputs = []
    for _ in range(sets):
        x = random_values(torch, (tokens, c["rowStride"]), dt, gen)[:, :2 * hidden]
        inputs.append((x, random_values(torch, (tokens, hidden), dt, gen)) if bwd else (x,))
    fn = fns[c["kind"]][1 if bwd else 0]

    def record(peer, status, timing=None, extra=None):
        emit(make_record(c, peer, status, sets, copy_gbs, timing, extra))

    eager_out = None
    try:
        eager_out = fn(*inputs[0])
        record("torch eager", "ok", time_runs(torch, fn, inputs, warmup, repeats))
    except Exception as e:
        record("torch eager", "failed", extra={"message": short(e)})
        torch.cuda.empty_cache()

    torch._dynamo.reset()
    try:
        compiled = torch.compile(fn, dynamic=False)
        t0 = time.time()
        out = compiled(*inputs[0])
        torch.cuda.synchronize()
        extra = {"compileS": round(time.time() - t0, 1)}
        if eager_out is not None:
            tol = TOLERANCE[c["dtype"]]
            extra["agrees"] = bool(torch.allclose(out.double(), eager_out.double(), rtol=tol,
                                                  atol=tol))
        del out
        record("torch.compile", "ok", time_runs(torch, compiled, inputs, warmup, repeats), extra)
    except Exception as e:
        record("torch.compile", "failed", extra={"message": short(e)})
        torch.cuda.empty_cache()
    del inputs, eager_out


def row_text(r):
    head = "%-13s %s" % (r["peer"], case_label(r))
    if r["status"] != "ok":
        return "%s failed: %s" % (head, r["message"][:160])
    note = "" if r.get("agrees", True) else "  DIFFERS FROM EAGER"
    return "%s %9.1f %9.1f %9.1f %8.1f %6.1f%%%s" % (
        head, r["us"], r["usMin"], r["usMax"], r["gbPerS"], 100 * r["roofline"], note)


# ---- Main -------------------------------------------------------------------------------------

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--dtype", action="append", choices=DTYPES,
                    help="only this dtype (repeatable; default all)")
    ap.add_argument("--kind", action="append", choices=KINDS,
                    help="only this kind (repeatable; default all)")
    ap.add_argument("--direction", choices=["fwd", "bwd", "both"], default="both")
    ap.add_argument("--quick", action="store_true",
                    help="bkbench --quick's cases and settings: 1 MiB inputs, 1 warm-up, 3 runs, "
                         "2 sets")
    ap.add_argument("--size-mib", type=float, help="MiB of each x (default 256, --quick 1)")
    ap.add_argument("--warmup", type=int, help="warm-up runs (default 5, --quick 1)")
    ap.add_argument("--repeats", type=int, help="timed runs (default 50, --quick 3)")
    ap.add_argument("--l2-mib", type=float, help="the L2 cache's MiB (default: the device's)")
    ap.add_argument("--json", metavar="FILE", help="write the records here (after each case)")
    ap.add_argument("--list", action="store_true",
                    help="print the cases, bytes and working sets, and exit (no PyTorch)")
    ap.add_argument("--check-cases", metavar="FILE",
                    help="compare the cases with bkbench's JSON in FILE and exit (no PyTorch)")
    args = ap.parse_args(argv)
    args.dtype = args.dtype or DTYPES
    args.kind = args.kind or KINDS
    args.directions = ["fwd", "bwd"] if args.direction == "both" else [args.direction]
    if args.repeats is not None and args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if args.warmup is not None and args.warmup < 0:
        ap.error("--warmup must be at least 0")
    if args.size_mib is not None and args.size_mib <= 0:
        ap.error("--size-mib must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.list or args.check_cases:
        l2 = int((args.l2_mib or 0) * MIB)
        size_bytes, _, _, rotate, _ = settings(args, l2)
        cases = make_cases(size_bytes, args.dtype, args.kind, args.directions)
        if args.list:
            for c in cases:
                print("%s bytes %d working set %d%s" % (
                    case_label(c), c["bytes"], c["workingSet"],
                    " sets %d" % sets_for(c["workingSet"], rotate) if args.l2_mib else ""))
            print("gated-peers: %d cases" % len(cases))
            return 0
        # The sets follow from the run's own rotation, unless --l2-mib says otherwise.
        bad = check_cases(args.check_cases, cases,
                          lambda bk: rotate if args.l2_mib else
                          bk.get("settings", {}).get("rotateBytes"))
        print("gated-peers: %d cases, %d differences from %s" % (len(cases), bad,
                                                                   args.check_cases))
        return 1 if bad else 0

    try:
        import torch
    except ImportError as e:
        print("gated-peers: no PyTorch: %s" % e)
        return 1
    if not torch.cuda.is_available():
        print("gated-peers: no CUDA device for PyTorch")
        return 1
    props = torch.cuda.get_device_properties(0)
    l2 = int(args.l2_mib * MIB) if args.l2_mib else int(getattr(props, "L2_cache_size", 0))
    if l2 <= 0:
        print("gated-peers: the device's L2 size is unknown: give --l2-mib")
        return 1
    s = settings(args, l2)
    size_bytes, warmup, repeats, rotate, copy_bytes = s
    cases = make_cases(size_bytes, args.dtype, args.kind, args.directions)
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
              "f64": torch.float64}
    fns = functions(torch)
    bad = check_backwards(torch, fns, args.kind)
    if bad:
        print("gated-peers: the backward differs from autograd's for " + ", ".join(bad))
        return 1
    copy_gbs = copy_bandwidth(torch, copy_bytes, warmup, repeats)
    print("gated-peers: torch %s (CUDA %s) on %s, L2 %.0f MiB; %d cases, x %.4g MiB, median of "
          "%d after %d warm-up" % (torch.__version__, torch.version.cuda, props.name, l2 / MIB,
                                   len(cases), size_bytes / MIB, repeats, warmup))
    print("copy bandwidth (device-to-device copy_ of %.0f MiB, read + written): %.1f GB/s" %
          (copy_bytes / MIB, copy_gbs))
    print("%-13s %-9s %-10s %-4s %-17s %9s %9s %9s %8s %7s" % (
        "peer", "op", "kind", "type", "shape", "us", "min", "max", "GB/s", "roof"))
    sys.stdout.flush()

    records = []
    t_start = time.time()

    def emit(r):
        records.append(r)
        print(row_text(r))
        sys.stdout.flush()
        if args.json:
            with open(args.json, "w") as f:
                json.dump(records, f, indent=1)
                f.write("\n")

    for c in cases:
        run_case(torch, c, fns, dtypes, s, copy_gbs, emit)
        torch.cuda.empty_cache()
    failed = sum(r["status"] != "ok" for r in records)
    differs = sum(not r.get("agrees", True) for r in records)
    print("gated-peers: %d records (%d failed, %d compiled results differ from eager) in %.0f s"
          % (len(records), failed, differs, time.time() - t_start))
    if args.json:
        print("gated-peers: JSON in %s" % args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
