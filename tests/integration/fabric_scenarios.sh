#!/bin/sh
# Every fabric scenario runs through `hetsim run` (text and JSON; fabric_json.sh parses the JSON).
set -u
HETSIM=${HETSIM:-bin/hetsim}
for f in scenarios/fabric/*.yaml; do
	"$HETSIM" run "$f" >/tmp/fabric_txt.$$ 2>&1 || { echo "FAIL: $f"; cat /tmp/fabric_txt.$$; exit 1; }
	grep -q "P99 of focus vs per_resource" /tmp/fabric_txt.$$ || { echo "FAIL: no comparison in $f"; exit 1; }
	"$HETSIM" run --json "$f" >/tmp/fabric_json.$$ 2>&1 || { echo "FAIL: --json $f"; exit 1; }
done
# bad input: exit status 2 with file:line:col
printf 'kind: fabric\ntraffic:\n  groups: [{sources: 1, arrival: closed, window: 0, ops: [{op: read, size: 8 B}]}]\n' >/tmp/fabric_bad.$$.yaml
"$HETSIM" run /tmp/fabric_bad.$$.yaml >/dev/null 2>/tmp/fabric_err.$$
rc=$?
rm -f /tmp/fabric_txt.$$ /tmp/fabric_json.$$ /tmp/fabric_bad.$$.yaml
[ "$rc" -eq 2 ] || { echo "FAIL: bad input exit $rc (expected 2)"; exit 1; }
grep -q "fabric_bad.*:3:.*window" /tmp/fabric_err.$$ || { echo "FAIL: error text"; cat /tmp/fabric_err.$$; exit 1; }
rm -f /tmp/fabric_err.$$
echo "fabric scenarios ok"
