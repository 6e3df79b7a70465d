/* Shared main() for Check-based unit tests: each test file defines `static Suite *suite(void)` and includes
 * this header last. Exit status is non-zero when any check fails. */
#ifndef HS_CHECK_MAIN_H
#define HS_CHECK_MAIN_H
#include <check.h>
#include <stdlib.h>

static Suite *suite(void);

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
#endif
