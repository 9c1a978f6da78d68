// SPDX-License-Identifier: GPL-2.0
/*
 * torture - cut power under a workload of patterned units, again and again,
 * and check after each recovery that every unit holds exactly one complete
 * version and none is older than what was made durable before the cut.
 *
 *   torture --dev DEV [--fs raw|xfs|ext4] [--mkfs 'ARGS'] [--mount-opts O]
 *           --unit BYTES [--units N] [--cuts N] [--seed S] [--ops N]
 *           [--cut-mode ops|timer|mixed] [--control] [--snapshots]
 *           [--punch BLOCK] [--name NAME]
 *
 * DEV is a tearblk device. With --fs the device is formatted once and the
 * units live in one file written with O_DIRECT; each cut is followed by a
 * mount (log recovery), the check, an unmount, fsck (xfs_repair -n or
 * e2fsck -fn) and a mount to go on. Without it the units are the device.
 *
 * The workload writes random units with RWF_ATOMIC (none with --control),
 * some with RWF_DSYNC, and calls fdatasync now and then; with --snapshots
 * it also reflinks the file into a snapshot now and then, so that writes
 * find shared extents; with --punch BLOCK, one write in 8 first punches a
 * BLOCK-sized hole into its unit, so that it finds a hole next to written
 * blocks (a punched unit may also read as its old version with exactly that
 * block zeroed, until a later write of it is durable). A unit's "floor" is
 * its newest generation whose write finished and was then made durable (by
 * RWF_DSYNC or a later fdatasync returning success, which cannot happen
 * after the cut). After the cut a unit may hold its floor or any newer
 * generation written since; anything else is stale, a mix is torn.
 *
 * The cut comes after a seeded number of operations (ops: the device sees
 * the same writes on a replay) or after a seeded delay from another thread
 * (timer: writes are in flight at the cut). Every cut's seed derives from
 * --seed and the cut number; the filesystem carries over from cut to cut,
 * so cut N is replayed by running the same command with --cuts N.
 *
 * Exit 77 (skip) when the target does not offer atomic writes of --unit:
 * statx must promise them before the run means anything.
 *
 * Last line: "torture: NAME cuts=N torn=T stale=S torn_cuts=.. stale_cuts=..
 * fsck_failures=F errors=E". Exit 0 when all of T, S, F and E are 0; with
 * --control, exit 0 when the run completed (tears are the point).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io.h"
#include "pattern.h"
#include "statx.h"
#include "tear.h"
#include "util.h"

#define PATTERN_SEED 0x7047

enum fs_kind { FS_RAW, FS_XFS, FS_EXT4 };
enum cut_mode { CUT_OPS, CUT_TIMER, CUT_MIXED };

struct unit_state {
	uint64_t floor;		/* newest generation known durable */
	uint64_t done;		/* newest generation whose write finished */
	uint64_t issued;	/* newest generation handed to the kernel */
	uint64_t punched;	/* the newest generation when a block was
				 * last punched out; 0: no punch pending */
	unsigned int npunch;	/* punches pending */
};

static struct {
	const char *dev, *name, *mkfs_args, *mount_opts, *mnt;
	enum fs_kind fs;
	enum cut_mode cut_mode;
	size_t unit;
	unsigned int units, cuts, ops;
	uint64_t seed;
	int control;
	int snapshots;
	size_t punch;
	int verbose;
} opt = {
	.name = "torture", .mnt = "/mnt/torture", .cut_mode = CUT_MIXED,
	.units = 64, .cuts = 10, .ops = 64, .seed = 1,
};

static char tear_dir[256];
static char path[512];
static char snap_path[512];
static struct unit_state *us;
static uint64_t gen_counter;
static void *buf;

static struct {
	unsigned int torn, stale, torn_cuts, stale_cuts, fsck_failures, errors;
	unsigned long long writes, syncs, snapshots, punches, punch_seen;
	unsigned long long device_torn;
} total;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "torture: %s: ", opt.name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static const char *fs_name(void)
{
	return opt.fs == FS_XFS ? "xfs" : opt.fs == FS_EXT4 ? "ext4" : "raw";
}

/* Run ARGV (NULL-terminated), output to LOG; exit status or -1. */
static int run(char *const argv[], const char *log)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void show_log(const char *log)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int n = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n++ < 30)
		printf("#     %s", line);
	fclose(f);
}

