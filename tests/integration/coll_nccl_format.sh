#!/bin/sh
# `hetsim coll` prints nccl-tests' table and `hetsim calib import-nccl-tests` reads it back: the rows the
# importer takes from the table equal the rows of `hetsim coll --json`, size for size, to the table's printed
# precision (time with 2, 1 or 0 decimals as nccl-tests prints it, bandwidths with 2). Also: the table has
# nccl-tests' banner, header, both halves with #wrong and the footer; the importer counts the ranks from the
# "Rank" lines and names the collective from the binary's name.
set -eu
HETSIM=${HETSIM:-bin/hetsim}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() { # scenario op [ranks]
	extra=""; [ $# -gt 2 ] && extra="--ranks $3"
	"$HETSIM" coll "$1" --op "$2" --sizes 8:8G $extra > "$tmp/table.txt"
	"$HETSIM" coll "$1" --op "$2" --sizes 8:8G $extra --json > "$tmp/rows.json"
	"$HETSIM" calib import-nccl-tests --rows "$tmp/table.txt" > "$tmp/back.json"
	grep -q '^# Collective test starting: ' "$tmp/table.txt" || { echo "$1 $2: no banner"; exit 1; }
	grep -q '^#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong$' \
		"$tmp/table.txt" || { echo "$1 $2: not nccl-tests' column header"; exit 1; }
	grep -q '^# Avg bus bandwidth    : [0-9.e+-]* $' "$tmp/table.txt" || { echo "$1 $2: no footer"; exit 1; }
	jq -e -n --slurpfile a "$tmp/rows.json" --slurpfile b "$tmp/back.json" '
		def prec(t): if t >= 10000 then 0.5 elif t >= 100 then 0.05 else 0.005 end;
		($a[0].rows) as $x | ($b[0].rows) as $y |
		($x | length) == ($y | length) and ($x | last).size_bytes <= 8589934592 and
		$b[0].ranks == $a[0].ranks and
		([range(0; $x | length) | . as $i | $x[$i] as $p | $y[$i] as $q |
		  $p.size_bytes == $q.size_bytes and $p.count == $q.count and
		  (($p.time_us - $q.time_us) | fabs) <= prec($p.time_us) + 1e-9 and
		  $q.time_us_inplace == $q.time_us and
		  (($p.algbw_GBps - $q.algbw_GBps) | fabs) <= 0.005 + 1e-9 and
		  (($p.busbw_GBps - $q.busbw_GBps) | fabs) <= 0.005 + 1e-9] | all)' >/dev/null ||
		{ echo "$1 $2: the table read back differs from the JSON rows"; diff "$tmp/rows.json" "$tmp/back.json" | head; exit 1; }
	op=$(jq -r '.op' "$tmp/back.json")
	case "$2" in all_to_all) want=alltoall ;; *) want=$2 ;; esac
	[ "$op" = "$want" ] || { echo "$1 $2: read back as $op"; exit 1; }
}
check scenarios/validation/nccl/h100x16-ndr.yaml all_reduce
check scenarios/topology/gb200-nvl72x2.yaml all_reduce
check scenarios/topology/gb200-nvl72.yaml all_gather
check scenarios/validation/nccl/h100x16-ndr.yaml all_to_all 16
check scenarios/validation/nccl/h100x16-ndr.yaml sendrecv
check scenarios/validation/nccl/h100x16-ndr.yaml broadcast
# the fit of a table read back is the model's own alpha-beta: the import succeeds and writes its fits
"$HETSIM" calib import-nccl-tests "$tmp/table.txt" -o "$tmp/fit.yaml" --summary >/dev/null
grep -q 'collective: broadcast' "$tmp/fit.yaml" || { echo "import of broadcast table: no fit"; cat "$tmp/fit.yaml"; exit 1; }
