// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <linux/aio_abi.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io.h"

static const char *const engine_names[UT_ENGINE_COUNT] = {
	[UT_ENGINE_PWRITEV2] = "pwritev2",
	[UT_ENGINE_URING] = "io_uring",
	[UT_ENGINE_AIO] = "libaio",
};

const char *ut_engine_name(enum ut_engine e)
{
	return e < UT_ENGINE_COUNT ? engine_names[e] : "?";
}

int ut_engine_parse(const char *name, enum ut_engine *e)
{
	for (int i = 0; i < UT_ENGINE_COUNT; i++) {
		if (!strcmp(name, engine_names[i])) {
			*e = i;
			return 0;
		}
	}
	if (!strcmp(name, "aio")) {
		*e = UT_ENGINE_AIO;
		return 0;
	}
	return -EINVAL;
}

static ssize_t write_pwritev2(int fd, const struct iovec *iov, int iovcnt,
			      off_t off, int rwflags)
{
	ssize_t ret = pwritev2(fd, iov, iovcnt, off, rwflags);

	return ret < 0 ? -errno : ret;
}

static ssize_t write_uring(int fd, const struct iovec *iov, int iovcnt,
			   off_t off, int rwflags)
{
	static struct io_uring ring;
	static int ready;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	if (!ready) {
		ret = io_uring_queue_init(4, &ring, 0);
		if (ret < 0)
			return ret;
		ready = 1;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_writev2(sqe, fd, iov, iovcnt, off, rwflags);
	ret = io_uring_submit(&ring);
	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(&ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return ret;
}

static ssize_t write_aio(int fd, const struct iovec *iov, int iovcnt,
			 off_t off, int rwflags)
{
	static aio_context_t ctx;
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;
	long ret;

	if (!ctx && syscall(SYS_io_setup, 4, &ctx) < 0)
		return -errno;
	memset(&cb, 0, sizeof(cb));
	cb.aio_fildes = fd;
	cb.aio_lio_opcode = IOCB_CMD_PWRITEV;
	cb.aio_buf = (uintptr_t)iov;
	cb.aio_nbytes = iovcnt;
	cb.aio_offset = off;
	cb.aio_rw_flags = rwflags;
	ret = syscall(SYS_io_submit, ctx, 1, cbs);
	if (ret < 0)
		return -errno;
	do {
		ret = syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	return ev.res;
}

ssize_t ut_writev(enum ut_engine e, int fd, const struct iovec *iov,
		  int iovcnt, off_t off, int rwflags)
{
	switch (e) {
	case UT_ENGINE_PWRITEV2:
		return write_pwritev2(fd, iov, iovcnt, off, rwflags);
	case UT_ENGINE_URING:
		return write_uring(fd, iov, iovcnt, off, rwflags);
	case UT_ENGINE_AIO:
		return write_aio(fd, iov, iovcnt, off, rwflags);
	default:
		return -EINVAL;
	}
}

ssize_t ut_pread(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t ret = pread(fd, (char *)buf + done, len - done, off + done);

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			break;
		done += ret;
	}
	return done;
}
