#!/bin/bash
# snapsat under PBS Pro / Torque: 2 nodes x 4 ranks x 4 threads.
# Submit:  qsub -v FORMULA=path/to/formula.cnf cluster-configs/pbs.sh
#PBS -N snapsat
#PBS -l select=2:ncpus=16:mpiprocs=4:ompthreads=4
#PBS -l walltime=00:20:00
#PBS -j oe
set -euo pipefail
cd "${PBS_O_WORKDIR:-.}"
snapsat=${SNAPSAT:-$HOME/snapsat/target/release/snapsat}
export RAYON_NUM_THREADS=4
# OpenMPI reads the PBS node file itself; -x passes the thread count to every rank.
mpirun -np 8 --map-by ppr:4:node:PE=4 --bind-to core -x RAYON_NUM_THREADS \
    "$snapsat" sample "${FORMULA:?qsub -v FORMULA=...}" \
    -o "suite-${PBS_JOBID}.txt" --stats "stats-${PBS_JOBID}.json" -j 4 -t 1000
