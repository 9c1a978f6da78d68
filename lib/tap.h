/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TAP-like output for the C test programs: "ok - PREFIX: what" or
 * "not ok - PREFIX: what", and "#   " diagnostics. tests/guest-run.sh
 * numbers the lines and the host runner sums them.
 */
#ifndef UNTORN_TAP_H
#define UNTORN_TAP_H

extern const char *ut_tap_prefix;
extern int ut_tap_failures;

void ut_tap(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ut_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
