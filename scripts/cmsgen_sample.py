"""CMSGen (pycmsgen) samples of a DIMACS formula: up to N distinct models, written as DIMACS
lines to OUT; prints the seconds spent in solve() alone (reading, loading and writing
excluded). Run with the venv of scripts/peers:
    python cmsgen_sample.py FORMULA N SEED OUT CAP_SECONDS
"""

import sys, time
path, n, seed, out, cap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
clauses, cur = [], []
for line in open(path):
    if line.strip() and not line.startswith(("c", "p", "%")):
        for t in map(int, line.split()):
            if t == 0:
                clauses.append(cur); cur = []
            else:
                cur.append(t)
nvars = max(abs(l) for c in clauses for l in c)
import pycmsgen
s = pycmsgen.Solver(seed=seed)
for c in clauses:
    s.add_clause(c)
seen, models, solving = set(), [], 0.0
while len(seen) < n and solving < cap:
    t = time.perf_counter()
    sat, sol = s.solve()
    solving += time.perf_counter() - t
    if not sat:
        break
    key = bytes(sol[1:nvars + 1])
    if key not in seen:
        seen.add(key)
        models.append([v if sol[v] else -v for v in range(1, nvars + 1)])
with open(out, "w") as f:
    for m in models:
        f.write(" ".join(map(str, m)) + " 0\n")
print(f"{solving:.4f}")
