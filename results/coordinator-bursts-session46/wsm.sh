#!/bin/bash
# usage: [ROUNDS=40] [STATS=file] wsm.sh BIN NP args...   (MPI W/S on 70.sk_3_40, native; DIMACS lines to /dev/null)
BIN=$1; NP=$2; shift 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -np $NP --oversubscribe --bind-to none $BIN sample /work/shared/benchmarks/paper/70.sk_3_40.cnf -s 1 -x 0 --stop-metric information --max-rounds ${ROUNDS:-40} -j 1 --solver native "$@" -o /dev/null -q --stats ${STATS:-/tmp/wsm.json}
python3 -c "
import json; d=json.load(open('${STATS:-/tmp/wsm.json}')); print(d['distinct_tests'], 'S', round(d['coordinator_seconds'],4), 'W', round(d['work_seconds'],4), 'merge', round(d['merge_seconds'],4), 'msg', round(d['messaging_seconds'],4), 'W/S', round(d['work_seconds']/d['coordinator_seconds'],2), 'total', round(d['seconds']['total'],3))"