static void do_mkfs(void)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "mkfs.%s %s %s %s >/tmp/torture-mkfs.log 2>&1",
		 fs_name(), opt.fs == FS_XFS ? "-q -f" : "-q -F",
		 opt.mkfs_args ? opt.mkfs_args : "", opt.dev);
	if (system(cmd) != 0) {
		show_log("/tmp/torture-mkfs.log");
		die("%s failed", cmd);
	}
}

static int do_mount(void)
{
	if (mount(opt.dev, opt.mnt, fs_name(), 0, opt.mount_opts) == 0)
		return 0;
	printf("#   mount %s: %s\n", opt.dev, strerror(errno));
	return -1;
}

/* After a cut the filesystem may need a moment to give up its I/O. */
static void do_umount(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (umount2(opt.mnt, 0) == 0 || errno == EINVAL)
			return;
		usleep(20000);
	}
	die("cannot unmount %s: %s", opt.mnt, strerror(errno));
}

/* fsck of the unmounted filesystem: 0 when clean. */
static int do_fsck(void)
{
	char *xfs[] = { "xfs_repair", "-n", (char *)opt.dev, NULL };
	char *ext4[] = { "e2fsck", "-fn", (char *)opt.dev, NULL };
	int rc = run(opt.fs == FS_XFS ? xfs : ext4, "/tmp/torture-fsck.log");

	if (rc != 0) {
		printf("#   %s found damage (exit %d):\n", opt.fs == FS_XFS ?
		       "xfs_repair -n" : "e2fsck -fn", rc);
		show_log("/tmp/torture-fsck.log");
	}
	return rc != 0;
}

static int open_target(void)
{
	int fd = open(path, O_RDWR | O_DIRECT | (opt.fs == FS_RAW ? 0 : O_CREAT),
		      0644);

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	return fd;
}

/* The floor moved: a punch older than it can no longer show. */
static void floor_raised(unsigned int u, uint64_t floor)
{
	if (floor > us[u].floor)
		us[u].floor = floor;
	if (us[u].punched && us[u].floor > us[u].punched) {
		us[u].punched = 0;
		us[u].npunch = 0;
	}
}

static ssize_t write_unit(int fd, unsigned int u, uint64_t gen, int flags)
{
	struct iovec iov = { buf, opt.unit };

	ut_pattern_fill(buf, opt.unit, u, gen, PATTERN_SEED);
	return ut_writev(UT_ENGINE_PWRITEV2, fd, &iov, 1, (off_t)u * opt.unit,
			 flags | (opt.control ? 0 : RWF_ATOMIC));
}

/* Bring every unit to a known durable generation (after mkfs or damage). */
static void rewrite_units(int fd, int only_damaged,
			  const struct ut_unit_check *found)
{
	unsigned int u;

	for (u = 0; u < opt.units; u++) {
		if (only_damaged && found[u].state == UT_UNIT_OK)
			continue;
		if (write_unit(fd, u, ++gen_counter, 0) != (ssize_t)opt.unit)
			die("setup write of unit %u: %s", u, strerror(errno));
		us[u].issued = us[u].done = gen_counter;
	}
	if (fdatasync(fd))
		die("setup fdatasync: %s", strerror(errno));
	for (u = 0; u < opt.units; u++)
		us[u].floor = us[u].done;
}

/*
 * Reflink the whole file into a snapshot, as a database backup would: every
 * extent becomes shared, so the next atomic write of each unit must go out
 * of place (on XFS the software path) while the snapshot keeps the old data.
 */
static int snapshot(int fd)
{
	int sfd = open(snap_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), err = 0;

	if (sfd < 0)
		return -1;
	if (ioctl(sfd, FICLONE, fd))
		err = -1;
	close(sfd);
	total.snapshots += !err;
	return err;
}

/*
 * Punch block K out of unit U. Until a later write of the unit is durable,
 * the unit may legitimately read as one of its generations up to the last
 * punch with punched blocks zeroed: check_units() accepts exactly that
 * shape (whole punched blocks of zeroes, no more of them than punches,
 * the rest one generation), and nothing else.
 */
static int punch_block(int fd, unsigned int u, unsigned int k)
{
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)u * opt.unit + (off_t)k * opt.punch, opt.punch))
		return -1;
	us[u].punched = us[u].issued;
	us[u].npunch++;
	total.punches++;
	return 0;
}

/* An older generation of a punched unit with punched blocks zeroed. */
static int punch_shape(unsigned int u, const struct ut_unit_check *r)
{
	unsigned int per = opt.punch / UT_STAMP_SIZE;

	return us[u].punched && r->state == UT_UNIT_TORN && !r->stamps_bad &&
	       r->stamps_zero % per == 0 &&
	       r->stamps_zero <= us[u].npunch * per &&
	       r->gen_min == r->gen_max && r->gen_min >= us[u].floor &&
	       r->gen_min <= us[u].punched;
}

