#!/usr/bin/env python3
"""ucx_summary.py CSV SUMMARY GOALS: ucx.sh's summary and goal lines.

SUMMARY: min/median/max per (where, tls, what, size, depth) and the ratio of
its median to its ceiling's median: ucx_perftest -e at the same place, TLS and
size for the lines through the server; local pread and memcpy for the
same-host ones. GOALS: issue 14's "reads through the server across hosts at
least 0.9 x ucx_perftest -e at the same size", said to be met only outside
the reps' spread (the worst stripefs rep against the best UCX rep).
"""
import csv
import statistics
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    k = (r["where"], r["tls"], r["what"], r["xfer_bytes"], r["depth"])
    groups.setdefault(k, []).append(float(r["MiB_s"]))
med = {k: statistics.median(v) for k, v in groups.items()}


def ceiling(k):
    where, tls, what, xfer, _ = k
    if what.startswith("stripefs-") and what.endswith("-ucx"):
        return "ucx_perftest -e", med.get((where, tls, "ucx_perftest-am_bw-e", xfer, "1"))
    if what == "stripefs-read-shortcircuit":
        return "local pread", med.get((where, tls, "local-pread", xfer, "1"))
    if what == "stripefs-read-directcopy":
        return "memcpy", med.get((where, tls, "memcpy-stream", xfer, "1"))
    return "", None


def size(x):
    if x == "-":
        return x
    return "%dM" % (int(x) >> 20) if int(x) >= 1 << 20 else x


with open(sys.argv[2], "w") as f:
    w = csv.writer(f)
    w.writerow(["where", "tls", "what", "xfer", "depth", "reps", "min_MiB_s", "median_MiB_s",
                "max_MiB_s", "ceiling", "vs_ceiling"])
    for k, v in groups.items():
        name, c = ceiling(k)
        w.writerow([k[0], k[1], k[2], size(k[3]), k[4], len(v), "%.0f" % min(v), "%.0f" % med[k],
                    "%.0f" % max(v), name, "%.2f" % (med[k] / c) if c else "-"])

with open(sys.argv[3], "w") as f:
    for where in ("cluster", "onehost"):
        for (w_, tls, what, xfer, depth), s in sorted(groups.items()):
            if w_ != where or tls != "tcp" or what != "stripefs-read-ucx":
                continue
            u = groups.get((where, tls, "ucx_perftest-am_bw-e", xfer, "1"))
            if not u:
                continue
            ratio = med[(w_, tls, what, xfer, depth)] / statistics.median(u)
            verdict = ("met" if min(s) / max(u) >= 0.9 else
                       "NOT met" if max(s) / min(u) < 0.9 else "within the reps' spread")
            line = ("goal: read through the server >= 0.9 x ucx_perftest -e (%s, UCX_TLS=tcp, %s, "
                    "%s in flight): %.2f of the median (stripefs %.0f-%.0f, UCX %.0f-%.0f MiB/s, "
                    "%d/%d reps): %s" % ("two hosts" if where == "cluster" else "one host over loopback",
                                         size(xfer), depth, ratio, min(s), max(s), min(u), max(u),
                                         len(s), len(u), verdict))
            print(line)
            f.write(line + "\n")
