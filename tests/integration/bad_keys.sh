#!/bin/sh
# Every key docs/scenario.md lists for the model, an inline GPU type, training, parallelism, simulation and
# cost, and docs/heterogeneity.md for resilience, given values of the wrong kind (a mapping with an unknown key, a word, a negative, a number that
# overflows): the run exits 2 with the key in the message, or 0 where the value is legal (a key that takes a
# word); never 1, 3 or a signal, and every key refuses at least one of them (cost.gpu_hour once took a price
# for any device name, a typo included). The keys come from the docs' tables, so a key added there is checked
# here without a line of its own (issue 18: "every key's wrong type, range and unit"). Part two, below, puts
# the cluster's scale-up, NIC, host, fabric and explicit-link keys and variability's into a file and asks for
# FILE:LINE:COL as well.
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

# Part two: the cluster's scale-up, NIC, host and fabric keys (docs/topology.md) and variability's
# (docs/heterogeneity.md), each written into a scenario file, so that the message must also say where:
# FILE:LINE:COL at the line of the bad value. Each key gets a wrong type (a mapping), a word, a negative, an
# overflow, a number in a unit of another kind (a time for a bandwidth, a bandwidth for anything else) and its
# name misspelled; every one must exit 2 naming the key at its line (none of these sections has a key that
# takes an arbitrary word). The file is $base below with the tested key's line replaced, or inserted after the
# line that opens its section; a line's key path is worked out from the indentation (a list item is `[i]`).
T=$(mktemp -d "${TMPDIR:-/tmp}/hetsim-bad-keys-XXXXXX")
base='name: bad-keys
model: llama3-8b
training: {seq_len: 8192, global_batch: 64, micro_batch: 1}
parallelism: {tp: 2, pp: 2, dp: 4}
simulation: {fidelity: analytical, seed: 1}
cluster:
  groups:
    - name: h100
      nodes: 2
      gpus_per_node: 8
      gpu: H100-SXM-80GB
      scaleup:
        kind: nvswitch
      nic:
        per_node: 8
      host:
        link: pcie
  fabric:
    kind: fat-tree
variability:
  steps: 2
  noise:
    distribution: lognormal
    cv: 0.05
  slowdown:
    - gpus: 5
      speed: 0.7
  throttle:
    - gpus: 0-7
      speed: 0.8
      at: 30 s'
