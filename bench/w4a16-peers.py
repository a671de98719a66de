# SPDX-License-Identifier: Apache-2.0
# Peers of the W4A16 GEMM on the GPU (development, beside bench/probes/w4a16-probe.c):
# f16/bf16 torch.matmul (cuBLAS) and torch's int4 _weight_int4pack_mm, on the
# same shapes and M, weights rotated over 8 copies, CUDA events, best of 5 means.
import torch
shapes = [(4096, 12288), (4096, 22016), (11008, 4096), (8192, 8192), (8192, 10240), (8192, 57344), (28672, 8192)]
ms = [1, 4, 16, 64, 256]
def timeit(fn, sets):
    for i in range(3): fn(i % sets)
    torch.cuda.synchronize()
    best = 1e30
    for t in range(5):
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record()
        for i in range(25 * sets): fn(i % sets)
        e.record(); torch.cuda.synchronize()
        best = min(best, s.elapsed_time(e) * 1e3 / (25 * sets))
    return best
print("peer      type     K      N     M         us")
for dt in (torch.float16, torch.bfloat16):
    for k, n in shapes:
        w = [torch.randn(k, n, dtype=dt, device="cuda") for _ in range(4)]
        q = [torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device="cuda") for _ in range(8)]
        try:
            packed = [torch.ops.aten._convert_weight_to_int4pack(x, 8) for x in q]
        except Exception as ex:
            packed = None; print("int4pack unavailable:", ex)
        sz = torch.rand(k // 128, n, 2, dtype=dt, device="cuda")
        for m in ms:
            a = torch.randn(m, k, dtype=dt, device="cuda")
            tm = timeit(lambda i: a @ w[i % 4], 4)
            print(f"cublas    {str(dt)[6:]:8s} {k:6d} {n:6d} {m:5d} {tm:10.2f}")
            if packed is not None and dt == torch.bfloat16:
                ti = timeit(lambda i: torch.ops.aten._weight_int4pack_mm(a, packed[i], 128, sz), 8)
                print(f"int4mm    {str(dt)[6:]:8s} {k:6d} {n:6d} {m:5d} {ti:10.2f}")
