#!/bin/sh
# Regenerates docs/img/goodput-16k.png: goodput against checkpoint interval for experiment (c) of issue 8
# (scenarios/hetero/failures-16k.yaml: 16,384 H100s, MTBF 50,000 h per GPU), with the 10th-90th percentile
# band over the Monte Carlo trials and Young's and Daly's intervals. Needs gnuplot (gnuplot-nox).
# Usage: docs/img/goodput-16k.sh [HETSIM]   (run from the repository root)
set -eu
H=${1:-${HETSIM:-bin/hetsim}}
out=docs/img/goodput-16k.png
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$H" run scenarios/hetero/failures-16k.yaml \
	--set 'resilience.checkpoint.interval=[1 min, 2 min, 3 min, 4 min, 5 min, 7.5 min, 10 min, 15 min, 20 min, 30 min, 45 min, 60 min, 90 min, 120 min]' \
	>"$tmp/run.txt"
# the interval table: interval_min goodput p10 p90 ... (the Daly row is marked and kept apart)
awk '/interval_min/ {t = 1; next} t && NF >= 9 && $0 !~ /Daly/ {gsub("%", ""); print $1, $2, $3, $4} t && NF < 9 {t = 0}' \
	"$tmp/run.txt" >"$tmp/goodput.dat"
young=$(sed -n 's/.*optimal interval: Young \([0-9.]*\) min, Daly \([0-9.]*\) min.*/\1/p' "$tmp/run.txt")
daly=$(sed -n 's/.*optimal interval: Young \([0-9.]*\) min, Daly \([0-9.]*\) min.*/\2/p' "$tmp/run.txt")
gnuplot <<GP
set terminal pngcairo size 900,540 font ",11"
set output "$tmp/plot.png"
set title "Goodput against checkpoint interval: 16,384 H100s, Llama 3 70B, MTBF 50,000 h per GPU (10 trials of 30 days)"
set xlabel "checkpoint interval (min)"
set ylabel "goodput (%)"
set logscale x
set xrange [0.8:150]
set grid
set key bottom left
set arrow from $young, graph 0 to $young, graph 1 nohead dt 2 lc rgb "#d62728"
set label "Young/Daly $daly min" at $daly*1.08, graph 0.95 tc rgb "#d62728"
plot "$tmp/goodput.dat" using 1:3:4 with filledcurves lc rgb "#c6dbef" title "P10-P90 over trials", \
     "" using 1:2 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "mean goodput"
GP
mv "$tmp/plot.png" "$out"
cat "$tmp/goodput.dat"
echo "Young $young min, Daly $daly min -> $out"
