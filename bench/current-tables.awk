# SPDX-License-Identifier: Apache-2.0
# bench/CURRENT.md from the runs json-flat.awk read into V[file, path]:
# one table per op family, each from the newest run that has the family.
# A ratio is always libbk's speed over the peer's (the peer's time over
# libbk's): above 1, libbk is faster.

function has(f, p) { return (f, p) in V }
function get(f, p) { return has(f, p) ? V[f, p] : "" }

# The records of list p (keys "p.0.op", "p.1.op", ...): how many.
function count(f, p, key,   n) {
    n = 0
    while (has(f, p "." n "." key))
        n++
    return n
}

function num(x, fmt) { return x == "" ? "-" : sprintf(fmt, x) }
# As bkbench prints them: TFLOP/s with 1 decimal from 100, 2 from 1.
function tf(x) { return x == "" ? "-" : x + 0 >= 100 ? sprintf("%.1f", x) : x + 0 >= 1 ? sprintf("%.2f", x) : sprintf("%.4f", x) }
function us(x) { return x == "" ? "-" : x + 0 < 10000 ? sprintf("%.1f", x) : sprintf("%.0f", x) }
function pct(x) { return x == "" ? "-" : sprintf("%.1f%%", 100 * x) }
function ratio(x) { return x == "" || x + 0 <= 0 ? "-" : sprintf("%.2fx", x) }
function quot(a, b) { return a == "" || b == "" || b + 0 == 0 ? "" : a / b }

function family_of(f, list, i,   lq, lk, set) {
    if (list == "bkbench.results")
        return get(f, list "." i ".op") ~ /^gated/ ? "gated" : ""
    if (list != "bkbench.attention")
        return substr(list, 9)
    lq = get(f, list "." i ".lq")
    lk = get(f, list "." i ".lk")
    if (lq != "" && lk != "" && lq + 0 < lk + 0)
        return "decode"
    # bkbench's attention sets: the patterns (runs before the field had no
    # other), the head-size sweep, packed sequences, training shapes; F32
    # ("f32") a family of its own.
    set = get(f, list "." i ".set")
    return set == "heads" || set == "varlen" || set == "train" || set == "f32" ? set : "attention"
}

# The newest run (date, then file name) with a record of family fam; a
# run on a GPU before any on the host backend, which is the reference,
# not a contender.
function newest(fam, list,   k, f, i, n, best, bkey, key) {
    best = ""
    for (k = 1; k <= NFILES; k++) {
        f = FILES[k]
        n = count(f, list, "op")
        for (i = 0; i < n; i++)
            if (family_of(f, list, i) == fam)
                break
        if (i == n)
            continue
        key = (get(f, "bkbench.device.type") == "host" ? "0 " : "1 ") get(f, "date") " " f
        if (best == "" || key > bkey) {
            best = f
            bkey = key
        }
    }
    return best
}

# The newest run on the host backend (date, then file name) with a record
# in list: the host's own tables, beside the library it runs on.
function newest_host(list,   k, f, best, bkey, key) {
    best = ""
    for (k = 1; k <= NFILES; k++) {
        f = FILES[k]
        if (get(f, "bkbench.device.type") != "host" || count(f, list, "op") == 0)
            continue
        key = get(f, "date") " " f
        if (best == "" || key > bkey) {
            best = f
            bkey = key
        }
    }
    return best
}