struct timer_arg {
	useconds_t delay;
	uint64_t seed;
	int err;
	int failed;		/* the cut failed: the workload must stop */
};

static void *cut_after_delay(void *p)
{
	struct timer_arg *t = p;

	usleep(t->delay);
	t->err = ut_tear_cut(tear_dir, t->seed);
	if (t->err)
		__atomic_store_n(&t->failed, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The workload up to the cut. In ops mode the cut comes from this thread
 * after *nops operations; in timer mode from another thread, and the first
 * failing call marks it. Returns the number of operations done.
 */
static unsigned int workload(int fd, uint64_t *rng, uint64_t cut_seed,
			     int timer, unsigned int nops)
{
	struct timer_arg t = { .seed = cut_seed };
	pthread_t th;
	unsigned int op;
	int err;

	if (timer) {
		/* Somewhere within the time nops operations take. */
		t.delay = 1000 + ut_rand(rng) % (nops * 2000 + 1);
		if (pthread_create(&th, NULL, cut_after_delay, &t))
			die("pthread_create failed");
		nops = UINT32_MAX;
	}
	for (op = 0; op < nops; op++) {
		uint64_t r = ut_rand(rng);

		if (timer && __atomic_load_n(&t.failed, __ATOMIC_ACQUIRE))
			break;
		/*
		 * fdatasync one time in 16, RWF_DSYNC one write in 8: enough
		 * durability points to test the floor, few enough that most
		 * cuts find unflushed writes (on a block device RWF_DSYNC
		 * flushes the whole cache).
		 */
		if (opt.snapshots && r % 64 == 1) {
			if (snapshot(fd))
				break;
		} else if (r % 16 == 0) {
			uint64_t snap[opt.units];
			unsigned int u;

			for (u = 0; u < opt.units; u++)
				snap[u] = us[u].done;
			if (fdatasync(fd))
				break;
			for (u = 0; u < opt.units; u++)
				floor_raised(u, snap[u]);
			total.syncs++;
		} else {
			unsigned int u = (r >> 8) % opt.units;
			int dsync = (r >> 40) % 8 == 0;
			uint64_t gen;

			/*
			 * With --punch, one write in 8 first punches a block
			 * out of its unit, so that the atomic write finds a
			 * hole next to written blocks.
			 */
			if (opt.punch && (r >> 20) % 8 == 3) {
				if (punch_block(fd, u, (r >> 32) % (opt.unit / opt.punch)))
					break;
			}
			gen = ++gen_counter;
			us[u].issued = gen;
			if (write_unit(fd, u, gen, dsync ? RWF_DSYNC : 0) !=
			    (ssize_t)opt.unit)
				break;
			us[u].done = gen;
			if (dsync)
				floor_raised(u, gen);
			total.writes++;
		}
	}
	if (timer) {
		pthread_join(th, NULL);
		err = t.err;
	} else {
		err = ut_tear_cut(tear_dir, cut_seed);
	}
	if (err)
		die("cut: %s", strerror(-err));
	return op;
}

/* Read every unit back and judge it against what the workload knows. */
static void check_units(int fd, unsigned int cut, uint64_t cut_seed,
			struct ut_unit_check *found)
{
	unsigned int u, torn = 0, stale = 0;

	for (u = 0; u < opt.units; u++) {
		struct ut_unit_check *r = &found[u];

		if (ut_pread(fd, buf, opt.unit, (off_t)u * opt.unit) !=
		    (ssize_t)opt.unit)
			die("read of unit %u after the cut failed", u);
		ut_pattern_check(buf, opt.unit, u, PATTERN_SEED, r);
		if (punch_shape(u, r)) {
			total.punch_seen++;
			r->state = UT_UNIT_CORRUPT;	/* rewrite it */
		} else if (r->state == UT_UNIT_TORN || r->state == UT_UNIT_CORRUPT) {
			torn++;
			if (torn <= 3)
				printf("#   cut %u: unit %u %s: %u stamps of generations %" PRIu64
				       "..%" PRIu64 ", %u zero, %u bad (floor %" PRIu64
				       ", newest issued %" PRIu64 ", %u punches pending, last at %" PRIu64 ")\n",
				       cut, u, ut_unit_state_name(r->state),
				       r->stamps_valid, r->gen_min, r->gen_max,
				       r->stamps_zero, r->stamps_bad, us[u].floor,
				       us[u].issued, us[u].npunch, us[u].punched);
		} else if (r->state == UT_UNIT_ZERO || r->gen < us[u].floor ||
			   r->gen > us[u].issued) {
			stale++;
			if (stale <= 3)
				printf("#   cut %u: unit %u stale: holds %s generation %" PRIu64
				       ", floor %" PRIu64 ", newest issued %" PRIu64 "\n",
				       cut, u, ut_unit_state_name(r->state),
				       r->state == UT_UNIT_OK ? r->gen : 0,
				       us[u].floor, us[u].issued);
			r->state = UT_UNIT_CORRUPT;	/* rewrite it */
		} else {
			us[u].floor = us[u].done = us[u].issued = r->gen;
		}
		us[u].punched = 0;
		us[u].npunch = 0;
	}
	total.torn += torn;
	total.stale += stale;
	total.torn_cuts += torn > 0;
	total.stale_cuts += stale > 0;
	if ((torn || stale) && !opt.control)
		printf("# FAIL cut %u (seed %#" PRIx64 "): %u torn, %u stale; replay: torture %s--seed %#" PRIx64 " --cuts %u ...\n",
		       cut, cut_seed, torn, stale, opt.control ? "--control " : "",
		       opt.seed, cut);
}

static void one_cut(unsigned int cut)
{
	uint64_t cut_seed = opt.seed ^ (0x9e3779b97f4a7c15ULL * cut);
	uint64_t rng = cut_seed, v = 0;
	struct ut_unit_check found[opt.units];
	unsigned int nops, done;
	int timer, fd, err;

	timer = opt.cut_mode == CUT_TIMER ||
		(opt.cut_mode == CUT_MIXED && (ut_rand(&rng) & 1));
	nops = 1 + ut_rand(&rng) % opt.ops;

	fd = open_target();
	done = workload(fd, &rng, cut_seed, timer, nops);
	close(fd);
	if (opt.fs != FS_RAW)
		do_umount();
	err = ut_tear_power_on(tear_dir);
	if (err)
		die("power_on: %s", strerror(-err));
	ut_tear_read(tear_dir, "cut_torn", &v);
	total.device_torn += v;
	if (opt.verbose)
		printf("#   cut %u: %s after %u ops, device tore %" PRIu64 " writes\n",
		       cut, timer ? "timer" : "ops", done, v);

	if (opt.fs != FS_RAW && do_mount()) {
		total.errors++;
		printf("# FAIL cut %u: mount after the cut failed\n", cut);
		do_fsck();
		die("cannot go on without a filesystem");
	}
	fd = open_target();
	check_units(fd, cut, cut_seed, found);
	if (opt.fs != FS_RAW) {
		close(fd);
		do_umount();
		if (do_fsck()) {
			total.fsck_failures++;
			printf("# FAIL cut %u (seed %#" PRIx64 "): fsck not clean\n",
			       cut, cut_seed);
		}
		if (do_mount())
			die("mount after fsck failed");
		fd = open_target();
	}
	rewrite_units(fd, 1, found);
	close(fd);
}

/* A run whose writes the kernel would refuse proves nothing: skip it. */
static void require_atomic_unit(void)
{
	struct ut_statx stx;
	int err = ut_statx(AT_FDCWD, path, 0, UT_STATX_WRITE_ATOMIC, &stx);

	if (err)
		die("statx %s: %s", path, strerror(-err));
	if (!(stx.stx_mask & UT_STATX_WRITE_ATOMIC) ||
	    stx.stx_atomic_write_unit_min > opt.unit ||
	    stx.stx_atomic_write_unit_max < opt.unit) {
		printf("torture: %s: SKIP: %s offers atomic writes of %u..%u bytes, not %zu\n",
		       opt.name, path, stx.stx_atomic_write_unit_min,
		       stx.stx_atomic_write_unit_max, opt.unit);
		if (opt.fs != FS_RAW)
			do_umount();
		exit(77);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: torture --dev DEV [--fs raw|xfs|ext4] [--mkfs 'ARGS'] [--mount-opts O]\n"
		"               --unit BYTES [--units N] [--cuts N] [--seed S] [--ops N]\n"
		"               [--cut-mode ops|timer|mixed] [--control] [--snapshots] [--punch BLOCK]\n"
		"               [--name NAME] [--verbose]\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "fs", required_argument, NULL, 'f' },
		{ "mkfs", required_argument, NULL, 'k' },
		{ "mount-opts", required_argument, NULL, 'o' },
		{ "unit", required_argument, NULL, 'u' },
		{ "units", required_argument, NULL, 'n' },
		{ "cuts", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'p' },
		{ "cut-mode", required_argument, NULL, 'm' },
		{ "control", no_argument, NULL, 'C' },
		{ "snapshots", no_argument, NULL, 'S' },
		{ "punch", required_argument, NULL, 'P' },
		{ "name", required_argument, NULL, 'N' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'k': opt.mkfs_args = optarg; break;
		case 'o': opt.mount_opts = optarg; break;
		case 'C': opt.control = 1; break;
		case 'S': opt.snapshots = 1; break;
		case 'P':
			if (ut_parse_size(optarg, &v) || !ut_is_pow2(v) || v < 512)
				die("--punch %s: a power of two of at least 512", optarg);
			opt.punch = v;
			break;
		case 'N': opt.name = optarg; break;
		case 'v': opt.verbose = 1; break;
		case 'f':
			if (!strcmp(optarg, "raw"))
				opt.fs = FS_RAW;
			else if (!strcmp(optarg, "xfs"))
				opt.fs = FS_XFS;
			else if (!strcmp(optarg, "ext4"))
				opt.fs = FS_EXT4;
			else
				usage();
			break;
		case 'u':
			if (ut_parse_size(optarg, &v) || !ut_is_pow2(v) || v < 512)
				die("--unit %s: a power of two of at least 512", optarg);
			opt.unit = v;
			break;
		case 'n': opt.units = strtoul(optarg, NULL, 0); break;
		case 'c': opt.cuts = strtoul(optarg, NULL, 0); break;
		case 'p': opt.ops = strtoul(optarg, NULL, 0); break;
		case 's': opt.seed = strtoull(optarg, NULL, 0); break;
		case 'm':
			if (!strcmp(optarg, "ops"))
				opt.cut_mode = CUT_OPS;
			else if (!strcmp(optarg, "timer"))
				opt.cut_mode = CUT_TIMER;
			else if (!strcmp(optarg, "mixed"))
				opt.cut_mode = CUT_MIXED;
			else
				usage();
			break;
		default:
			usage();
		}
	}
	if (!opt.dev || !opt.unit || !opt.units || !opt.ops || optind != argc)
		usage();
	if (opt.snapshots && opt.fs == FS_RAW)
		die("--snapshots needs a filesystem with reflink");
	if (opt.punch && (opt.fs == FS_RAW || opt.punch >= opt.unit))
		die("--punch needs a filesystem and a block smaller than the unit");
}

int main(int argc, char **argv)
{
	unsigned int cut;
	int err, fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	err = ut_tear_dir(opt.dev, tear_dir, sizeof(tear_dir));
	if (err)
		die("%s is not a tearblk device: %s", opt.dev, strerror(-err));
	us = calloc(opt.units, sizeof(*us));
	buf = ut_alloc_io(opt.unit);
	if (!us || !buf)
		die("out of memory");

	if (opt.fs == FS_RAW) {
		snprintf(path, sizeof(path), "%s", opt.dev);
	} else {
		mkdir(opt.mnt, 0755);
		do_mkfs();
		if (do_mount())
			die("cannot mount the new filesystem");
		snprintf(path, sizeof(path), "%s/units", opt.mnt);
		snprintf(snap_path, sizeof(snap_path), "%s/snapshot", opt.mnt);
	}
	fd = open_target();
	close(fd);
	if (!opt.control)
		require_atomic_unit();
	fd = open_target();
	rewrite_units(fd, 0, NULL);
	close(fd);

	for (cut = 1; cut <= opt.cuts; cut++)
		one_cut(cut);
	if (opt.fs != FS_RAW)
		do_umount();

	printf("torture: %s cuts=%u torn=%u stale=%u torn_cuts=%u stale_cuts=%u fsck_failures=%u errors=%u writes=%llu syncs=%llu snapshots=%llu punches=%llu punch_seen=%llu device_torn=%llu\n",
	       opt.name, opt.cuts, total.torn, total.stale, total.torn_cuts,
	       total.stale_cuts, total.fsck_failures, total.errors,
	       total.writes, total.syncs, total.snapshots, total.punches,
	       total.punch_seen, total.device_torn);
	if (opt.control)
		return total.errors ? 1 : 0;
	return total.torn || total.stale || total.fsck_failures || total.errors;
}
