/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One write through any of the three submission interfaces that carry
 * RWF_ATOMIC: pwritev2(2), io_uring and Linux AIO. Each returns the byte
 * count or -errno, so a caller compares results across engines directly.
 */
#ifndef UNTORN_IO_H
#define UNTORN_IO_H

#include <sys/types.h>
#include <sys/uio.h>

#ifndef RWF_DSYNC
#define RWF_DSYNC	0x00000002
#endif
#ifndef RWF_SYNC
#define RWF_SYNC	0x00000004
#endif
#ifndef RWF_ATOMIC
#define RWF_ATOMIC	0x00000040
#endif

enum ut_engine {
	UT_ENGINE_PWRITEV2,
	UT_ENGINE_URING,
	UT_ENGINE_AIO,
	UT_ENGINE_COUNT,
};

const char *ut_engine_name(enum ut_engine e);
int ut_engine_parse(const char *name, enum ut_engine *e);

ssize_t ut_writev(enum ut_engine e, int fd, const struct iovec *iov,
		  int iovcnt, off_t off, int rwflags);

/*
 * Several writes in flight at once (queue depth N, at most 64): io_uring
 * and AIO submit them together and reap them in any order; pwritev2 issues
 * them one after another. Each request's res gets its byte count or
 * -errno. Returns 0, or -errno when the batch could not be submitted (then
 * every res holds it). Rings and AIO contexts are per thread; a thread
 * that used them calls ut_io_release() before it exits.
 */
struct ut_wreq {
	int fd;
	const struct iovec *iov;
	int iovcnt;
	off_t off;
	int rwflags;
	ssize_t res;
};

int ut_writev_batch(enum ut_engine e, struct ut_wreq *reqs, unsigned int n);
void ut_io_release(void);
ssize_t ut_pread(int fd, void *buf, size_t len, off_t off);

#endif
