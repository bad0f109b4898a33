#!/bin/bash
# usage: ws.sh BIN reps args...
BIN=$1; REPS=$2; shift 2
for i in $(seq $REPS); do $BIN sample /work/shared/benchmarks/paper/70.sk_3_40.cnf -s 1 -x 0 --stop-metric information --max-rounds 40 -j 1 --solver native "$@" --stats /dev/shm/s.json -o /dev/null -q; python3 -c "
import json; d=json.load(open('/dev/shm/s.json')); print(d['distinct_tests'], 'S', round(d['coordinator_seconds'],4), 'W', round(d['work_seconds'],4), 'merge', round(d['merge_seconds'],4), 'W/S', round(d['work_seconds']/d['coordinator_seconds'],2), 'total', round(d['seconds']['total'],3), 'writer', round(d['writer_seconds'],3), 'ncd', round(d['seconds']['ncd'],3))"; done
