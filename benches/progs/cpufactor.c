// SPDX-License-Identifier: GPL-2.0
/*
 * cpufactor - how long a fixed CPU-bound workload takes here.
 *
 *   cpufactor [--rounds N] [--dir DIR]
 *
 * Two fixed workloads on one thread, each the best of N rounds (default 5):
 *   kernel  20,000 times pwrite(2) and pread(2) of one 4 KiB page of a file
 *           in DIR (default /tmp) that stays in the page cache: system
 *           calls, the VFS and page cache copies, no I/O
 *   user    CRC-32C (the table-driven version in lib/) over 4 MiB, 16 times
 * Run on the host and in the TCG guest, the ratio of the times is how much
 * slower the guest's CPU is. benches/matrix scales a real device's
 * latencies by the kernel ratio for its timed device models (tearblk): the
 * paths being compared (remap transactions against extra writes and
 * flushes) are kernel code, and TCG slows kernel code (privileged state,
 * page tables, interrupts) far more than a tight user loop. Prints
 * "KERNEL_NS USER_NS CHECKSUM".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "crc32c.h"

#define BUF_BYTES	(4u << 20)
#define PASSES		16
#define SYSCALLS	20000

/* The kernel workload once, in ns; -errno on failure. */
static double kernel_round(int fd, char *page)
{
	double t0 = ut_now_us();

	for (unsigned int i = 0; i < SYSCALLS; i++) {
		if (pwrite(fd, page, 4096, 0) != 4096 ||
		    pread(fd, page, 4096, 0) != 4096)
			return -(errno ? errno : EIO);
	}
	return (ut_now_us() - t0) * 1e3;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "dir", required_argument, NULL, 'd' },
		{ 0 }
	};
	unsigned int rounds = 5, i, p;
	double best = 0, kbest = 0, t0, t;
	const char *dir = "/tmp";
	char path[4096], page[4096];
	uint32_t crc = 0;
	unsigned char *buf;
	int c, fd;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'd') {
			dir = optarg;
		} else if (c != 'r' || (rounds = strtoul(optarg, NULL, 0)) == 0) {
			fprintf(stderr, "usage: cpufactor [--rounds N] [--dir DIR]\n");
			return 2;
		}
	}
	snprintf(path, sizeof(path), "%s/cpufactor.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "cpufactor: %s: %s\n", path, strerror(errno));
		return 1;
	}
	unlink(path);
	memset(page, 0x3c, sizeof(page));
	for (i = 0; i < rounds; i++) {
		t = kernel_round(fd, page);
		if (t < 0) {
			fprintf(stderr, "cpufactor: %s\n", strerror((int)-t));
			return 1;
		}
		if (!kbest || t < kbest)
			kbest = t;
	}
	close(fd);
	buf = malloc(BUF_BYTES);
	if (!buf) {
		fprintf(stderr, "cpufactor: out of memory\n");
		return 1;
	}
	for (i = 0; i < BUF_BYTES; i++)
		buf[i] = (unsigned char)(i * 2654435761u >> 24);
	for (i = 0; i < rounds; i++) {
		t0 = ut_now_us();
		for (p = 0; p < PASSES; p++)
			crc = ut_crc32c(crc, buf, BUF_BYTES);
		t = (ut_now_us() - t0) * 1e3;
		if (!best || t < best)
			best = t;
	}
	printf("%.0f %.0f %08x\n", kbest, best, crc);
	free(buf);
	return 0;
}
