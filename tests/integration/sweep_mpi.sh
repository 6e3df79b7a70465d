#!/bin/sh
# hetsim sweep under MPI, ranks found from the launcher's environment: 1-rank and 2-rank runs give the rows of
# one plain run, and a lone rank 1 of 2 runs only its own half. Skipped (exit 77) when mpirun is absent.
set -u
H=${HETSIM:-bin/hetsim}
S=scenarios/sweeps/llama3-8b-tp-pp.yaml
command -v mpirun > /dev/null 2>&1 || { echo "mpirun not found"; exit 77; }
T=$(mktemp -d /tmp/hetsim-sweep-mpi-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$H" sweep -q "$S" -o "$T/full.csv" > /dev/null || no "full sweep exited $?"
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
for np in 1 2; do
	timeout 60 mpirun $root --oversubscribe -np $np "$H" sweep -q "$S" -o "$T/mpi$np.csv" > /dev/null 2>"$T/mpi.err" ||
		no "mpirun -np $np failed: $(tail -3 "$T/mpi.err")"
	cmp -s "$T/full.csv" "$T/mpi$np.csv" || no "mpirun -np $np rows differ"
done
# the split is real: a lone rank 1 of 2 leaves only its own half behind
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$H" sweep -q "$S" -o "$T/half.csv" > /dev/null || no "rank 1 alone"
[ "$(grep -c '	' "$T/half.csv.part-1")" -eq 180 ] || no "rank 1 ran $(grep -c '	' "$T/half.csv.part-1") points, expected 180"
exit $fail
