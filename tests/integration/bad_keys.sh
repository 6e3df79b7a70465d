#!/bin/sh
# Every key docs/scenario.md lists for training, parallelism, simulation and cost, given a value of the wrong
# kind (a mapping where the key takes a scalar, a word where it takes a number, a negative where it takes a
# size, a number that overflows): the run exits 2 with the key's path in the message, or exits 0 where the
# value is legal (a key that takes a word); never 1, 3 or a signal, and every key refuses at least one of them
# (cost.gpu_hour once took a price for any device name, a typo included). The keys come from the docs, so a key added there is
# checked here without a line of its own (issue 18: "every key's wrong type, range and unit").
set -u
H=${HETSIM:-bin/hetsim}
fail=0
n=0
for sec in training parallelism simulation cost; do
	keys=$(awk -v s="## \`$sec\`" '$0 == s {f = 1; next} /^## / {f = 0} f && /^\| `/' docs/scenario.md |
		cut -d'|' -f2 | tr -d '` ' | tr ',' ' ')
	[ -n "$keys" ] || { echo "FAIL: no keys found for $sec in docs/scenario.md"; fail=1; continue; }
	for k in $keys; do
		refused=0
		for v in '{x: 1}' 'notanumber' '-5' '1e400'; do
			out=$(timeout 60 "$H" run scenarios/default.yaml --set "$sec.$k=$v" 2>&1 >/dev/null)
			st=$?
			n=$((n + 1))
			case $st in
			0) ;;
			2) refused=$((refused + 1))
			   printf '%s' "$out" | grep -q "$sec.$k\|$sec\[\|$k" ||
				{ echo "FAIL: $sec.$k=$v: exit 2 without the key in: $out"; fail=1; } ;;
			*) echo "FAIL: $sec.$k=$v exited $st: $(printf '%s' "$out" | tail -1)"; fail=1 ;;
			esac
		done
		# no key takes all four (a mapping with an unknown key, a word, a negative, an overflow)
		[ "$refused" -gt 0 ] || { echo "FAIL: $sec.$k accepted every wrong value"; fail=1; }
	done
done
echo "bad_keys: $n cases"
exit $fail
