#!/bin/sh
# Builds the libFuzzer harnesses with clang (ASan + UBSan) and runs each for FUZZ_SECONDS (default 30),
# starting from tests/fuzz/corpus/<name>/ (and adding what it finds there). New crashes land in
# tests/fuzz/crashes/: once fixed, add them to the corpus, so that the next `make fuzz` starts from them.
# Nothing replays the corpus as part of `make test`: it is run only here, by libFuzzer.
set -eu
SECS=${FUZZ_SECONDS:-30}
B=build-fuzz
# the warnings of the Makefile's WARN, for the harnesses
WARN="-Wall -Wextra -Werror -Wshadow -Wpedantic -Wmissing-prototypes -Wstrict-prototypes -Wno-unused-parameter"
command -v clang >/dev/null || { echo "fuzz: clang not found (apt-get install clang)"; exit 1; }
make --no-print-directory BUILD=$B CC=clang SAN=1 OPT="-O1 -fsanitize=fuzzer-no-link" $B/libhetsim.a >/dev/null
mkdir -p tests/fuzz/crashes
for h in tests/fuzz/fuzz_*.c; do
	name=$(basename "$h" .c | sed 's/^fuzz_//')
	clang -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L $WARN -g -O1 -I. $(pkg-config --cflags hdf5-serial) \
		-fsanitize=fuzzer,address,undefined "$h" $B/libhetsim.a -lyaml -lgsl -lgslcblas \
		$(pkg-config --libs hdf5-serial) -lpthread -lm -o $B/fuzz_$name
	mkdir -p tests/fuzz/corpus/$name
	echo "== fuzz $name for ${SECS}s"
	$B/fuzz_$name -max_total_time=$SECS -max_len=4096 -artifact_prefix=tests/fuzz/crashes/ \
		-dict=tests/fuzz/yaml.dict tests/fuzz/corpus/$name 2>&1 | tail -3
done
