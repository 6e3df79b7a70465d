/* Shared main() for Check-based unit tests: each test file defines `static Suite *suite(void)` and includes
 * this header last. Exit status is non-zero when any check fails.
 * A test binary that cannot run here (a tool it needs is missing) also defines, before the include,
 * HS_CHECK_SKIP as the name of a `static const char *why(void)` that returns the reason, or NULL to run: main
 * then prints the reason and exits 77, which tests/run.sh reports as a skip. */
#ifndef HS_CHECK_MAIN_H
#define HS_CHECK_MAIN_H
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static Suite *suite(void);

int main(void)
{
#ifdef HS_CHECK_SKIP
	const char *why = HS_CHECK_SKIP();
	if (why) {
		printf("%s\n", why);
		return 77;
	}
#endif
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
#endif
