/* sim/base: the allocation hook and the output files' clean-up when a process exits before committing. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/base/alloc.h"
#include "sim/base/outfile.h"
#include "tests/unit/helpers.h"

/* The n-th allocation after hs_alloc_fail_after(n) fails: the process prints the message and exits 1; the
 * ones before it succeed. Run in a child, as the failure exits. */
START_TEST(nth_allocation_fails)
{
	for (int n = 1; n <= 3; n++) {
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			hs_alloc_fail_after((unsigned long long)n);
			for (int i = 1; i < n; i++)
				free(hs_xmalloc(16));
			fclose(stderr); /* the message is not this test's output */
			free(hs_xmalloc(16)); /* the n-th: exits */
			_exit(0);
		}
		int st;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFEXITED(st));
		ck_assert_int_eq(WEXITSTATUS(st), 1);
	}
	hs_alloc_fail_after(0);
	free(hs_xmalloc(16)); /* off again */
}
END_TEST

/* A process that exits while an output file is open (out of memory is exit(1) from deep inside) leaves
 * neither the file nor its temporary; one committed before the exit stays. */
START_TEST(exit_removes_open_temporaries)
{
	char done[256], open_[256], tmp[1100];
	hs_test_tmpname(done, sizeof done, "out-done", ".txt");
	hs_test_tmpname(open_, sizeof open_, "out-open", ".txt");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		hs_outfile a, b;
		hs_err err = {0};
		if (hs_outfile_open(&a, done, &err) || hs_outfile_write(&a, "x\n", 2) || hs_outfile_commit(&a, &err) ||
		    hs_outfile_open(&b, open_, &err) || hs_outfile_write(&b, "half", 4))
			_exit(3);
		exit(1);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 1);
	/* the child's temporary name */
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", open_, (long)pid);
	ck_assert_int_eq(access(done, F_OK), 0);
	ck_assert_int_ne(access(open_, F_OK), 0);
	ck_assert_msg(access(tmp, F_OK) != 0, "%s left behind", tmp);
	remove(done);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("base");
	TCase *t = tcase_create("core");
	tcase_add_test(t, nth_allocation_fails);
	tcase_add_test(t, exit_removes_open_temporaries);
	suite_add_tcase(s, t);
	return s;
}

#include "tests/unit/check_main.h"
