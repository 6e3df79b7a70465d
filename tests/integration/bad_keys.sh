#!/bin/sh
# Every key docs/scenario.md lists for the model, an inline GPU type, training, parallelism, simulation and
# cost, and docs/heterogeneity.md for resilience, given values of the wrong kind (a mapping with an unknown key, a word, a negative, a number that
# overflows): the run exits 2 with the key in the message, or 0 where the value is legal (a key that takes a
# word); never 1, 3 or a signal, and every key refuses at least one of them (cost.gpu_hour once took a price
# for any device name, a typo included). The keys come from the docs' tables, so a key added there is checked
# here without a line of its own (issue 18: "every key's wrong type, range and unit").
set -u
H=${HETSIM:-bin/hetsim}
fail=0
n=0
# docs file | heading | a --set the section needs first (or -) | how to set KEY to VAL
cases='docs/scenario.md|## `model`|-|model={preset: llama3-8b, KEY: VAL}
docs/scenario.md|## `cluster`|-|cluster.groups.0.gpu={base: H100-SXM-80GB, KEY: VAL}
docs/scenario.md|## `training`|-|training.KEY=VAL
docs/scenario.md|## `parallelism`|-|parallelism.KEY=VAL
docs/scenario.md|## `simulation`|-|simulation.KEY=VAL
docs/scenario.md|## `cost`|-|cost.KEY=VAL
docs/heterogeneity.md|## `resilience:` failures, restarts and checkpoints|resilience.mtbf.gpu=50000 h|resilience.KEY=VAL'
printf '%s\n' "$cases" > "${TMPDIR:-/tmp}/hetsim-bad-keys-$$"
while IFS='|' read -r file head pre tmpl; do
	keys=$(awk -v s="$head" '$0 == s {f = 1; next} /^## / {f = 0} f && /^\| `/' "$file" |
		cut -d'|' -f2 | tr -d '` ' | tr ',' ' ')
	[ -n "$keys" ] || { echo "FAIL: no keys found under $head in $file"; fail=1; continue; }
	for k in $keys; do
		case "$k" in preset | base | name) continue ;; esac # what the template itself sets
		refused=0
		for v in '{x: 1}' 'notanumber' '-5' '1e400'; do
			a=$(printf '%s' "$tmpl" | sed "s/KEY/$k/; s/VAL/$v/")
			if [ "$pre" = - ]; then
				out=$(timeout 60 "$H" run scenarios/default.yaml --set "$a" 2>&1 >/dev/null)
			else
				out=$(timeout 60 "$H" run scenarios/default.yaml --set "$pre" --set "$a" 2>&1 >/dev/null)
			fi
			st=$?
			n=$((n + 1))
			case $st in
			0) ;;
			2) refused=$((refused + 1))
			   printf '%s' "$out" | grep -q -- "$k" ||
				{ echo "FAIL: --set '$a': exit 2 without the key in: $out"; fail=1; } ;;
			*) echo "FAIL: --set '$a' exited $st: $(printf '%s' "$out" | tail -1)"; fail=1 ;;
			esac
		done
		[ "$refused" -gt 0 ] || { echo "FAIL: $head $k accepted every wrong value"; fail=1; }
	done
done < "${TMPDIR:-/tmp}/hetsim-bad-keys-$$"
rm -f "${TMPDIR:-/tmp}/hetsim-bad-keys-$$"
echo "bad_keys: $n cases"
exit $fail
