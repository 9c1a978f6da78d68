// SPDX-License-Identifier: GPL-2.0
/*
 * statx-abi - read the atomic-write fields of statx(2) at the byte offsets
 * that mainline Linux's uapi defines, written out here by hand rather than
 * taken from any header, and print them for comparison with xfs_io.
 *
 *   statx-abi PATH
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define OFF_MASK			0x00
#define OFF_ATTRIBUTES			0x08
#define OFF_ATOMIC_WRITE_UNIT_MIN	0xa8
#define OFF_ATOMIC_WRITE_UNIT_MAX	0xac
#define OFF_ATOMIC_WRITE_SEGMENTS_MAX	0xb0
#define OFF_DIO_READ_OFFSET_ALIGN	0xb4
#define OFF_ATOMIC_WRITE_UNIT_MAX_OPT	0xb8
#define STATX_SIZE			0x100

static uint32_t u32_at(const unsigned char *b, int off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

int main(int argc, char **argv)
{
	unsigned char buf[STATX_SIZE];
	uint64_t attrs;

	if (argc != 2) {
		fprintf(stderr, "usage: statx-abi PATH\n");
		return 2;
	}
	/* Poison the buffer: fields the kernel does not fill stay visible. */
	memset(buf, 0xa5, sizeof(buf));
	if (syscall(SYS_statx, AT_FDCWD, argv[1], 0, 0x10000 /* STATX_WRITE_ATOMIC */, buf)) {
		perror("statx");
		return 1;
	}
	memcpy(&attrs, buf + OFF_ATTRIBUTES, sizeof(attrs));
	printf("mask_write_atomic=%d\n", !!(u32_at(buf, OFF_MASK) & 0x10000));
	printf("attr_write_atomic=%d\n", !!(attrs & 0x00400000));
	printf("atomic_write_unit_min=%u\n", u32_at(buf, OFF_ATOMIC_WRITE_UNIT_MIN));
	printf("atomic_write_unit_max=%u\n", u32_at(buf, OFF_ATOMIC_WRITE_UNIT_MAX));
	printf("atomic_write_segments_max=%u\n", u32_at(buf, OFF_ATOMIC_WRITE_SEGMENTS_MAX));
	printf("dio_read_offset_align=%u\n", u32_at(buf, OFF_DIO_READ_OFFSET_ALIGN));
	printf("atomic_write_unit_max_opt=%u\n", u32_at(buf, OFF_ATOMIC_WRITE_UNIT_MAX_OPT));
	return 0;
}
