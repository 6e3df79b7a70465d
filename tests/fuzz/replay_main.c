/* A main for the libFuzzer harnesses without libFuzzer: feeds each file named on the command line to
 * LLVMFuzzerTestOneInput once. tests/integration/fuzz_replay.sh builds every harness with it and replays the
 * corpus in `make test`, so that each fuzz target runs (and its past crashes stay fixed) where clang's libFuzzer
 * is not installed; `make fuzz` is where new inputs are searched for. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 2;
		}
		size_t cap = 1 << 16, n = 0;
		uint8_t *buf = malloc(cap);
		size_t got;
		while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
			n += got;
			if (n == cap) {
				uint8_t *b = realloc(buf, cap *= 2);
				if (!b)
					free(buf);
				buf = b;
			}
		}
		fclose(f);
		if (!buf)
			return 1;
		/* libFuzzer hands over exactly `size` bytes in a buffer of that size: copy, so ASan sees overreads */
		uint8_t *exact = malloc(n ? n : 1);
		for (size_t k = 0; k < n; k++)
			exact[k] = buf[k];
		free(buf);
		LLVMFuzzerTestOneInput(exact, n);
		free(exact);
	}
	return 0;
}
