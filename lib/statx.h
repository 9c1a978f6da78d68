/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct statx exactly as mainline Linux lays it out (include/uapi/linux/
 * stat.h, 6.16 and later), so that untorn reads the atomic-write fields the
 * way glibc, xfs_io and fio built on mainline headers do. The host's own
 * headers are older and must not be trusted for the tail of the struct.
 */
#ifndef UNTORN_STATX_H
#define UNTORN_STATX_H

#include <stdint.h>

#define UT_STATX_WRITE_ATOMIC		0x00010000U
#define UT_STATX_DIO_READ_ALIGN		0x00020000U
#define UT_STATX_ATTR_WRITE_ATOMIC	0x00400000ULL

struct ut_statx_timestamp {
	int64_t tv_sec;
	uint32_t tv_nsec;
	int32_t __reserved;
};

struct ut_statx {
	uint32_t stx_mask;
	uint32_t stx_blksize;
	uint64_t stx_attributes;
	uint32_t stx_nlink;
	uint32_t stx_uid;
	uint32_t stx_gid;
	uint16_t stx_mode;
	uint16_t __spare0[1];
	uint64_t stx_ino;
	uint64_t stx_size;
	uint64_t stx_blocks;
	uint64_t stx_attributes_mask;
	struct ut_statx_timestamp stx_atime;
	struct ut_statx_timestamp stx_btime;
	struct ut_statx_timestamp stx_ctime;
	struct ut_statx_timestamp stx_mtime;
	uint32_t stx_rdev_major;
	uint32_t stx_rdev_minor;
	uint32_t stx_dev_major;
	uint32_t stx_dev_minor;
	uint64_t stx_mnt_id;
	uint32_t stx_dio_mem_align;
	uint32_t stx_dio_offset_align;
	uint64_t stx_subvol;
	uint32_t stx_atomic_write_unit_min;
	uint32_t stx_atomic_write_unit_max;
	uint32_t stx_atomic_write_segments_max;
	uint32_t stx_dio_read_offset_align;
	uint32_t stx_atomic_write_unit_max_opt;
	uint32_t __spare2[1];
	uint64_t __spare3[8];
};

_Static_assert(__builtin_offsetof(struct ut_statx, stx_subvol) == 0xa0, "statx ABI");
_Static_assert(__builtin_offsetof(struct ut_statx, stx_atomic_write_unit_min) == 0xa8, "statx ABI");
_Static_assert(__builtin_offsetof(struct ut_statx, stx_atomic_write_unit_max) == 0xac, "statx ABI");
_Static_assert(__builtin_offsetof(struct ut_statx, stx_atomic_write_segments_max) == 0xb0, "statx ABI");
_Static_assert(__builtin_offsetof(struct ut_statx, stx_dio_read_offset_align) == 0xb4, "statx ABI");
_Static_assert(__builtin_offsetof(struct ut_statx, stx_atomic_write_unit_max_opt) == 0xb8, "statx ABI");
_Static_assert(sizeof(struct ut_statx) == 0x100, "statx ABI");

/* statx(2) by raw syscall; returns 0 or -errno. */
int ut_statx(int dirfd, const char *path, int flags, unsigned int mask,
	     struct ut_statx *stx);

#endif
