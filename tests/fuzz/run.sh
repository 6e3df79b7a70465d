#!/bin/sh
# Builds the libFuzzer harnesses with clang (ASan + UBSan, UB fatal) and runs each for FUZZ_SECONDS (default
# 30), starting from tests/fuzz/corpus/<name>/ (and adding what it finds there). New crashes land in
# tests/fuzz/crashes/: once fixed, add them to the corpus; tests/integration/fuzz_replay.sh replays every
# corpus in `make test`, so a crash kept there stays fixed.
#
# Exits non-zero when any target crashes, leaks, or stops early: libFuzzer must report "Done N runs in T
# second(s)" with T close to FUZZ_SECONDS and N above FUZZ_MIN_EXECS (default: 10,000 per minute asked for,
# issue 18's bar, so a harness that dies on its first input, as fuzz_scenario once did on the empty
# document, or one that spends its time on a few slow inputs, fails the run).
# FUZZ_TARGETS="scenario units" limits the run to those targets.
#
# The harnesses that write files (sweepjournal: journals, a CSV and an HDF5 file per input; h5, manifest) write
# them under TMPDIR, here a tmpfs (/dev/shm) unless TMPDIR is set: on ext4 each input's truncated and rewritten
# journal is flushed to disk at close (auto_da_alloc), which made fuzz_sweepjournal wait on the disk for half
# its time (8 s instead of 14 for 3,000 inputs).
set -eu
SECS=${FUZZ_SECONDS:-30}
MIN=${FUZZ_MIN_EXECS:-} # empty: check_log.sh's default
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm
	export TMPDIR
fi
B=build-fuzz
# the warnings of the Makefile's WARN, for the harnesses
WARN="-Wall -Wextra -Werror -Wshadow -Wpedantic -Wmissing-prototypes -Wstrict-prototypes -Wno-unused-parameter"
command -v clang >/dev/null || { echo "fuzz: clang not found (apt-get install clang)"; exit 2; }
# NS3=0: the parsers are fuzzed; the ns-3 model (C++) would take neither clang's fuzzer flags nor its link line
make --no-print-directory BUILD=$B CC=clang SAN=1 NS3=0 OPT="-O1 -fsanitize=fuzzer-no-link" $B/libhetsim.a >/dev/null
mkdir -p tests/fuzz/crashes $B/logs
fail=0
for h in tests/fuzz/fuzz_*.c; do
	name=$(basename "$h" .c | sed 's/^fuzz_//')
	if [ -n "${FUZZ_TARGETS:-}" ]; then
		case " $FUZZ_TARGETS " in *" $name "*) ;; *) continue ;; esac
	fi
	clang -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L $WARN -g -O1 -I. $(pkg-config --cflags hdf5-serial) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined "$h" $B/libhetsim.a -lyaml -ljansson -lgsl \
		-lgslcblas $(pkg-config --libs hdf5-serial) -lpthread -lm -o $B/fuzz_$name
	mkdir -p tests/fuzz/corpus/$name
	dict=""
	[ -f tests/fuzz/$name.dict ] && dict="-dict=tests/fuzz/$name.dict"
	[ "$name" = scenario ] && dict="-dict=tests/fuzz/yaml.dict"
	log=$B/logs/$name.log
	echo "== fuzz $name for ${SECS}s"
	st=0
	# shellcheck disable=SC2086
	$B/fuzz_$name -max_total_time="$SECS" -max_len=4096 -artifact_prefix=tests/fuzz/crashes/ $dict \
		tests/fuzz/corpus/$name >"$log" 2>&1 || st=$?
	tail -3 "$log"
	tests/fuzz/check_log.sh "$name" "$log" "$st" "$SECS" $MIN || fail=1
done
exit $fail
