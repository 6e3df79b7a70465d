#!/bin/sh
# Every fuzz target runs in `make test`: each tests/fuzz/fuzz_*.c is built with tests/fuzz/replay_main.c (no
# libFuzzer needed) against the library under test and fed its corpus, tests/fuzz/corpus/<name>/, once. Under
# `make check-asan` the library and the harness carry the sanitizers, so an overread in a parser fails here.
set -u
BUILD=${BUILD:-build}
CC=${CC:-cc}
lib=$BUILD/libhetsim.a
[ -f "$lib" ] || { echo "fuzz_replay: $lib not built"; exit 1; }
# the ns-3 model's libraries when the library holds it (the Makefile's probe found libns3-dev)
ns3=""
ar t "$lib" 2>/dev/null | grep -qx net_ns3.o && ns3="$(pkg-config --libs ns3-core ns3-network ns3-point-to-point) -lstdc++"
san=""
case "$BUILD" in build-asan*) san="-fsanitize=address,undefined -fno-sanitize-recover=undefined" ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for h in tests/fuzz/fuzz_*.c; do
	name=$(basename "$h" .c | sed 's/^fuzz_//')
	# shellcheck disable=SC2086
	if ! $CC -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -O1 -g -I. $(pkg-config --cflags hdf5-serial 2>/dev/null) $san "$h" tests/fuzz/replay_main.c \
		"$lib" -lyaml -ljansson -lgsl -lgslcblas $(pkg-config --libs hdf5-serial 2>/dev/null) $ns3 -lpthread -lm \
		-o "$tmp/$name" 2>"$tmp/$name.log"; then
		cat "$tmp/$name.log"; echo "FAIL: fuzz_$name does not build"; fail=1; continue
	fi
	n=$(find "tests/fuzz/corpus/$name" -type f 2>/dev/null | wc -l)
	[ "$n" -gt 0 ] || { echo "FAIL: fuzz_$name has no corpus (tests/fuzz/corpus/$name/)"; fail=1; continue; }
	if find "tests/fuzz/corpus/$name" -type f -print0 | xargs -0 "$tmp/$name"; then
		echo "fuzz_$name: $n inputs replayed"
	else
		echo "FAIL: fuzz_$name on its corpus"; fail=1
	fi
done
exit $fail
