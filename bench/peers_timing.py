# SPDX-License-Identifier: Apache-2.0
"""The timing loop the PyTorch peer scripts share (bench/*-peers.py): runs timed with CUDA
events back to back on one stream, and the device's read bandwidth measured the same way."""


def percentiles(torch, fn, runs, warmup, repeats):
    """fn(i) queues run i of runs (the runs rotate); times each of the timed runs between two
    events. The median, 10th and 90th percentile in us."""
    for i in range(warmup):
        fn(i % runs)
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(repeats)]
    for i, (start, end) in enumerate(events):
        start.record()
        fn((warmup + i) % runs)
        end.record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) * 1000.0 for s, e in events)
    pick = lambda f: times[min(len(times) - 1, int(f * len(times)))]
    return pick(0.5), pick(0.1), pick(0.9)


def read_bandwidth(torch):
    """Bytes read per second by a sum over a 4 GiB tensor."""
    x = torch.ones(1 << 30, dtype=torch.float32, device="cuda")  # 4 GiB
    med, _, _ = percentiles(torch, lambda i: x.sum(), 1, 3, 20)
    del x
    return (4.0 * (1 << 30)) / (med * 1e-6)
