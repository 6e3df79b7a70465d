# Sourced by the integration scripts: `expect STATUS PATTERN -- command...` runs the command and checks its exit
# status and that its output (stdout and stderr) matches the grep pattern; failures set fail=1 and say why.
H=${HETSIM:-bin/hetsim}
D=tests/data/scenarios
fail=0
expect() {
	want=$1; pat=$2; shift 3
	out=$("$@" 2>&1); got=$?
	if [ "$got" != "$want" ]; then echo "FAIL: '$*' exited $got, expected $want"; echo "$out" | head -5; fail=1; return; fi
	if ! printf '%s' "$out" | grep -q -- "$pat"; then echo "FAIL: '$*' output lacks '$pat':"; echo "$out" | head -5; fail=1; fi
}
