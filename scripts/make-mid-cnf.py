#!/usr/bin/env python3
"""Writes examples/mid.cnf: the branch conditions of the Snap paper's `mid(x, y, z)` (Fig. 1)
over W-bit unsigned integers, bit-blasted by Tseitin encoding.

Inputs x, y, z are variables 1..3W (the independent support, `c ind`). Comparator outputs
x<y, y<z, x<z are gate variables; one clause per path of mid requires the path selector to
imply its branch conditions, and one clause asks that some path be taken, so every model is
a test input together with the path it exercises.

Usage: scripts/make-mid-cnf.py [WIDTH] > examples/mid.cnf
"""
import sys

W = int(sys.argv[1]) if len(sys.argv) > 1 else 4
clauses = []
next_var = 3 * W + 1


def fresh():
    global next_var
    next_var += 1
    return next_var - 1


def bits(k):
    """Variables of input k (0: x, 1: y, 2: z), least significant bit first."""
    return [k * W + i + 1 for i in range(W)]


def gate_and(a, b):
    g = fresh()
    clauses.extend([[-g, a], [-g, b], [g, -a, -b]])
    return g


def gate_or(a, b):
    g = fresh()
    clauses.extend([[g, -a], [g, -b], [-g, a, b]])
    return g


def gate_eq(a, b):
    g = fresh()
    clauses.extend([[-g, -a, b], [-g, a, -b], [g, a, b], [g, -a, -b]])
    return g


def less_than(a, b):
    """a < b, unsigned, rippling from the least significant bit up."""
    lt = None
    for ai, bi in zip(a, b):
        here = gate_and(-ai, bi)
        lt = here if lt is None else gate_or(here, gate_and(gate_eq(ai, bi), lt))
    return lt


x, y, z = bits(0), bits(1), bits(2)
y_lt_z, x_lt_y, x_lt_z = less_than(y, z), less_than(x, y), less_than(x, z)
y_lt_x, z_lt_x = less_than(y, x), less_than(z, x)
# mid (Fig. 1 of the paper):
#   m = z; if (y < z) { if (x < y) m = y; else if (x < z) m = x; }
#          else       { if (x > y) m = y; else if (x > z) m = x; }
# Its six paths, as conjunctions of branch outcomes:
paths = [
    [y_lt_z, x_lt_y],
    [y_lt_z, -x_lt_y, x_lt_z],
    [y_lt_z, -x_lt_y, -x_lt_z],
    [-y_lt_z, y_lt_x],
    [-y_lt_z, -y_lt_x, z_lt_x],
    [-y_lt_z, -y_lt_x, -z_lt_x],
]
selectors = []
for conditions in paths:
    s = fresh()
    selectors.append(s)
    clauses.extend([[-s, c] for c in conditions])
clauses.append(selectors)

print(f"c mid(x, y, z) over {W}-bit unsigned integers; made by scripts/make-mid-cnf.py")
print(f"p cnf {next_var - 1} {len(clauses)}")
print("c ind " + " ".join(str(v) for v in range(1, 3 * W + 1)) + " 0")
for c in clauses:
    print(" ".join(map(str, c)) + " 0")
