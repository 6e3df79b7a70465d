#!/bin/sh
# Every fabric scenario's `hetsim run --json` output is valid JSON, as Python's json module reads it.
# Skipped (exit 77) when python3 is absent.
set -u
HETSIM=${HETSIM:-bin/hetsim}
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
for f in scenarios/fabric/*.yaml; do
	"$HETSIM" run --json "$f" >/tmp/fabric_json.$$ 2>&1 || { echo "FAIL: --json $f"; rm -f /tmp/fabric_json.$$; exit 1; }
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' /tmp/fabric_json.$$ ||
		{ echo "FAIL: JSON $f"; rm -f /tmp/fabric_json.$$; exit 1; }
done
rm -f /tmp/fabric_json.$$
echo "fabric JSON ok"
