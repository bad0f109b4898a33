#!/bin/bash
# W/S (work_seconds / coordinator_seconds) of old vs new builds, alternating, one run at a time.
case=$1; reps=$2; shift 2
F=/work/shared/benchmarks/paper/$case.cnf; [ -f $F ] || F=/work/shared/benchmarks/large/$case.cnf
for r in $(seq 1 $reps); do
  for b in clean-69464d3 clean-35c6920; do
    /work/bins/$b sample $F -s 1 -x 0 --stop-metric information --max-rounds 40 -j 1 --solver native --sharded --format bits -o /dev/null --stats st.json "$@" >/dev/null 2>&1
    python3 -c "
import json; s=json.load(open('st.json'))
print('$case', '$b', round(s['work_seconds']/s['coordinator_seconds'],1), round(s['coordinator_seconds'],4), round(s['work_seconds'],3), s['distinct_tests'])"
  done
done
