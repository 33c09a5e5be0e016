/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fixture files for cmocka tests, written without the code under test. */
#pragma once

/* Write text to the file name beneath dir_fd (its directory must exist), replacing it; a failure
 * fails the test. */
void test_write_at(int dir_fd, const char *name, const char *text);

/* Write text to path (absolute, as a node sees it) beneath the directory dir, its parent directories
 * made first, replacing it; a failure fails the test. */
void test_write_tree(const char *dir, const char *path, const char *text);

/* Remove the directory dir and everything beneath it (a test's own temporary tree). */
void test_rm_rf(const char *dir);