printf '%s\n' "$base" > "$T/base.yaml"
"$H" run "$T/base.yaml" > /dev/null 2>&1 || { echo "FAIL: the base scenario of the file cases does not run"; fail=1; }
# docs file | heading | the section's key path in $base
sections='docs/topology.md|### `scaleup`|cluster.groups[i].scaleup
docs/topology.md|### `nic`|cluster.groups[i].nic
docs/topology.md|### `host`|cluster.groups[i].host
docs/topology.md|## `cluster.fabric` (a mapping; optional)|cluster.fabric
docs/heterogeneity.md|## `variability:` slower devices, throttling, noise, many steps|variability'
# put.awk: print $base with key path P set to V (R=1: the key renamed to V instead), the line touched on stderr
cat > "$T/put.awk" <<'AWK'
function path(d,   s, i) { s = nm[1]; for (i = 2; i <= d; i++) s = s "." nm[i]; return s }
{
	L[NR] = $0; ind = match($0, /[^ ]/) - 1; rest = substr($0, ind + 1); dash = 0
	if (rest ~ /^- /) { dash = 1; rest = substr(rest, 3); ind += 2 }
	k = rest; sub(/:.*/, "", k)
	while (d > 0 && lv[d] >= ind) d--
	if (dash && d > 0 && nm[d] !~ /\[i\]$/) nm[d] = nm[d] "[i]"
	d++; lv[d] = ind; nm[d] = k
	at[NR] = path(d); key[NR] = k; opens[NR] = rest ~ /:$/; indent[NR] = ind
}
END {
	for (i = 1; i <= NR; i++) if (at[i] == P) hit = i
	if (!hit)
		for (i = 1; i <= NR; i++) {
			leaf = substr(P, length(at[i]) + 2)
			if (opens[i] && substr(P, 1, length(at[i]) + 1) == at[i] "." && leaf !~ /\./) parent = i
		}
	print hit ? hit : parent ? parent + 1 : 0 > "/dev/stderr"
	for (i = 1; i <= NR; i++) {
		line = L[i]
		if (i == hit) {
			if (R) sub(key[i] ":", V ":", line); else line = substr(line, 1, index(line, ":")) " " V
		}
		print line
		if (i == parent) {
			leaf = substr(P, length(at[i]) + 2)
			printf "%" (indent[i] + 2) "s%s: %s\n", "", R ? V : leaf, R ? "1" : V
		}
	}
}
AWK
printf '%s\n' "$sections" > "$T/sections"
links=$(i=0; while [ $i -lt 16 ]; do printf '{from: gpu%d, to: s0, bandwidth: 100 GB/s}, ' $i; i=$((i + 1)); done)
links=${links%, }
nf=0
while IFS='|' read -r file head prefix; do
	keys=$(awk -v s="$head" '$0 == s {f = 1; next} /^##/ {f = 0} f && /^\| `/' "$file" |
		cut -d'|' -f2,3,5 | tr -d '` ' | tr '|' ' ' |
		awk '{ n = split($1, k, ","); for (i = 1; i <= n; i++) {
			if (k[i] ~ /^\./) { p = k[1]; sub(/\.[^.]*$/, "", p); k[i] = p k[i] }
			print k[i], $2, $3 } }')
	[ -n "$keys" ] || { echo "FAIL: no keys found under $head in $file"; fail=1; continue; }
	printf '%s\n' "$keys" > "$T/keys"
	while read -r k unit meaning; do
		leaf=${k##*.}; leaf=${leaf%\[i\]}
		# a fabric key that one kind reads ("dragonfly: routers per group") is tried on that kind, so its value
		# is checked and not only refused for the fat-tree ("only a torus2d or torus3d fabric has dims")
		fkind=$(printf '%s' "$meaning" | grep -oE '^(rail-optimized|dragonfly|torus2d|torus3d|multi-plane|wan|explicit)')
		if [ "$prefix" = cluster.fabric ] && [ -n "$fkind" ]; then
			# an explicit graph: one switch, a link to it from each GPU, at the flow fidelity it needs
			awk -v K="$fkind" -v L="$links" '/^    kind: fat-tree$/ { print "    kind: " K
				if (K == "explicit") { print "    switches: [s0]"; print "    links: [" L "]" }; next }
				K == "explicit" { sub(/fidelity: analytical/, "fidelity: flow") } { print }' "$T/base.yaml" > "$T/kind.yaml"
			"$H" run "$T/kind.yaml" > /dev/null 2>&1 || { echo "FAIL: the base scenario with kind $fkind does not run"; fail=1; }
		else
			cp "$T/base.yaml" "$T/kind.yaml"
		fi
		case "$unit" in bandwidth*) wrong='5 s' ;; *) wrong='5 GB/s' ;; esac
		for v in '{x: 1}' 'notanumber' '-5' '1e400' "$wrong" "${leaf}x"; do
			r=0; [ "$v" = "${leaf}x" ] && r=1
			at=$(awk -v P="$prefix.$k" -v V="$v" -v R=$r -f "$T/put.awk" "$T/kind.yaml" 2>&1 >"$T/s.yaml")
			nf=$((nf + 1))
			[ "$at" != 0 ] || { echo "FAIL: $prefix.$k: no place for it in the base scenario"; fail=1; break; }
			out=$(timeout 60 "$H" run "$T/s.yaml" 2>&1 >/dev/null)
			st=$?
			what="$prefix.$k = '$v' (line $at)"
			[ $r = 1 ] && what="$prefix.$k misspelled '$v' (line $at)"
			if [ $st != 2 ]; then
				echo "FAIL: $what exited $st, expected 2: $(printf '%s' "$out" | tail -1)"; fail=1
			elif ! printf '%s' "$out" | grep -q -- "$T/s.yaml:$at:[0-9]*:"; then
				echo "FAIL: $what: not at $T/s.yaml:$at:COL: $out"; fail=1
			elif ! printf '%s' "$out" | grep -q -- "$leaf"; then
				echo "FAIL: $what: the key is not named: $out"; fail=1
			fi
		done
	done < "$T/keys"
done < "$T/sections"
# the keys of an explicit link, as docs/topology.md lists them in the row of `links` ({from, to, ...}): each
# bad in the first link of the graph above (from and to take a name: a word that names nothing is refused too)
items=$(grep -E '^\| `links` \|' docs/topology.md | grep -oE 'list of `\{[^}]*\}`' | tr -d '`{}' | sed 's/list of //' | tr -d ',')
[ -n "$items" ] || { echo "FAIL: no link keys found in the row of links in docs/topology.md"; fail=1; }
for k in $items; do
	for v in '{x: 1}' 'notanumber' '-5' '1e400' '5 kg' "${k}x"; do
		first='from: gpu0, to: s0, bandwidth: 100 GB/s'
		if [ "$v" = "${k}x" ]; then
			item="$first, $v: 1"
		elif printf '%s' "$first" | grep -q "$k: "; then
			item=$(printf '%s' "$first" | sed "s|$k: [^,]*|$k: $v|")
		else
			item="$first, $k: $v"
		fi
		awk -v L="{$item}, ${links#*\}, }" '/^    kind: fat-tree$/ { print "    kind: explicit"; print "    switches: [s0]"
			print "    links: [" L "]"; next } { sub(/fidelity: analytical/, "fidelity: flow"); print }' "$T/base.yaml" > "$T/s.yaml"
		nf=$((nf + 1))
		out=$(timeout 60 "$H" run "$T/s.yaml" 2>&1 >/dev/null)
		st=$?
		if [ $st != 2 ]; then
			echo "FAIL: explicit link {$item} exited $st, expected 2: $(printf '%s' "$out" | tail -1)"; fail=1
		elif ! printf '%s' "$out" | grep -q -- "$T/s.yaml:21:[0-9]*:.*$k"; then
			echo "FAIL: explicit link {$item}: not at $T/s.yaml:21:COL naming $k: $out"; fail=1
		fi
	done
done
rm -rf "$T"
echo "bad_keys: $n cases with --set, $nf in files"
exit $fail