function stamp(f,   dev, s, name) {
    dev = get(f, "device")
    if (dev == "")
        dev = get(f, "bkbench.device.name")
    name = f
    sub(/.*\/bench\/data\//, "bench/data/", name)
    s = "Device: " dev ". Date: " get(f, "date") ". Commit: " get(f, "commit") \
        ". Data: `" name "`"
    if (get(f, "origin") == "transcribed")
        s = s " (transcribed from the results log: " get(f, "transcribedFrom") ")"
    print s "."
    if (get(f, "note") != "")
        print "\n" get(f, "note")
    print ""
}

function none(what) { print "No run in bench/data/ has " what " yet.\n" }

# Peer records: "peers" (written by hand or transcribed) and the report of
# bench/attention-peers.py kept whole under "attentionPeers".
function peer_lists(f,   n) {
    n = 0
    PL[++n] = "peers"
    PL[++n] = "attentionPeers.results"
    return n
}

# ---- gated activations ---------------------------------------------------

function gated(   f, L, n, i, g, ng, key, k, lo, lok, sum, cnt, mean, pk, pn, pf, j, m, q,
                  pr, prn, psum, pc, pm, peer, p, copy, shape, idx, kk) {
    print "## Gated activations\n"
    f = newest("gated", "bkbench.results")
    if (f == "")
        return none("gated activation figures")
    stamp(f)
    print "Fraction of the copy bandwidth measured in the same run (bytes: each input read once,"
    print "each output written once); torch.compile is the peer (the same op as a compiled PyTorch"
    print "function on the same shapes).\n"
    print "| op | dtype | cases | lowest (kind, shape) | mean | torch.compile mean | libbk / torch.compile |"
    print "| --- | --- | --- | --- | --- | --- | --- |"
    L = "bkbench.results"
    n = count(f, L, "op")
    copy = get(f, "bkbench.copy.gbPerS")
    ng = 0
    for (i = 0; i < n; i++) {
        if (family_of(f, L, i) != "gated" || get(f, L "." i ".status") != "ok")
            continue
        key = get(f, L "." i ".op") " " get(f, L "." i ".dtype")
        if (!(key in G)) {
            G[key] = ++ng
            GK[ng] = key
        }
        g = G[key]
        GM[g] = GM[g] " " i
    }
    pn = peer_lists(f)
    PL[++pn] = "gatedPeers"         # bench/gated-peers.py --json, kept whole
    for (g = 1; g <= ng; g++) {
        m = split(substr(GM[g], 2), idx, " ")
        lo = ""; sum = 0; cnt = 0; pr = 0; prn = 0; psum = 0; pc = 0
        for (k = 1; k <= m; k++) {
            i = idx[k]
            pm = prn
            q = get(f, L "." i ".roofline")
            if (lo == "" || q + 0 < lo + 0) {
                lo = q
                shape = get(f, L "." i ".shape.0") " x " get(f, L "." i ".shape.1")
                if (get(f, L "." i ".shape.0") == "")
                    shape = get(f, L "." i ".transcribed.shape")
                else if (get(f, L "." i ".inputStrides.0") != "")
                    shape = shape ", strided rows"
                lok = get(f, L "." i ".kind") ", " shape
            }
            cnt += get(f, L "." i ".transcribed.cases") != "" ? get(f, L "." i ".transcribed.cases") : 1
            sum += get(f, L "." i ".transcribed.meanRoofline") != "" ? get(f, L "." i ".transcribed.meanRoofline") * get(f, L "." i ".transcribed.cases") : q
            for (p = 1; p <= pn; p++)
                for (j = 0; has(f, PL[p] "." j ".peer"); j++) {
                    pf = PL[p] "." j
                    if (get(f, pf ".peer") != "torch.compile" || get(f, pf ".op") != get(f, L "." i ".op") ||
                        (has(f, pf ".status") && get(f, pf ".status") != "ok") ||
                        get(f, pf ".kind") != get(f, L "." i ".kind") ||
                        get(f, pf ".dtype") != get(f, L "." i ".dtype") ||
                        get(f, pf ".shape.0") != get(f, L "." i ".shape.0") ||
                        get(f, pf ".shape.1") != get(f, L "." i ".shape.1") ||
                        get(f, pf ".inputStrides.0") != get(f, L "." i ".inputStrides.0") ||
                        get(f, pf ".gbPerS") == "")
                        continue
                    pr += get(f, L "." i ".gbPerS") / get(f, pf ".gbPerS")
                    psum += get(f, pf ".gbPerS")
                    prn++
                }
            pc += (prn > pm)        # this case has a peer figure
        }
        split(GK[g], kk, " ")
        # A peer that ran some of the cases says how many.
        peer = prn ? pct(quot(psum / prn, copy)) : "not measured"
        if (prn && pc < m)
            peer = peer " (" pc " of " m " cases)"
        printf "| %s | %s | %d | %s (%s) | %s | %s | %s |\n", kk[1], kk[2], cnt, pct(lo), lok,
               pct(sum / cnt), peer, prn ? ratio(pr / prn) : "-"
    }
    print ""
}

# ---- dense GEMM ------------------------------------------------------------

function gemm(   f, L, n, i, r, dt, v) {
    print "## Dense GEMM\n"
    f = newest("gemm", "bkbench.gemm")
    if (f == "")
        return none("dense GEMM figures")
    stamp(f)
    print "TFLOP/s (2MNK over the median time), libbk from a reusable command buffer, cuBLASLt"
    print "called directly on the same operands (C = A B^T).\n"
    print "| dtype | M x N x K | libbk | cuBLASLt | libbk / cuBLASLt |"
    print "| --- | --- | --- | --- | --- |"
    L = "bkbench.gemm"
    n = count(f, L, "op")
    for (i = 0; i < n; i++) {
        r = L "." i
        if (get(f, r ".status") != "ok")
            continue
        dt = get(f, r ".tf32") == "true" ? "tf32" : get(f, r ".dtype")
        v = get(f, r ".reusableVsCublasLt")
        if (v == "")
            v = quot(get(f, r ".reusableTflopPerS"), get(f, r ".cublasLt.tflopPerS"))
        printf "| %s | %s x %s x %s | %s | %s | %s |\n", dt, get(f, r ".m"), get(f, r ".n"),
               get(f, r ".k"), tf(get(f, r ".reusableTflopPerS")), tf(get(f, r ".cublasLt.tflopPerS")),
               ratio(v)
    }
    print ""
}

# ---- 2:4 sparse GEMM -------------------------------------------------------

function sparse24(   f, L, n, i, r, v) {
    print "## 2:4 sparse GEMM\n"
    f = newest("sparse24", "bkbench.sparse24")
    if (f == "")
        return none("2:4 sparse GEMM figures")
    stamp(f)
    print "Dense-equivalent TFLOP/s (2MNK for both): libbk's dense GEMM and its 2:4 GEMM on the same"
    print "pruned weight, and cuSPARSELt on it; M tokens by a weight of N x K (Llama-70B's layers).\n"
    print "| dtype | layer | M x N x K | libbk dense | libbk 2:4 | 2:4 / dense | cuSPARSELt | libbk / cuSPARSELt |"
    print "| --- | --- | --- | --- | --- | --- | --- | --- |"
    L = "bkbench.sparse24"
    n = count(f, L, "op")
    for (i = 0; i < n; i++) {
        r = L "." i
        if (get(f, r ".status") != "ok")
            continue
        v = get(f, r ".sparseVsCusparseLt")
        if (v == "")
            v = quot(get(f, r ".sparseTflopPerS"), get(f, r ".cusparseLt.tflopPerS"))
        printf "| %s | %s | %s x %s x %s | %s | %s | %s | %s | %s |\n", get(f, r ".dtype"),
               get(f, r ".layer"), get(f, r ".n"), get(f, r ".m"), get(f, r ".k"),  # tokens, out, in
               tf(get(f, r ".denseTflopPerS")), tf(get(f, r ".sparseTflopPerS")),
               ratio(get(f, r ".speedup")), tf(get(f, r ".cusparseLt.tflopPerS")), ratio(v)
    }
    print ""
}

# ---- W4A16 -------------------------------------------------------------------

function w4a16(   f, L, n, i, r, p, pn, j, pf, peer, pus, dt, v) {
    print "## W4A16 GEMM\n"
    f = newest("w4a16", "bkbench.w4a16")
    if (f == "")
        return none("W4A16 figures")
    stamp(f)
    print "Microseconds a run, int4 weights of K x N in groups of 128 times M rows of activations;"
    print "\"of floor\" is the time to read the weights and scales at the copy bandwidth over the"
    print "time taken. The peer is PyTorch's `_weight_int4pack_mm` (bf16 only) where it ran, else"
    print "cuBLASLt's dense GEMM on the dequantized weight.\n"
    print "| dtype | layer | K x N | M | libbk us | of floor | peer | peer us | libbk / peer |"
    print "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    L = "bkbench.w4a16"
    n = count(f, L, "op")
    pn = peer_lists(f)
    for (i = 0; i < n; i++) {
        r = L "." i
        if (get(f, r ".status") != "ok")
            continue
        dt = get(f, r ".dtype")
        peer = ""
        pus = ""
        for (p = 1; p <= pn && peer == ""; p++)
            for (j = 0; has(f, PL[p] "." j ".peer"); j++) {
                pf = PL[p] "." j
                if (get(f, pf ".peer") == "torch-int4pack" && get(f, pf ".dtype") == dt &&
                    get(f, pf ".k") == get(f, r ".k") && get(f, pf ".n") == get(f, r ".n") &&
                    get(f, pf ".m") == get(f, r ".m") && get(f, pf ".us") != "") {
                    peer = "PyTorch int4"
                    pus = get(f, pf ".us")
                    break
                }
            }
        v = quot(pus, get(f, r ".us"))
        if (peer == "" && get(f, r ".dense.us") != "") {
            peer = "cuBLASLt dense"
            pus = get(f, r ".dense.us")
            v = get(f, r ".denseOverW4a16")
        }
        printf "| %s | %s%s | %s x %s | %s | %s | %s | %s | %s | %s |\n", dt,
               get(f, r ".model") != "" ? get(f, r ".model") " " : "", get(f, r ".layer"),
               get(f, r ".k"), get(f, r ".n"), get(f, r ".m"), us(get(f, r ".us")),
               pct(get(f, r ".ofFloor")), peer == "" ? "-" : peer, us(pus), ratio(v)
    }
    print ""
}

# ---- the host's GEMM family beside its BLAS -----------------------------------

function host_row(op, dt, m, n, k, mine, blas, v) {
    printf "| %s | %s | %s x %s x %s | %s | %s | %s |\n", op, dt, m, n, k, tf(mine), tf(blas),
           ratio(v)
}

function host_gemm(   f, L, n, i, r, dt, shape, B) {
    print "## Host GEMMs beside the BLAS\n"
    f = newest_host("bkbench.gemm")
    if (f == "")
        return none("host GEMM figures")
    stamp(f)
    print "TFLOP/s (2MNK over the median time) of the host backend's GEMMs, which hand their"
    print "products to a BLAS, beside that BLAS called directly in the same run: dense f32 and f64"
    print "on the same operands, run by run; the 2:4 and W4A16 GEMMs (f16, bf16 activations) beside"
    print "its sgemm of the same M, N and K on f32 operands, in the same rounds; dense f16 and bf16"
    print "beside the f32 row's BLAS figure. libbk / BLAS: the BLAS's time over libbk's.\n"
    print "| op | dtype | M x N x K | libbk | BLAS | libbk / BLAS |"
    print "| --- | --- | --- | --- | --- | --- |"
    L = "bkbench.gemm"
    n = count(f, L, "op")
    for (i = 0; i < n; i++) {
        r = L "." i
        if (get(f, r ".dtype") == "f32" && get(f, r ".cublasLt.tflopPerS") != "")
            B[get(f, r ".shape")] = get(f, r ".cublasLt.tflopPerS")
    }
    for (i = 0; i < n; i++) {
        r = L "." i
        if (get(f, r ".status") != "ok")
            continue
        dt = get(f, r ".dtype")   # tf32 rows: f32 on the host
        shape = get(f, r ".shape")
        if (get(f, r ".cublasLt.tflopPerS") != "")
            host_row("dense", dt, get(f, r ".m"), get(f, r ".n"), get(f, r ".k"),
                     get(f, r ".reusableTflopPerS"), get(f, r ".cublasLt.tflopPerS"),
                     get(f, r ".reusableVsCublasLt"))
        else if (shape in B)
            host_row("dense", dt, get(f, r ".m"), get(f, r ".n"), get(f, r ".k"),
                     get(f, r ".reusableTflopPerS"), B[shape],
                     quot(get(f, r ".reusableTflopPerS"), B[shape]))
    }
    L = "bkbench.sparse24"
    n = count(f, L, "op")
    for (i = 0; i < n; i++) {
        r = L "." i
        if (get(f, r ".status") == "ok" && get(f, r ".blas.tflopPerS") != "")
            host_row("2:4", get(f, r ".dtype"), get(f, r ".n"), get(f, r ".m"), get(f, r ".k"),
                     get(f, r ".sparseTflopPerS"), get(f, r ".blas.tflopPerS"),
                     get(f, r ".sparseVsBlas"))
    }
    L = "bkbench.w4a16"
    n = count(f, L, "op")
    for (i = 0; i < n; i++) {
        r = L "." i
        if (get(f, r ".status") == "ok" && get(f, r ".blas.tflopPerS") != "")
            host_row("W4A16", get(f, r ".dtype"), get(f, r ".m"), get(f, r ".n"), get(f, r ".k"),
                     get(f, r ".tflopPerS"), get(f, r ".blas.tflopPerS"), get(f, r ".vsBlas"))
    }
    print ""
}

# ---- attention ---------------------------------------------------------------

# The attention peers' names in the tables.
BEGIN {
    PEER_NAMES["fa4"] = "FA4"
    PEER_NAMES["sdpa"] = "SDPA"
    PEER_NAMES["sdpa-loop"] = "SDPA loop"
    PEER_NAMES["sdpa-c"] = "SDPA"
    PEER_NAMES["flex"] = "Flex"
}

# The peer a user would pick beside an attention row: for the dense
# patterns (full, causal) FlashAttention-4 where the run has it, else
# PyTorch's SDPA; SDPA once a sequence for the packed ones; FlexAttention
# on the same blocks for the others. Its name goes to PEER_NAME.
function attention_peer(f, r, op,   p, pn, j, pf, w, nw, want, pat) {
    pat = get(f, r ".pattern")
    if (get(f, r ".form") == "list")
        return ""
    nw = split(pat == "full" ? "fa4 sdpa" : pat == "causal" ? "fa4 sdpa sdpa-c" : \
               pat ~ /^varlen/ ? "sdpa-loop" : "flex", want, " ")
    pn = peer_lists(f)
    for (w = 1; w <= nw; w++)
        for (p = 1; p <= pn; p++)
            for (j = 0; has(f, PL[p] "." j ".peer"); j++) {
                pf = PL[p] "." j
                if (get(f, pf ".peer") != want[w] || get(f, pf ".op") != op ||
                    get(f, pf ".status") != "ok" || get(f, pf ".dtype") != get(f, r ".dtype") ||
                    get(f, pf ".d") != get(f, r ".d") || get(f, pf ".pattern") != pat ||
                    get(f, pf ".lq") != get(f, r ".lq") || get(f, pf ".lk") != get(f, r ".lk") ||
                    (has(f, pf ".dv") && get(f, pf ".dv") != get(f, r ".dv")) ||
                    (has(f, pf ".batch") && get(f, pf ".batch") != get(f, r ".batch")))
                    continue
                if (want[w] == "flex" && get(f, pf ".blockQ") != get(f, r ".blockQ"))
                    continue
                PEER_NAME = PEER_NAMES[want[w]]
                return get(f, pf ".tflopPerS")
            }
    return ""
}

function attention_rows(f, fam,   L, n, i, r, key, seen, k, nk, KEYS, fw, bw, pfw, pbw, nf, nb,
                        pat) {
    L = "bkbench.attention"
    n = count(f, L, "op")
    nk = 0
    for (i = 0; i < n; i++) {
        if (family_of(f, L, i) != fam)
            continue
        r = L "." i
        pat = get(f, r ".pattern") (get(f, r ".form") == "list" ? " list" : "")
        # The training shapes differ in B and L, which their rows name.
        if (fam == "train")
            pat = "B" get(f, r ".batch") " L" get(f, r ".lq") " " pat
        key = get(f, r ".dtype") SUBSEP get(f, r ".d") \
              (has(f, r ".dv") && get(f, r ".dv") != get(f, r ".d") ? " / " get(f, r ".dv") : "") \
              SUBSEP get(f, r ".blockQ") SUBSEP pat \
              SUBSEP get(f, r ".lq") SUBSEP get(f, r ".lk") SUBSEP get(f, r ".batch") SUBSEP \
              get(f, r ".heads")
        if (!(key in seen)) {
            seen[key] = 1
            KEYS[++nk] = key
        }
        if (get(f, r ".status") != "ok")
            continue
        if (get(f, r ".op") == "attention-bwd")
            BW[key] = r
        else
            FW[key] = r
    }
    for (k = 1; k <= nk; k++) {
        split(KEYS[k], kk, SUBSEP)
        fw = FW[KEYS[k]]
        bw = BW[KEYS[k]]
        PEER_NAME = ""
        pfw = fw != "" ? attention_peer(f, fw, "attention-fwd") : ""
        nf = PEER_NAME
        PEER_NAME = ""
        pbw = bw != "" ? attention_peer(f, bw, "attention-bwd") : ""
        nb = PEER_NAME
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", kk[1], kk[2], kk[3],
               kk[4], tf(fw != "" ? get(f, fw ".tflopPerS") : ""), pfw == "" ? "-" : nf " " tf(pfw),
               ratio(quot(fw != "" ? get(f, fw ".tflopPerS") : "", pfw)),
               tf(bw != "" ? get(f, bw ".tflopPerS") : ""), pbw == "" ? "-" : nb " " tf(pbw),
               ratio(quot(bw != "" ? get(f, bw ".tflopPerS") : "", pbw))
    }
    delete FW
    delete BW
}

# A table of attention records of family fam under heading, from the
# newest run that has it (what: the words for none), intro before it; its
# fourth column is named column ("pattern" when empty).
function attention_section(fam, heading, what, intro, column,   f) {
    print "## " heading "\n"
    f = newest(fam, "bkbench.attention")
    if (f == "")
        return none(what)
    stamp(f)
    print intro "\n"
    print "| dtype | D | block | " (column == "" ? "pattern" : column) \
          " | forward | peer | libbk / peer | backward | peer | libbk / peer |"
    print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    attention_rows(f, fam)
    print ""
}

# The head-size sweep: every D at a shorter L, beside SDPA.
function heads() {
    attention_section("heads", "Attention at every head size", "a head-size sweep",
        "TFLOP/s over the active blocks (forward 2 x block x block x (D + Dv) each, backward\n" \
        "2.5 times that), L = 4096 on the GPU, H = 2048 / D, dense (\"full\") and 25% of the key\n" \
        "blocks; D / Dv where they differ. The peer is PyTorch's SDPA for the dense pattern.")
}

# Packed sequences of their own lengths beside the dense kernels on the
# same causal pattern, and SDPA called once a sequence.
function varlen() {
    attention_section("varlen", "Attention over packed sequences", "packed-sequence figures",
        "TFLOP/s over each sequence's own active blocks: 16 sequences of 512 to 8192 tokens\n" \
        "summing to 65536, packed (B = 1, L their sum; varlen-c causal), beside the dense\n" \
        "kernels' causal case at B x 8192. The peer is PyTorch's SDPA called once a sequence;\n" \
        "beside the causal case FlashAttention-4 where the run has it, else SDPA (is_causal).")
}

# Many short sequences, dense and causal, beside FlashAttention-4 and SDPA.
function train() {
    attention_section("train", "Attention at training shapes", "training-shape figures",
        "TFLOP/s over the active blocks (forward 4 x block x block x D each, backward 2.5 times\n" \
        "that) of many short sequences, B x L = 16384 on the GPU, H x D = 2048, dense (\"full\")\n" \
        "and causal, whose blocks on the diagonal count whole (10 of 16 at L = 512, 36 of 64 at\n" \
        "L = 1024). The peer is FlashAttention-4 where the run has it, else PyTorch's SDPA\n" \
        "(is_causal for the causal rows).", "case")
}

# F32 inputs (3xTF32 on the tensor cores) beside SDPA's F32 path.
function f32() {
    attention_section("f32", "Attention with F32 inputs", "F32 attention figures",
        "TFLOP/s (forward 4 x L x L x D a head, backward 2.5 times that; causal over the active\n" \
        "blocks), B = 2, L = 4096, H x D = 2048, dense (\"full\") and causal. libbk keeps F32's\n" \
        "accuracy on TF32 tensor cores (3xTF32); the peer is PyTorch's SDPA with F32 inputs and\n" \
        "TF32 off (is_causal for the causal row).")
}

function attention(   f) {
    print "## Attention, forward and backward\n"
    f = newest("attention", "bkbench.attention")
    if (f == "")
        return none("attention figures")
    stamp(f)
    print "TFLOP/s over the active blocks (forward 4 x block x block x D each, backward 2.5 times"
    printf "that), B = %s, L = %s, H x D = %s. The peer is PyTorch's SDPA for the dense pattern and\n",
           get(f, "bkbench.attention.0.batch"), get(f, "bkbench.attention.0.lq"),
           get(f, "bkbench.attention.0.heads") * get(f, "bkbench.attention.0.d")
    print "FlexAttention on the same blocks for the others; \"10% list\" is the 10% pattern given as"
    print "a LIST, which FlexAttention has no form of.\n"
    print "| dtype | D | block | pattern | forward | peer | libbk / peer | backward | peer | libbk / peer |"
    print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    attention_rows(f, "attention")
    print ""
}

# The record of list (or of "peers") whose case and peer are these: its
# path, or "".
function peer_by_case(f, list, name, peer,   p, j, L) {
    for (p = 1; p <= 2; p++) {
        L = p == 1 ? list : "peers"
        for (j = 0; has(f, L "." j ".case"); j++)
            if (get(f, L "." j ".case") == name && get(f, L "." j ".peer") == peer &&
                get(f, L "." j ".us") != "")
                return L "." j
    }
    return ""
}

# Whether list (or "peers") has a record of peer with a time; with paged,
# one of a paged case (its name ends in " page<N>").
function has_peer(f, list, peer, paged,   p, j, L) {
    for (p = 1; p <= 2; p++) {
        L = p == 1 ? list : "peers"
        for (j = 0; has(f, L "." j ".case"); j++)
            if (get(f, L "." j ".peer") == peer && get(f, L "." j ".us") != "" &&
                (!paged || get(f, L "." j ".case") ~ / page[0-9]+$/))
                return 1
    }
    return 0
}

# The peer columns of a decode row: peer record pf's median, its 10th to
# 90th percentile and libbk's speed over it (libbk's median in row r).
function decode_peer(f, r, pf) {
    return sprintf(" %s | %s | %s |", pf == "" ? "-" : us(get(f, pf ".us")),
                   pf == "" ? "-" : us(get(f, pf ".us_p10")) " - " us(get(f, pf ".us_p90")),
                   pf == "" ? "-" : ratio(quot(get(f, pf ".us"), get(f, r ".us"))))
}

function decode(   f, L, n, i, r, fa4, P, last) {
    print "## Attention over a KV cache (decode)\n"
    f = newest("attentionDecode", "bkbench.attentionDecode")
    if (f == "")
        return none("attention-decode figures")
    stamp(f)
    P = "attentionDecodePeers"
    fa4 = has_peer(f, P, "fa4", 0)
    print "Microseconds a run (median, and min to max), q [B, H, Lq, D] against K and V [B, Hkv, Lk, D],"
    print "causal aligned bottom-right where named, \"pageN\": K and V in a pool of pages of N keys"
    print "[pages, Hkv, N, D] read through a block table (\"NHD\": the pool stored [pages, N, Hkv, D],"
    print "as vLLM and FlashAttention store theirs); GB/s: the K + V bytes over the median; \"of copy\":"
    if (!fa4) {
        print "of the copy bandwidth measured in the same run. The peer is PyTorch's SDPA with enable_gqa"
        last = "(`bench/attention-decode-peers.py`: median, and 10th to 90th percentile)."
    } else {
        print "of the copy bandwidth measured in the same run. The peers are PyTorch's SDPA with enable_gqa"
        print "and FlashAttention-4 (`flash_attn.cute`; a paged case on its own page pool and block"
        last = "table), both from `bench/attention-decode-peers.py`: median, and 10th to 90th percentile."
    }
    if (has_peer(f, P, "sdpa", 1)) {
        print last
        last = "SDPA takes no block table: on a paged case it reads the same keys gathered into a contiguous cache."
    }
    print last "\n"
    printf "| case | libbk us | min - max | GB/s | of copy | SDPA us | p10 - p90 | libbk / SDPA |%s\n",
           fa4 ? " FA4 us | p10 - p90 | libbk / FA4 |" : ""
    printf "| --- | --- | --- | --- | --- | --- | --- | --- |%s\n", fa4 ? " --- | --- | --- |" : ""
    L = "bkbench.attentionDecode"
    n = count(f, L, "op")
    for (i = 0; i < n; i++) {
        r = L "." i
        if (get(f, r ".status") != "ok")
            continue
        printf "| %s | %s | %s - %s | %s | %s |%s%s\n", get(f, r ".case"),
               us(get(f, r ".us")), us(get(f, r ".usMin")), us(get(f, r ".usMax")),
               num(get(f, r ".gbPerS"), "%.1f"), pct(get(f, r ".roofline")),
               decode_peer(f, r, peer_by_case(f, P, get(f, r ".case"), "sdpa")),
               fa4 ? decode_peer(f, r, peer_by_case(f, P, get(f, r ".case"), "fa4")) : ""
    }
    print ""
}

# ---- decode step ---------------------------------------------------------------

function decode_step(   f, L, n, i, r, pf, k, ops, names, where, c) {
    print "## Decode step (one Llama-3-70B layer)\n"
    f = newest("decodeStep", "bkbench.decodeStep")
    if (f == "")
        return none("decode-step figures")
    stamp(f)
    print "Microseconds a step of one decoder layer from one reusable command buffer (W4A16 qkv,"
    print "attention over the KV cache, W4A16 o, W4A16 gate-up, SwiGLU, W4A16 down; bf16, M rows,"
    print "KV cache length), layers rotated; \"of floor\": the int4 weights, scales, K and V read once"
    print "at the copy bandwidth over the step's time; then each op timed alone. The peer is the same"
    print "step in PyTorch (`bench/decode-step-peers.py`: `_weight_int4pack_mm`, SDPA, silu). Cases"
    print "ending in \"zp\" have weights with zero points; PyTorch's int4 kernel always applies them,"
    print "so their peer is the case without the suffix.\n"
    print "| case | libbk us | of floor | PyTorch us | libbk / PyTorch | ops alone, us |"
    print "| --- | --- | --- | --- | --- | --- |"
    L = "bkbench.decodeStep"
    n = count(f, L, "op")
    split("qkv attention o gateUp swiglu down", ops, " ")
    split("qkv attention o gate-up swiglu down", names, " ")
    for (i = 0; i < n; i++) {
        r = L "." i
        if (get(f, r ".status") != "ok")
            continue
        where = ""
        for (k = 1; k <= 6; k++)
            where = where (k > 1 ? ", " : "") names[k] " " us(get(f, r "." ops[k] ".us"))
        c = get(f, r ".case")
        sub(/ zp$/, "", c)
        pf = peer_by_case(f, "decodeStepPeers", c, "torch")
        printf "| %s | %s | %s | %s | %s | %s |\n", get(f, r ".case"), us(get(f, r ".us")),
               pct(get(f, r ".ofFloor")), pf == "" ? "-" : us(get(f, pf ".us")),
               pf == "" ? "-" : ratio(quot(get(f, pf ".us"), get(f, r ".us"))), where
    }
    print ""
}

END {
    if (jf_failed)
        exit 1
    if (jf_sp != 0) {
        print "bench/current.sh: unterminated JSON at the end of " FILES[NFILES] > "/dev/stderr"
        exit 1
    }
    print "# Current results"
    print ""
    print "Generated by `bench/current.sh` from the runs in `bench/data/` (do not edit: add a run"
    print "and rerun the script; `bench/data/README.md` says how). Each table comes from the newest"
    print "run that measured its family and names that run's device, date and commit. A ratio is"
    print "libbk's speed over the peer's, both measured in the same run: above 1.00x libbk is faster."
    print "How the figures moved, and why, is in `bench/log/`; the design behind them in"
    print "`doc/design/`."
    print ""
    gated()
    gemm()
    sparse24()
    w4a16()
    host_gemm()
    attention()
    heads()
    f32()
    varlen()
    train()
    decode()
    decode_step()
}
