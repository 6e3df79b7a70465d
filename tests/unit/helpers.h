/* Scratch files for the unit tests, made in one place. Each helper makes a file (or picks a fresh name) in /tmp
 * as hetsim-<tag>-XXXXXX, writes its name into path[cap] and fails the running check when it cannot; removing
 * it is left to the caller (unlink or remove; rm -rf for a directory the code under test made there). */
#ifndef HS_TEST_HELPERS_H
#define HS_TEST_HELPERS_H
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Create /tmp/hetsim-<tag>-XXXXXX<suffix> (suffix "" for none) and return it open for reading and writing. */
static inline int hs_test_mkstemp(char *path, size_t cap, const char *tag, const char *suffix)
{
	int n = snprintf(path, cap, "/tmp/hetsim-%s-XXXXXX%s", tag, suffix);
	ck_assert(n > 0 && (size_t)n < cap);
	int fd = mkstemps(path, (int)strlen(suffix));
	ck_assert_int_ge(fd, 0);
	return fd;
}

/* The same, closed: an empty file for the code under test to overwrite. */
static inline void hs_test_tmpfile(char *path, size_t cap, const char *tag, const char *suffix)
{
	close(hs_test_mkstemp(path, cap, tag, suffix));
}

/* A new file holding `text` (a scenario's YAML, a log). */
static inline void hs_test_write_tmp(char *path, size_t cap, const char *tag, const char *text)
{
	int fd = hs_test_mkstemp(path, cap, tag, "");
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A fresh name that nothing has yet, for code that must create the file or directory itself (an HDF5 file
 * that appears only when committed, a report's output directory). */
static inline void hs_test_tmpname(char *path, size_t cap, const char *tag, const char *suffix)
{
	hs_test_tmpfile(path, cap, tag, suffix);
	unlink(path);
}

#endif
