#!/usr/bin/env python3
"""bw_summary.py CSV SUMMARY GOALS: bw.sh's summary and goal lines.

SUMMARY, one line per (layout-access, op, transfer size): the median MiB/s of
each side and their ratio (columns 1-6, which plot.sh reads), then each
side's min and max over the reps. GOALS: per (layout-access, op) the geometric
mean over the transfer sizes of the ratio of the medians; for a goal, also
of the worst pairing (stripefs's slowest rep against local's fastest) and of
the best one: "met" only when the worst reaches the goal, "NOT met" when even
the best does not, "within the reps' spread" otherwise.
"""
import csv
import math
import statistics
import sys

GOALS = [("fpp-indep", "write", 0.85), ("shared-coll", "write", 0.85),
         ("shared-indep", "write", None), ("fpp-indep", "read", None),
         ("shared-coll", "read", None), ("shared-indep", "read", None)]

vals, order = {}, []
for r in csv.DictReader(open(sys.argv[1])):
    key = (r["layout"] + "-" + r["access"], r["op"], int(r["xfer_bytes"]))
    if key not in vals:
        vals[key] = {"stripefs": [], "local": []}
        order.append(key)
    vals[key][r["api"]].append(float(r["MiB_s"]))

rows = []
with open(sys.argv[2], "w") as f:
    w = csv.writer(f)
    w.writerow(["mode", "op", "xfer_bytes", "stripefs_MiB_s", "local_MiB_s", "ratio",
                "stripefs_min", "stripefs_max", "local_min", "local_max", "reps"])
    for key in order:
        s, l = vals[key]["stripefs"], vals[key]["local"]
        sm = statistics.median(s) if s else None
        lm = statistics.median(l) if l else None
        ratio = sm / lm if sm is not None and lm else None
        w.writerow([key[0], key[1], key[2], "%.1f" % sm if sm is not None else "-",
                    "%.1f" % lm if lm is not None else "-", "%.2f" % ratio if ratio else "-",
                    "%.1f" % min(s) if s else "-", "%.1f" % max(s) if s else "-",
                    "%.1f" % min(l) if l else "-", "%.1f" % max(l) if l else "-",
                    min(len(s), len(l))])
        rows.append((key, s, l))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


with open(sys.argv[3], "w") as f:
    f.write("bandwidth goals (geometric mean over the transfer sizes of stripefs/local; "
            "worst and best pairings of the reps in brackets):\n")
    for mode, op, goal in GOALS:
        sel = [(s, l) for (k, s, l) in rows if k[0] == mode and k[1] == op and s and l and min(l) > 0]
        if not sel:
            continue
        med = geomean([statistics.median(s) / statistics.median(l) for s, l in sel])
        worst = geomean([min(s) / max(l) for s, l in sel])
        best = geomean([max(s) / min(l) for s, l in sel])
        line = "  %-12s %-5s stripefs/local = %.2f [%.2f-%.2f]" % (mode, op, med, worst, best)
        if goal is not None:
            verdict = ("met" if worst >= goal else "NOT met" if best < goal
                       else "within the reps' spread")
            line += "   (goal >= %s: %s)" % (goal, verdict)
        f.write(line + "\n")
