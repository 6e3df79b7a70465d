#!/bin/sh
# make install into a temporary DESTDIR, then the installed binary, run from another folder with no
# environment variable, finds its profiles under PREFIX/share/hetsim and prints what the tree's binary prints;
# hetsim(1) lists every command and option and renders without warnings; make uninstall removes every file.
set -u
. tests/integration/lib/expect.sh
command -v make >/dev/null || { echo "make not found"; exit 77; }
BUILD=${BUILD:-build}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
top=$(pwd)
make -s --no-print-directory install BUILD="$BUILD" PREFIX=/usr/local DESTDIR="$tmp/root" >"$tmp/log" 2>&1 ||
	{ echo "FAIL: make install"; cat "$tmp/log"; exit 1; }
p=$tmp/root/usr/local
for f in bin/hetsim share/man/man1/hetsim.1 share/hetsim/profiles/H200-SXM-141GB.yaml \
	share/hetsim/profiles/H100-SXM-80GB.yaml share/hetsim/measurements/README.md \
	share/doc/hetsim/examples/scenarios/default.yaml share/doc/hetsim/scenario.md; do
	[ -f "$p/$f" ] || { echo "FAIL: make install did not install $f"; fail=1; }
done
# from another folder, no HETSIM_PROFILES: only PREFIX/share/hetsim/profiles can supply the profile
mkdir "$tmp/elsewhere"
(cd "$tmp/elsewhere" && env -u HETSIM_PROFILES "$p/bin/hetsim" run "$p/share/doc/hetsim/examples/scenarios/default.yaml") \
	>"$tmp/installed.out" 2>&1 || { echo "FAIL: the installed binary failed:"; head -5 "$tmp/installed.out"; fail=1; }
"$H" run scenarios/default.yaml >"$tmp/tree.out" 2>&1
cmp -s "$tmp/installed.out" "$tmp/tree.out" || { echo "FAIL: installed and tree outputs differ:";
	diff "$tmp/tree.out" "$tmp/installed.out" | head; fail=1; }
(cd "$tmp/elsewhere" && env -u HETSIM_PROFILES "$p/bin/hetsim" list gpus) | grep -q "^B200 .*derived from H200-SXM-141GB" ||
	{ echo "FAIL: the installed binary's list gpus lacks the profiles"; fail=1; }
# HETSIM_PROFILES still comes first
mkdir "$tmp/prof"
sed 's/^name: .*/name: H100-SXM-80GB/' "$top/calib/profiles/H200-SXM-141GB.yaml" >"$tmp/prof/H100-SXM-80GB.yaml"
(cd "$tmp/elsewhere" && HETSIM_PROFILES="$tmp/prof" "$p/bin/hetsim" run "$p/share/doc/hetsim/examples/scenarios/default.yaml") |
	grep -q "profile .*measured on" || { echo "FAIL: HETSIM_PROFILES is not searched first"; fail=1; }
# the man page: every command and every option of `hetsim help COMMAND`, exit statuses 0-4
man=$p/share/man/man1/hetsim.1
for c in $("$H" help | sed -n 's/^  \([a-z-]*\)  .*/\1/p'); do
	grep -q "^\.SS $(printf '%s' "$c" | sed 's/-/\\\\-/g')\$" "$man" || { echo "FAIL: hetsim.1 lacks the command $c"; fail=1; }
	for o in $("$H" help "$c" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$man" || { echo "FAIL: hetsim.1 lacks $c $o"; fail=1; }
	done
done
for s in 0 1 2 3 4; do
	grep -A1 '^\.TP' "$man" | grep -q "^\.B $s\$" || { echo "FAIL: hetsim.1 lacks exit status $s"; fail=1; }
done
if command -v groff >/dev/null; then
	w=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
	[ -z "$w" ] || { echo "FAIL: groff warns on hetsim.1: $w"; fail=1; }
fi
make -s --no-print-directory uninstall BUILD="$BUILD" PREFIX=/usr/local DESTDIR="$tmp/root" >"$tmp/log" 2>&1 ||
	{ echo "FAIL: make uninstall"; cat "$tmp/log"; fail=1; }
left=$(find "$tmp/root" -type f)
[ -z "$left" ] || { echo "FAIL: make uninstall left: $left"; fail=1; }
exit $fail
