#!/bin/sh
# An MPI job of two ranks generates a library (the TASO operator set at max_ops 2, a smaller
# set at max_ops 3, and three operators at max_ops 5, where each rank makes the split requests
# of its share of the floor) and writes the same bytes as one process; a run killed after its
# shares are kept resumes to the same bytes.
#   gen_mpi_ranks.sh MPIRUN GRAPHSUB WORKDIR
set -eu
MPIRUN=$1 GRAPHSUB=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK/one" "$WORK/two"
# Open MPI refuses to start as root unless told; CI machines run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TASO="--ops ewadd,ewmul,smul,transpose,matmul,conv,enlarge,relu,sigmoid,tanh,poolavg,poolmax,concat,split,cpool,iconv,imatmul,iewmul --params act=none,relu,sigmoid,tanh"
SMALL="--ops matmul,transpose,relu,concat,split,ewadd,ewmul --params act=none,relu --params axis=0,1"
FIVE="--ops ewadd,relu,transpose"
run() {  # DIR N FLAGS...: generate into DIR/lib.rules on N ranks (0: without mpirun)
  dir=$1 ranks=$2; shift 2
  if [ "$ranks" = 0 ]; then
    (cd "$dir" && "$GRAPHSUB" -q generate "$@" --threads 1 -o lib.rules)
  else
    (cd "$dir" && "$MPIRUN" -np "$ranks" --oversubscribe "$GRAPHSUB" -q generate "$@" --threads 1 -o lib.rules)
  fi
}
for case in "2 $TASO" "5 $FIVE" "3 $SMALL"; do  # the resume below reuses the last
  set -- $case
  n=$1; shift
  run "$WORK/one" 0 --max-ops "$n" "$@"
  run "$WORK/two" 2 --max-ops "$n" "$@"
  cmp "$WORK/one/lib.rules" "$WORK/two/lib.rules"
  cmp "$WORK/one/lib.unproved" "$WORK/two/lib.unproved"
  [ ! -e "$WORK/two/lib.rules.run" ] || { echo "run folder left behind"; exit 1; }
  grep -q "(equality r-" "$WORK/two/lib.rules"
done
# Resume: keep the shares, lose rank 1's, run again: the same bytes, rank 0's share kept.
rm -f "$WORK/two/lib.rules"
run "$WORK/two" 2 --max-ops 3 $SMALL --run-dir "$WORK/two/run" --keep-run-dir
rm -rf "$WORK/two/run/enum-1" "$WORK/two/run/classes-1"
before=$(stat -c %Y.%s "$WORK/two/run/classes-0")
run "$WORK/two" 2 --max-ops 3 $SMALL --run-dir "$WORK/two/run" --keep-run-dir
cmp "$WORK/one/lib.rules" "$WORK/two/lib.rules"
[ -e "$WORK/two/run/classes-1" ] || { echo "the lost share was not run again"; exit 1; }
[ "$(stat -c %Y.%s "$WORK/two/run/classes-0")" = "$before" ] || { echo "the kept share was run again"; exit 1; }
echo "two ranks: same library; resumed run: same library, only rank 1's share run again"
