#!/usr/bin/env python3
"""capacity_model.py: the two capacity-aware layouts of docs/capacity.md, modelled.

The same workload as capacity_fill.sh (targets of 12, 12, 7 and 7 units of
10 MiB, 512 KiB chunks, files of 64 KiB to 8 MiB, log-uniform, written until
the first one that does not fit) with the chooser's smooth weighted
round-robin by free space, seen `--stale` files late (the heartbeat), for:

  narrow   a file's targets are `--widths` of the four (default width below
           the target count; what stripefs does);
  chunks   the alternative: every file over its targets, with chunks per
           target following the targets' sizes (12:12:7:7 per round of 38).

Prints the spread (largest |fill - mean| in % of the mean) and the usable
capacity (% of the sum) per seed. It is a model, not a measurement of
stripefs: `chunks` is not implemented (it changes the layout math, the
chunk-file naming and every reader of a pattern).

    python3 benchmarks/capacity_model.py [--stale 10] [--seeds 8]
"""
import argparse
import random

CHUNK = 512 * 1024
MIB = 1 << 20


def run(mode, widths, seed, stale, unit=10):
    caps = [12 * unit * MIB, 12 * unit * MIB, 7 * unit * MIB, 7 * unit * MIB]
    rnd = random.Random(seed)
    used, cur, first = [0] * 4, [0] * 4, [0] * 4
    seen, files = list(caps), 0
    while True:
        if files % stale == 0:
            seen = [c - u for c, u in zip(caps, used)]
        width = rnd.choice(widths)
        size = int(2 ** rnd.uniform(16, 23))
        weight = [f // 1024 if f >= max(c // 100, MIB) else 0 for f, c in zip(seen, caps)]
        usable = [i for i in range(4) if weight[i]]
        if not usable:
            break
        k = min(width, len(usable))
        picked, total = [], sum(weight)
        for _ in range(k):
            best = None
            for i in usable:
                cur[i] += weight[i]
                if i not in picked and (best is None or cur[i] > cur[best]):
                    best = i
            cur[best] -= total
            picked.append(best)
        if k > 1:  # the first target by its own weighted round-robin
            s, b = sum(weight[i] for i in picked), 0
            for j, i in enumerate(picked):
                first[i] += weight[i]
                if first[i] > first[picked[b]]:
                    b = j
            first[picked[b]] -= s
            picked = picked[b:] + picked[:b]
        if mode == "chunks":  # 12:12:7:7 chunks per round, interleaved
            per = {i: caps[i] // (unit * MIB) for i in picked}
            seq, done = [], {i: 0 for i in picked}
            while len(seq) < sum(per.values()):
                i = min(picked, key=lambda t: (done[t] / per[t], picked.index(t)))
                seq.append(i)
                done[i] += 1
        else:
            seq = picked
        add = [0] * 4
        for c in range((size + CHUNK - 1) // CHUNK):
            add[seq[c % len(seq)]] += min(CHUNK, size - c * CHUNK)
        if any(used[i] + add[i] > caps[i] for i in range(4)):
            break
        used = [u + a for u, a in zip(used, add)]
        files += 1
    fill = [u / c for u, c in zip(used, caps)]
    mean = sum(fill) / 4
    return 100 * max(abs(f - mean) for f in fill) / mean, 100 * sum(used) / sum(caps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stale", type=int, default=10, help="files between free-space updates")
    ap.add_argument("--seeds", type=int, default=8)
    a = ap.parse_args()
    cases = [("narrow", [4], "every file over all 4 (the old Imaging default)"),
             ("narrow", [3], "width 3"), ("narrow", [2], "width 2"),
             ("narrow", [1, 2, 3, 4], "widths 1-4 mixed"),
             ("chunks", [4], "chunks follow sizes, width 4"),
             ("chunks", [1, 2, 3, 4], "chunks follow sizes, widths 1-4")]
    print(f"model, free space seen {a.stale} files late; per seed: spread % / usable %")
    for mode, widths, name in cases:
        r = [run(mode, widths, s, a.stale) for s in range(a.seeds)]
        worst = max(x[0] for x in r)
        print(f"  {name:42s} " + " ".join(f"{x[0]:4.1f}/{x[1]:4.1f}" for x in r) +
              f"   worst spread {worst:.1f}")


if __name__ == "__main__":
    main()
