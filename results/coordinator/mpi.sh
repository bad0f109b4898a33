#!/bin/bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun="mpirun --oversubscribe --bind-to none -x RAYON_NUM_THREADS=1"
F=/work/shared/benchmarks/paper/70.sk_3_40.cnf
for r in $(seq 1 $1); do for b in mpi-0fd3011 mpi-35c6920; do
  $mpirun -np 3 /work/bins/$b sample $F -s 7 -j 1 -q --sharded --max-rounds ${2:-3} -o /dev/null --stats m.json >/dev/null 2>&1
  python3 -c "
import json; s=json.load(open('m.json'))
print('$b', round(s['work_seconds']/s['coordinator_seconds'],1), round(s['coordinator_seconds'],5), round(s['work_seconds'],3), round(s['merge_seconds'],5), round(s['messaging_seconds'],5), s['distinct_tests'])"
done; done
