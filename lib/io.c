// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <libaio.h>
#include <liburing.h>
#include <string.h>
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

/*
 * Each thread has its own ring and AIO context: a ring is not to be shared
 * between submitters, and a thread's writes must not reap another's.
 */
#define UT_IO_DEPTH 64
static __thread struct io_uring ring;
static __thread int ring_ready;
static __thread io_context_t aio_ctx;

void ut_io_release(void)
{
	if (ring_ready)
		io_uring_queue_exit(&ring);
	ring_ready = 0;
	if (aio_ctx)
		io_destroy(aio_ctx);
	aio_ctx = NULL;
}

static void fail_all(struct ut_wreq *reqs, unsigned int n, int err)
{
	for (unsigned int i = 0; i < n; i++)
		reqs[i].res = err;
}

static int batch_uring(struct ut_wreq *reqs, unsigned int n)
{
	struct io_uring_cqe *cqe;
	unsigned int i;
	int ret;

	if (!ring_ready) {
		ret = io_uring_queue_init(UT_IO_DEPTH, &ring, 0);
		if (ret < 0)
			return ret;
		ring_ready = 1;
	}
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_writev2(sqe, reqs[i].fd, reqs[i].iov,
				      reqs[i].iovcnt, reqs[i].off,
				      reqs[i].rwflags);
		io_uring_sqe_set_data64(sqe, i);
	}
	ret = io_uring_submit(&ring);
	if (ret < 0)
		return ret;
	/* Short submission: reap what went in, fail the rest. */
	for (i = n; i > (unsigned int)ret; i--)
		reqs[i - 1].res = -EAGAIN;
	for (i = 0; i < (unsigned int)ret; i++) {
		int err = io_uring_wait_cqe(&ring, &cqe);

		if (err < 0)
			return err;
		reqs[io_uring_cqe_get_data64(cqe)].res = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	return 0;
}

/*
 * libaio's calls return -errno themselves; errno is not set. io_submit()
 * stops at the first request the kernel refuses at submission (a bad
 * descriptor, bad flags): that request gets the error and the rest are
 * submitted again, so that each request has its own result as with the
 * other engines.
 */
static int batch_aio(struct ut_wreq *reqs, unsigned int n)
{
	struct iocb cb[UT_IO_DEPTH], *cbs[UT_IO_DEPTH];
	struct io_event ev[UT_IO_DEPTH];
	int ret, inflight = 0;
	unsigned int i;

	if (!aio_ctx) {
		ret = io_queue_init(UT_IO_DEPTH, &aio_ctx);
		if (ret < 0) {
			aio_ctx = NULL;
			return ret;
		}
	}
	for (i = 0; i < n; i++) {
		io_prep_pwritev2(&cb[i], reqs[i].fd, reqs[i].iov,
				 reqs[i].iovcnt, reqs[i].off, reqs[i].rwflags);
		cb[i].data = &reqs[i];
		cbs[i] = &cb[i];
	}
	for (i = 0; i < n; ) {
		ret = io_submit(aio_ctx, n - i, cbs + i);
		if (ret <= 0) {
			reqs[i++].res = ret ? ret : -EAGAIN;
			continue;
		}
		inflight += ret;
		i += ret;
	}
	while (inflight > 0) {
		ret = io_getevents(aio_ctx, 1, inflight, ev, NULL);
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			return ret;
		for (int k = 0; k < ret; k++)
			((struct ut_wreq *)ev[k].data)->res = (long)ev[k].res;
		inflight -= ret;
	}
	return 0;
}

int ut_writev_batch(enum ut_engine e, struct ut_wreq *reqs, unsigned int n)
{
	int err = 0;

	if (n > UT_IO_DEPTH)
		return -EINVAL;
	switch (e) {
	case UT_ENGINE_PWRITEV2:
		for (unsigned int i = 0; i < n; i++) {
			ssize_t ret = pwritev2(reqs[i].fd, reqs[i].iov,
					       reqs[i].iovcnt, reqs[i].off,
					       reqs[i].rwflags);

			reqs[i].res = ret < 0 ? -errno : ret;
		}
		return 0;
	case UT_ENGINE_URING:
		err = batch_uring(reqs, n);
		break;
	case UT_ENGINE_AIO:
		err = batch_aio(reqs, n);
		break;
	default:
		err = -EINVAL;
	}
	if (err)
		fail_all(reqs, n, err);
	return err;
}

static ssize_t write_one(enum ut_engine e, int fd, const struct iovec *iov,
			 int iovcnt, off_t off, int rwflags)
{
	struct ut_wreq req = {
		.fd = fd, .iov = iov, .iovcnt = iovcnt, .off = off,
		.rwflags = rwflags,
	};

	ut_writev_batch(e, &req, 1);
	return req.res;
}

ssize_t ut_writev(enum ut_engine e, int fd, const struct iovec *iov,
		  int iovcnt, off_t off, int rwflags)
{
	switch (e) {
	case UT_ENGINE_PWRITEV2:
		return write_pwritev2(fd, iov, iovcnt, off, rwflags);
	case UT_ENGINE_URING:
	case UT_ENGINE_AIO:
		return write_one(e, fd, iov, iovcnt, off, rwflags);
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
