// SPDX-License-Identifier: GPL-2.0
/*
 * torture - cut power under a workload of patterned units, again and again,
 * and check after each recovery that every unit holds exactly one complete
 * version and none is older than what was made durable before the cut.
 *
 *   torture --dev DEV [--fs raw|xfs|ext4] [--mkfs 'ARGS'] [--mount-opts O]
 *           --unit BYTES [--units N] [--cuts N] [--seed S] [--ops N]
 *           [--cut-mode ops|timer|mixed] [--min-writes N]
 *           [--layouts written,holes,falloc,append]
 *           [--threads N] [--qd N] [--engine pwritev2|io_uring|libaio|mixed]
 *           [--snapshots] [--punch BLOCK] [--expect COUNTER,...]
 *           [--logdev DEV] [--rtdev DEV] [--recovery-cuts]
 *           [--dm-linear SECTORS]
 *           [--control | --control-floor | --control-lying] [--name NAME]
 *           [--verbose] [--stop-at-fsck-failure] [--before-recovery CMD]
 *
 * DEV is a tearblk device. With --fs the device is formatted once and the
 * units live in one file written with O_DIRECT; each cut is followed by a
 * mount (log recovery), the check, an unmount, fsck (xfs_repair -n or
 * e2fsck -fn) and a mount to go on. Without it the units are the device.
 * --stop-at-fsck-failure ends the run at the first fsck that is not clean
 * and leaves that filesystem unmounted as it is, to be looked at (xfs_db,
 * xfs_metadump) before a later cut changes it. --before-recovery CMD runs
 * CMD (sh -c, with TORTURE_CUT and TORTURE_DEV in its environment) after
 * each power-on that a mount will recover from, before that mount: to keep
 * an image of the cut filesystem, log included (xfs_metadump), so that a
 * damaged recovery can be replayed and its log read. A CMD that fails
 * ends the run.
 *
 * --dm-linear SECTORS puts a dm-linear device over DEV, its data starting
 * SECTORS into DEV (as LVM's first extent does), and the filesystem (or
 * the raw units) on that: atomic writes pass through device-mapper to the
 * disk. The cut is DEV's; before power comes back the dm device goes (it
 * holds DEV open) and it is created again after, as a boot activates it.
 *
 * --logdev and --rtdev (XFS) put the log and the realtime section on their
 * own tearblk devices; a cut cuts all of them, in a seeded order, as a
 * machine's disks lose power one after another. With --rtdev the file
 * must be a realtime file (mkfs -d rtinherit=1). --recovery-cuts cuts the
 * power a second time in one cut of two, as the data device takes a seeded
 * one of the writes of the mount that replays the log (tearblk's
 * cut_after_writes, so a replay lands in the same place); the run fails
 * unless a clear share of those second cuts came during the mount.
 *
 * The workload writes random units with RWF_ATOMIC (none with --control),
 * some with RWF_DSYNC, and calls fdatasync now and then; with --snapshots
 * it also reflinks the file into a snapshot now and then, so that writes
 * find shared extents; with --punch BLOCK, one write in 8 first punches a
 * BLOCK-sized hole into its unit, so that it finds a hole next to written
 * blocks (a punched unit may also read as its old version with exactly that
 * block zeroed, until a later write of it is durable). --threads N writers
 * share the file, each owning every Nth unit, and each write call carries
 * up to --qd units at once through --engine (mixed: a random engine per
 * call). A unit's "floor" is its newest generation whose write finished
 * and was then made durable (by RWF_DSYNC or a later fdatasync returning
 * success, which cannot happen after the cut). After the cut a unit may
 * hold its floor or any newer generation written since; anything else is
 * stale, a mix is torn.
 *
 * --layouts picks, per cut, what the workload writes into: "written" goes
 * on with the units of the cut before (overwrites); "holes" (a sparse
 * file), "falloc" (a preallocated, unwritten file, as databases create
 * their files) and "append" (an empty file that every write past EOF
 * grows) start the cut from a new file, so that every atomic write
 * allocates. A unit never made durable may then read as zeroes.
 *
 * The cut comes after a seeded number of operations (ops: the device sees
 * the same writes on a replay, with one thread) or after a seeded delay
 * from the main thread (timer: writes are in flight at the cut). Either
 * way it waits until --min-writes (default 4) writes completed in this
 * cut, so that no cut hits an idle device. Every cut's seed derives from
 * --seed (random when not given, and printed) and the cut number; the
 * filesystem carries over from cut to cut, so cut N is replayed by the
 * command that a failure prints, which runs cuts 1..N again.
 *
 * It is a failure, not a skip: when statx does not promise atomic writes
 * of --unit (the geometry lost the limits the run was built for); when a
 * write, fdatasync, snapshot or punch fails before the cut; when a cut
 * completed fewer than --min-writes writes; and when a counter named by
 * --expect (hw_writes, sw_writes, fallback_mixed from the filesystem's
 * atomic_write sysfs directory) did not grow over the run.
 *
 * --control writes plain units: they must tear. --control-floor writes
 * atomic units but only pretends to make them durable (no fdatasync, no
 * RWF_DSYNC, the floor raised as if): units older than their "fsync" must
 * show, or the stale check is blind. --control-lying makes the tearblk
 * device ignore flushes and FUA for the run (honour_flush=0), a disk that
 * lies: on the raw device, units older than their fsync must show.
 *
 * Last line: "torture: NAME cuts=N torn=T stale=S torn_cuts=.. stale_cuts=..
 * fsck_failures=F errors=E writes=.. hw_writes=.. sw_writes=..
 * fallback_mixed=.. ... secs_workload=.. secs_power=.. secs_recovery=..
 * secs_check=.. secs_umount=.. secs_fsck=.. secs_mount=.. ..." (the
 * phases of a cut, enum phase).
 * Exit 0 when all of T, S, F and E are 0; with a
 * control, exit 0 when the run completed without errors (tears and stale
 * units are the point).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/random.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "awstats.h"
#include "io.h"
#include "pattern.h"
#include "statx.h"
#include "tear.h"
#include "util.h"

#define PATTERN_SEED 0x7047

enum fs_kind { FS_RAW, FS_XFS, FS_EXT4 };
enum cut_mode { CUT_OPS, CUT_TIMER, CUT_MIXED };
enum layout { L_WRITTEN, L_HOLES, L_FALLOC, L_APPEND, L_COUNT };
#define ENGINE_MIXED UT_ENGINE_COUNT
#define MAX_QD 16

static const char *const layout_names[L_COUNT] = {
	"written", "holes", "falloc", "append",
};

/* The counters of the atomic_write sysfs directory that say which path. */
enum path_counter { PC_HW, PC_SW, PC_MIXED, PC_COUNT };
static const char *const counter_names[PC_COUNT] = {
	"hw_writes", "sw_writes", "fallback_mixed",
};

/* All of it under state_lock; the writes themselves are not. */
struct unit_state {
	uint64_t floor;		/* newest generation known durable */
	uint64_t done;		/* newest generation whose write finished */
	uint64_t issued;	/* newest generation handed to the kernel */
	uint64_t punched;	/* the newest generation when a block was
				 * last punched out; 0: no punch pending */
	unsigned int npunch;	/* punches pending */
};

static struct {
	const char *dev, *logdev, *rtdev, *name, *mkfs_args, *mount_opts, *mnt;
	long long dm_linear;	/* -1: none; else the offset in DEV, sectors */
	enum fs_kind fs;
	enum cut_mode cut_mode;
	size_t unit;
	unsigned int units, cuts, ops, min_writes, threads, qd;
	unsigned int engine;	/* an enum ut_engine, or ENGINE_MIXED */
	unsigned int layouts;	/* mask of enum layout */
	unsigned int expect;	/* mask of enum path_counter */
	uint64_t seed;
	int control;
	int control_floor;
	int control_lying;
	int snapshots;
	int recovery_cuts;
	size_t punch;
	int verbose;
	int stop_at_fsck_failure;
	const char *before_recovery;
	int argc;
	char **argv;
} opt = {
	.name = "torture", .mnt = "/mnt/torture", .cut_mode = CUT_MIXED,
	.units = 64, .cuts = 10, .ops = 64, .min_writes = 4, .threads = 1,
	.qd = 1, .engine = UT_ENGINE_PWRITEV2, .layouts = 1 << L_WRITTEN,
};

/* The tearblk devices that lose power together: data, then log and rt. */
#define MAX_DEVS 3
static char tear_dirs[MAX_DEVS][256];
static unsigned int ndevs;
static char mount_opts[512];
static char aw_dir[256];
static char path[512];
static char snap_path[512];
static struct unit_state *us;
static uint64_t gen_counter;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The phases of a cut, timed so that a slow run shows where it spends:
 * the workload up to the cut, power-on with any second cut, the mount
 * that replays the log, the check of the units, then the unmount, the
 * fsck and the mount that the next cut starts from.
 */
enum phase {
	PH_WORKLOAD, PH_POWER, PH_RECOVERY, PH_CHECK, PH_UMOUNT, PH_FSCK,
	PH_MOUNT, PH_COUNT
};
static const char *const phase_names[PH_COUNT] = {
	"workload", "power", "recovery", "check", "umount", "fsck", "mount",
};

static struct {
	unsigned int torn, stale, torn_cuts, stale_cuts, fsck_failures, errors;
	unsigned long long writes, syncs, snapshots, punches, punch_seen;
	unsigned long long device_torn, zero_seen;
	unsigned long long counters[PC_COUNT];
	unsigned int layout_cuts[L_COUNT];
	unsigned int recovery_cuts, recovery_interrupted;
	unsigned long long recovery_lost;	/* recovery writes the cut found unflushed */
	double secs[PH_COUNT];			/* where the cuts' time went */
} total;

/* Monotonic seconds, to charge a cut's time to its phases. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Charge the time since *t to phase ph and start the next phase. */
static void charge(enum phase ph, double *t)
{
	double n = now();

	total.secs[ph] += n - *t;
	*t = n;
}

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

/*
 * Run ARGV (NULL-terminated), output to LOG; exit status or -1. With
 * ONE_CPU the program runs on the CPU torture runs on: xfs_repair starts
 * over a hundred threads, and under emulation the TLB shootdowns their
 * stacks cost across CPUs made it spend three times the CPU time it needs
 * (1.0 against 0.35 s a check of a 512 MiB filesystem, 2 guest CPUs,
 * kernel without debug options).
 */
static int run(char *const argv[], const char *log, bool one_cpu)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int cpu = sched_getcpu();
		cpu_set_t set;

		if (one_cpu && cpu >= 0) {
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
		}

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

/*
 * What mkfs, mount and fsck (or the raw units) see: DEV, or with
 * --dm-linear the dm device over it.
 */
static char dm_name[64], dm_table[512];

static const char *data_dev(void)
{
	static char path[128];

	if (opt.dm_linear < 0)
		return opt.dev;
	snprintf(path, sizeof(path), "/dev/mapper/%s", dm_name);
	return path;
}

/* mknodes: without udev (the test guest), nothing else makes the node. */
static void dm_linear_create(void)
{
	char *create[] = { "dmsetup", "create", dm_name, "--table", dm_table, NULL };
	char *mknodes[] = { "dmsetup", "mknodes", dm_name, NULL };

	if (run(create, "/tmp/torture-dm.log", false) || run(mknodes, "/tmp/torture-dm.log", false)) {
		show_log("/tmp/torture-dm.log");
		die("dmsetup create %s --table '%s' failed", dm_name, dm_table);
	}
}

static void dm_linear_remove(void)
{
	char *argv[] = { "dmsetup", "remove", "--retry", dm_name, NULL };

	if (run(argv, "/tmp/torture-dm.log", false)) {
		show_log("/tmp/torture-dm.log");
		die("dmsetup remove %s failed", dm_name);
	}
}

/* The dm-linear device over DEV: all of DEV from --dm-linear on. */
static void dm_linear_setup(void)
{
	uint64_t bytes;
	int fd = open(opt.dev, O_RDONLY);

	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes))
		die("size of %s: %s", opt.dev, strerror(errno));
	close(fd);
	if ((unsigned long long)opt.dm_linear >= bytes >> 9)
		die("--dm-linear %lld is beyond the end of %s", opt.dm_linear, opt.dev);
	snprintf(dm_name, sizeof(dm_name), "torture-%d", (int)getpid());
	snprintf(dm_table, sizeof(dm_table), "0 %llu linear %s %lld",
		 (unsigned long long)(bytes >> 9) - opt.dm_linear, opt.dev,
		 opt.dm_linear);
	dm_linear_create();
}

static void do_mkfs(void)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "mkfs.%s %s %s%s%s%s%s %s >/tmp/torture-mkfs.log 2>&1",
		 fs_name(), opt.fs == FS_XFS ? "-q -f" : "-q -F",
		 opt.mkfs_args ? opt.mkfs_args : "",
		 opt.logdev ? " -l logdev=" : "", opt.logdev ? opt.logdev : "",
		 opt.rtdev ? " -r rtdev=" : "", opt.rtdev ? opt.rtdev : "",
		 data_dev());
	if (system(cmd) != 0) {
		show_log("/tmp/torture-mkfs.log");
		die("%s failed", cmd);
	}
}

static int do_mount(void)
{
	if (mount(data_dev(), opt.mnt, fs_name(), 0, mount_opts) == 0)
		return 0;
	printf("#   mount %s: %s\n", data_dev(), strerror(errno));
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
	/* -P: no prefetch threads, which a RAM disk does not need either. */
	char *xfs[10] = { "xfs_repair", "-n", "-P" }, **a = xfs + 3;
	char *ext4[] = { "e2fsck", "-fn", (char *)data_dev(), NULL };
	int rc;

	if (opt.logdev) {
		*a++ = "-l";
		*a++ = (char *)opt.logdev;
	}
	if (opt.rtdev) {
		*a++ = "-r";
		*a++ = (char *)opt.rtdev;
	}
	*a++ = (char *)data_dev();
	*a = NULL;
	rc = run(opt.fs == FS_XFS ? xfs : ext4, "/tmp/torture-fsck.log", true);

	if (rc != 0) {
		printf("#   %s found damage (exit %d):\n", opt.fs == FS_XFS ?
		       "xfs_repair -n" : "e2fsck -fn", rc);
		show_log("/tmp/torture-fsck.log");
	}
	return rc != 0;
}

/*
 * A file meant for the realtime device that lands on the data device tests
 * the wrong device: a configuration that lost what it was built for.
 */
static void require_realtime(int fd)
{
	struct fsxattr fsx;

	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx))
		die("FS_IOC_FSGETXATTR %s: %s", path, strerror(errno));
	if (fsx.fsx_xflags & FS_XFLAG_REALTIME)
		return;
	printf("# FAIL: %s is not a realtime file (mkfs -d rtinherit=1?): the configuration lost what it was built for\n",
	       path);
	printf("torture: %s cuts=0 errors=1\n", opt.name);
	exit(1);
}

static int open_target(void)
{
	int fd = open(path, O_RDWR | O_DIRECT | (opt.fs == FS_RAW ? 0 : O_CREAT),
		      0644);

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	if (opt.rtdev)
		require_realtime(fd);
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

/* A control run: what the check finds is the point, not a failure. */
static int is_control(void)
{
	return opt.control || opt.control_floor || opt.control_lying;
}

static int atomic_flag(void)
{
	return opt.control ? 0 : RWF_ATOMIC;
}

/*
 * Bring every unit that holds no known version (a new filesystem, a new
 * file, or damage found by the check) to a durable generation.
 */
static void rewrite_units(int fd, void *buf)
{
	struct iovec iov = { buf, opt.unit };
	unsigned int u, n = 0;

	for (u = 0; u < opt.units; u++) {
		ssize_t ret;

		if (us[u].done)
			continue;
		ut_pattern_fill(buf, opt.unit, u, ++gen_counter, PATTERN_SEED);
		ret = ut_writev(UT_ENGINE_PWRITEV2, fd, &iov, 1,
				(off_t)u * opt.unit, atomic_flag());
		if (ret != (ssize_t)opt.unit)
			die("setup write of unit %u: %s", u,
			    ret < 0 ? strerror(-ret) : "short write");
		us[u].issued = us[u].done = gen_counter;
		n++;
	}
	if (n && fdatasync(fd))
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
		return -errno;
	if (ioctl(sfd, FICLONE, fd))
		err = -errno;
	close(sfd);
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
		return -errno;
	pthread_mutex_lock(&state_lock);
	/*
	 * A unit with no write handed to the kernel reads as zeroes, punched
	 * or not, and generation 0 cannot mark a punch: counting it would let
	 * a later punch accept one zeroed block more than was punched since.
	 */
	if (us[u].issued) {
		us[u].punched = us[u].issued;
		us[u].npunch++;
	}
	total.punches++;
	pthread_mutex_unlock(&state_lock);
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

/* One cut's workload, shared by its writer threads. */
struct cut {
	unsigned int no;
	uint64_t seed;
	int fd;
	int timer;
	unsigned int nops;	/* ops mode: operations per thread */
	int cut_started;	/* the cut is under way: failures expected */
	int stop;
	int running;		/* writer threads still going */
	unsigned long long writes;	/* completed in this cut */
	unsigned int errors;
};

struct writer {
	struct cut *c;
	unsigned int tid;
	unsigned long long writes;
	void *bufs;		/* qd units */
	pthread_t th;
};

/*
 * A call failed. After the cut has begun that is the cut's doing; before
 * it, it is a kernel bug that would otherwise leave the cut an idle
 * device: count it. Either way this writer stops. Returns 1.
 */
static int op_failed(struct cut *c, const char *what, int err)
{
	if (c->timer && __atomic_load_n(&c->cut_started, __ATOMIC_ACQUIRE))
		return 1;
	__atomic_fetch_add(&c->errors, 1, __ATOMIC_RELAXED);
	printf("# FAIL cut %u: %s failed before the cut: %s\n", c->no, what,
	       err > 0 ? strerror(err) : "short write");
	if (err == ENOSPC && opt.fs != FS_RAW) {
		struct statvfs sv;

		/* Full, or a filesystem that only thinks it is? */
		if (!statvfs(opt.mnt, &sv))
			printf("#   %s: %llu of %llu blocks of %lu bytes free, %llu available\n",
			       opt.mnt, (unsigned long long)sv.f_bfree,
			       (unsigned long long)sv.f_blocks, sv.f_frsize,
			       (unsigned long long)sv.f_bavail);
	}
	return 1;
}

/* fdatasync, and raise the floor of every unit whose write finished before. */
static int sync_op(struct cut *c)
{
	uint64_t snap[opt.units];
	unsigned int u;

	pthread_mutex_lock(&state_lock);
	for (u = 0; u < opt.units; u++)
		snap[u] = us[u].done;
	pthread_mutex_unlock(&state_lock);
	if (!opt.control_floor && fdatasync(c->fd))
		return op_failed(c, "fdatasync", errno);
	pthread_mutex_lock(&state_lock);
	for (u = 0; u < opt.units; u++)
		floor_raised(u, snap[u]);
	total.syncs++;
	pthread_mutex_unlock(&state_lock);
	return 0;
}

/* The units writer TID owns: TID, TID + threads, ... */
static unsigned int owned_units(unsigned int tid)
{
	return (opt.units - tid + opt.threads - 1) / opt.threads;
}

/*
 * One write call of up to qd units that this writer owns, through the
 * configured engine. With --punch, one unit in 8 first loses a block, so
 * that the atomic write finds a hole next to written blocks.
 */
static int write_op(struct writer *w, uint64_t r)
{
	struct cut *c = w->c;
	unsigned int own = owned_units(w->tid);
	unsigned int n = 1 + (r >> 48) % (opt.qd < own ? opt.qd : own);
	unsigned int first = (r >> 8) % own, i, engine = opt.engine;
	int dsync = (r >> 40) % 8 == 0, flags = atomic_flag();
	struct ut_wreq req[MAX_QD];
	struct iovec iov[MAX_QD];
	unsigned int unit[MAX_QD];
	uint64_t gen[MAX_QD];
	int err, failed = 0;

	if (engine == ENGINE_MIXED)
		engine = (r >> 56) % UT_ENGINE_COUNT;
	if (dsync && !opt.control_floor)
		flags |= RWF_DSYNC;
	for (i = 0; i < n; i++) {
		unit[i] = w->tid + ((first + i) % own) * opt.threads;
		if (opt.punch && ((r >> 20) + i) % 8 == 3) {
			err = punch_block(c->fd, unit[i],
					  ((r >> 32) + i) % (opt.unit / opt.punch));
			if (err)
				return op_failed(c, "punch", -err);
		}
		pthread_mutex_lock(&state_lock);
		gen[i] = ++gen_counter;
		us[unit[i]].issued = gen[i];
		pthread_mutex_unlock(&state_lock);
		iov[i].iov_base = (char *)w->bufs + (size_t)i * opt.unit;
		iov[i].iov_len = opt.unit;
		ut_pattern_fill(iov[i].iov_base, opt.unit, unit[i], gen[i],
				PATTERN_SEED);
		req[i] = (struct ut_wreq){
			.fd = c->fd, .iov = &iov[i], .iovcnt = 1,
			.off = (off_t)unit[i] * opt.unit, .rwflags = flags,
		};
	}
	ut_writev_batch(engine, req, n);
	pthread_mutex_lock(&state_lock);
	for (i = 0; i < n; i++) {
		if (req[i].res != (ssize_t)opt.unit) {
			failed = req[i].res < 0 ? (int)-req[i].res : -1;
			continue;
		}
		us[unit[i]].done = gen[i];
		if (dsync)
			floor_raised(unit[i], gen[i]);
		total.writes++;
		w->writes++;
		__atomic_fetch_add(&c->writes, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&state_lock);
	if (failed) {
		char what[64];

		snprintf(what, sizeof(what), "%s write", ut_engine_name(engine));
		return op_failed(c, what, failed);
	}
	return 0;
}

static int one_op(struct writer *w, uint64_t *rng)
{
	uint64_t r = ut_rand(rng);
	int err;

	/*
	 * fdatasync one time in 16, RWF_DSYNC one write in 8: enough
	 * durability points to test the floor, few enough that most cuts
	 * find unflushed writes (on a block device RWF_DSYNC flushes the
	 * whole cache). The first writer takes the snapshots.
	 */
	if (opt.snapshots && w->tid == 0 && r % 64 == 1) {
		err = snapshot(w->c->fd);
		if (err)
			return op_failed(w->c, "reflink snapshot", -err);
		pthread_mutex_lock(&state_lock);
		total.snapshots++;
		pthread_mutex_unlock(&state_lock);
		return 0;
	}
	if (r % 16 == 0)
		return sync_op(w->c);
	return write_op(w, r);
}

static void *writer_main(void *p)
{
	struct writer *w = p;
	struct cut *c = w->c;
	unsigned int per = (opt.min_writes + opt.threads - 1) / opt.threads;
	uint64_t rng = c->seed ^ (0xd1b54a32d192ed03ULL * (w->tid + 1));
	unsigned int op;

	for (op = 0; !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE); op++) {
		if (!c->timer && op >= c->nops && w->writes >= per)
			break;
		if (one_op(w, &rng))
			break;
	}
	ut_io_release();
	__atomic_fetch_sub(&c->running, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Power fails on every device, in an order drawn from SEED: disks on one
 * supply still lose power one after another, and a filesystem must not
 * depend on which goes first.
 */
static int cut_all(uint64_t seed)
{
	unsigned int order[MAX_DEVS], i, j, t;
	uint64_t rng = seed;
	int err;

	for (i = 0; i < ndevs; i++)
		order[i] = i;
	for (i = ndevs; i > 1; i--) {
		j = ut_rand(&rng) % i;
		t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	for (i = 0; i < ndevs; i++) {
		err = ut_tear_cut(tear_dirs[order[i]], seed + order[i]);
		if (err)
			return err;
	}
	return 0;
}

/* Power comes back on every device; the writes the cut tore are summed. */
static void power_on_all(unsigned long long *torn, unsigned long long *pending)
{
	uint64_t v;
	unsigned int i;
	int err;

	if (opt.dm_linear >= 0)
		dm_linear_remove();
	for (i = 0; i < ndevs; i++) {
		err = ut_tear_power_on(tear_dirs[i]);
		if (err)
			die("power_on %s: %s", tear_dirs[i], strerror(-err));
		if (torn && !ut_tear_read(tear_dirs[i], "cut_torn", &v))
			*torn += v;
		if (pending && !ut_tear_read(tear_dirs[i], "cut_pending", &v))
			*pending += v;
	}
	if (opt.dm_linear >= 0)
		dm_linear_create();
}

/*
 * The workload up to the cut. In ops mode the writers stop after their
 * operations and the cut follows; in timer mode the cut comes while they
 * write, a seeded delay after the cut's first --min-writes writes.
 */
static void workload(struct cut *c, uint64_t *rng)
{
	struct writer w[opt.threads];
	unsigned int t;
	int err;

	c->running = opt.threads;
	for (t = 0; t < opt.threads; t++) {
		w[t] = (struct writer){ .c = c, .tid = t };
		w[t].bufs = ut_alloc_io((size_t)opt.qd * opt.unit);
		if (!w[t].bufs)
			die("out of memory");
		if (pthread_create(&w[t].th, NULL, writer_main, &w[t]))
			die("pthread_create failed");
	}
	if (c->timer) {
		/* Somewhere within the time nops operations take. */
		useconds_t delay = 1000 + ut_rand(rng) % (c->nops * 2000 + 1);

		while (__atomic_load_n(&c->writes, __ATOMIC_RELAXED) < opt.min_writes &&
		       __atomic_load_n(&c->running, __ATOMIC_ACQUIRE) > 0)
			usleep(200);
		usleep(delay);
		__atomic_store_n(&c->cut_started, 1, __ATOMIC_RELEASE);
		err = cut_all(c->seed);
		__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
		for (t = 0; t < opt.threads; t++)
			pthread_join(w[t].th, NULL);
	} else {
		for (t = 0; t < opt.threads; t++)
			pthread_join(w[t].th, NULL);
		err = cut_all(c->seed);
	}
	for (t = 0; t < opt.threads; t++)
		free(w[t].bufs);
	if (err)
		die("cut: %s", strerror(-err));
	if (c->writes < opt.min_writes) {
		c->errors++;
		printf("# FAIL cut %u: %llu writes completed before the cut, not the %u asked for\n",
		       c->no, c->writes, opt.min_writes);
	}
	total.errors += c->errors;
}

/* The shell command that runs this torture again up to cut CUT. */
static void print_replay(unsigned int cut)
{
	int i;

	printf("#   replay: torture");
	for (i = 1; i < opt.argc; i++) {
		const char *a = opt.argv[i];

		if (!strcmp(a, "--seed") || !strcmp(a, "--cuts")) {
			i++;
			continue;
		}
		if (!strncmp(a, "--seed=", 7) || !strncmp(a, "--cuts=", 7))
			continue;
		if (strpbrk(a, " \t'\"$\\*?;&|<>()") || !*a) {
			const char *p;

			putchar(' ');
			putchar('\'');
			for (p = a; *p; p++) {
				if (*p == '\'')
					fputs("'\\''", stdout);
				else
					putchar(*p);
			}
			putchar('\'');
		} else {
			printf(" %s", a);
		}
	}
	printf(" --seed %#" PRIx64 " --cuts %u%s\n", opt.seed, cut,
	       opt.cut_mode == CUT_OPS && opt.threads == 1 ? "" :
	       "  (timer cuts and several writers replay the sequence, not the timing)");
}

/* What the first bad stamp of unit U holds, so a failure says where to look. */
static void report_bad_stamp(unsigned int cut, unsigned int u, const void *buf,
			     const struct ut_unit_check *r)
{
	off_t at = (off_t)r->first_bad * UT_STAMP_SIZE;
	char what[256];

	ut_stamp_describe((const char *)buf + at, what, sizeof(what));
	printf("#   cut %u: unit %u stamp %u (file offset %lld): %s\n", cut, u,
	       r->first_bad, (long long)((off_t)u * opt.unit + at), what);
}

/*
 * Read every unit back and judge it against what the workload knows. A
 * unit past EOF reads as zeroes; one that reads as zeroes is fine only if
 * none of its versions was made durable (a new file of an allocating
 * layout). A unit in doubt is forgotten, so the next cut rewrites it.
 */
static void check_units(int fd, unsigned int cut, void *buf)
{
	unsigned int u, torn = 0, stale = 0;

	for (u = 0; u < opt.units; u++) {
		struct ut_unit_check r;
		ssize_t n = ut_pread(fd, buf, opt.unit, (off_t)u * opt.unit);

		if (n < 0)
			die("read of unit %u after the cut: %s", u, strerror(-n));
		memset((char *)buf + n, 0, opt.unit - n);
		ut_pattern_check(buf, opt.unit, u, PATTERN_SEED, &r);
		if (punch_shape(u, &r)) {
			total.punch_seen++;
			memset(&us[u], 0, sizeof(us[u]));
			continue;
		}
		if (r.state == UT_UNIT_TORN || r.state == UT_UNIT_CORRUPT) {
			torn++;
			if (torn <= 3)
				printf("#   cut %u: unit %u %s: %u stamps of generations %" PRIu64
				       "..%" PRIu64 ", %u zero, %u bad, %zd bytes read (floor %" PRIu64
				       ", newest issued %" PRIu64 ", %u punches pending, last at %" PRIu64 ")\n",
				       cut, u, ut_unit_state_name(r.state),
				       r.stamps_valid, r.gen_min, r.gen_max,
				       r.stamps_zero, r.stamps_bad, n, us[u].floor,
				       us[u].issued, us[u].npunch, us[u].punched);
			if (torn <= 3 && r.stamps_bad)
				report_bad_stamp(cut, u, buf, &r);
			memset(&us[u], 0, sizeof(us[u]));
		} else if (r.state == UT_UNIT_ZERO ? us[u].floor > 0 :
			   r.gen < us[u].floor || r.gen > us[u].issued) {
			stale++;
			if (stale <= 3)
				printf("#   cut %u: unit %u stale: holds %s generation %" PRIu64
				       ", floor %" PRIu64 ", newest issued %" PRIu64 "\n",
				       cut, u, ut_unit_state_name(r.state),
				       r.state == UT_UNIT_OK ? r.gen : 0,
				       us[u].floor, us[u].issued);
			memset(&us[u], 0, sizeof(us[u]));
		} else if (r.state == UT_UNIT_ZERO) {
			total.zero_seen++;
			memset(&us[u], 0, sizeof(us[u]));
		} else {
			us[u].floor = us[u].done = us[u].issued = r.gen;
			us[u].punched = 0;
			us[u].npunch = 0;
		}
	}
	total.torn += torn;
	total.stale += stale;
	total.torn_cuts += torn > 0;
	total.stale_cuts += stale > 0;
	if ((torn || stale) && !is_control()) {
		printf("# FAIL cut %u: %u torn, %u stale\n", cut, torn, stale);
		print_replay(cut);
	}
}

/*
 * A new file for an allocating layout, made durable (with its directory
 * entry) before the workload, so that the cut cannot take it back.
 */
static void new_file(enum layout l)
{
	off_t size = (off_t)opt.units * opt.unit;
	int fd, dfd;

	if (unlink(path) && errno != ENOENT)
		die("unlink %s: %s", path, strerror(errno));
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_DIRECT, 0644);
	if (fd < 0)
		die("create %s: %s", path, strerror(errno));
	if (l == L_HOLES && ftruncate(fd, size))
		die("ftruncate %s: %s", path, strerror(errno));
	if (l == L_FALLOC && fallocate(fd, 0, 0, size))
		die("fallocate %s: %s", path, strerror(errno));
	if (fsync(fd))
		die("fsync %s: %s", path, strerror(errno));
	close(fd);
	dfd = open(opt.mnt, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 || fsync(dfd))
		die("fsync %s: %s", opt.mnt, strerror(errno));
	close(dfd);
	memset(us, 0, sizeof(*us) * opt.units);
}

static enum layout pick_layout(uint64_t *rng)
{
	unsigned int n = __builtin_popcount(opt.layouts), k, l;

	k = ut_rand(rng) % n;
	for (l = 0; l < L_COUNT; l++)
		if ((opt.layouts & (1U << l)) && k-- == 0)
			break;
	return l;
}

/*
 * The filesystem's counters are under the name of its device, which for a
 * dm device created again after a cut need not be the same each time.
 */
static void set_aw_dir(void)
{
	char sys[64], real[PATH_MAX];
	const char *base;
	struct stat st;

	/* By device number: /dev/mapper nodes need not link to /dev/dm-N. */
	if (stat(data_dev(), &st))
		die("%s: %s", data_dev(), strerror(errno));
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(st.st_rdev),
		 minor(st.st_rdev));
	if (!realpath(sys, real))
		die("%s: %s", sys, strerror(errno));
	base = strrchr(real, '/');
	snprintf(aw_dir, sizeof(aw_dir), "/sys/fs/%s/%s/atomic_write",
		 fs_name(), base ? base + 1 : real);
}

/* The path counters of the mounted filesystem, 0 where it has none. */
static void read_counters(uint64_t v[PC_COUNT])
{
	struct ut_awstats st;
	int i;

	memset(v, 0, sizeof(*v) * PC_COUNT);
	if (opt.fs == FS_RAW)
		return;
	set_aw_dir();
	if (ut_awstats_read_dir(aw_dir, &st))
		die("%s: %s", aw_dir, strerror(errno));
	for (i = 0; i < PC_COUNT; i++)
		ut_awstats_get(&st, counter_names[i], &v[i]);
}

/*
 * How many writes the data device took in the last mount after a cut: the
 * recovery that a second cut must land in.
 */
static uint64_t recovery_writes = 8;

static uint64_t dev_writes(void)
{
	uint64_t v = 0;

	ut_tear_read(tear_dirs[0], "writes", &v);
	return v;
}

/*
 * Power fails again as the data device takes a seeded one of the writes
 * that the mount replaying the first cut's log makes (tearblk's
 * cut_after_writes): the recovery's own writes are torn or lost. The mount
 * fails or survives to an unusable filesystem; either way the next mount
 * must recover from what the second cut left.
 */
static void recovery_cut(struct cut *c, uint64_t *rng)
{
	/* The first three quarters: this recovery may write less than the last. */
	uint64_t n = 1 + ut_rand(rng) % (recovery_writes * 3 / 4 ?: 1), powered = 1, v;
	unsigned long long pending = 0;
	unsigned int i;
	int err, rc;

	err = ut_tear_write(tear_dirs[0], "seed", c->seed ^ 0x5ec0d);
	if (!err)
		err = ut_tear_write(tear_dirs[0], "cut_after_writes", n);
	if (err)
		die("cannot arm the second cut: %s", strerror(-err));
	rc = mount(data_dev(), opt.mnt, fs_name(), 0, mount_opts) ? -errno : 0;
	ut_tear_read(tear_dirs[0], "powered", &powered);
	for (i = 0; i < ndevs; i++) {
		if (ut_tear_read(tear_dirs[i], "powered", &v) || !v)
			continue;
		err = ut_tear_cut(tear_dirs[i], c->seed ^ (0x5ec0d + i));
		if (err)
			die("second cut: %s", strerror(-err));
	}
	if (rc == 0)
		do_umount();
	total.recovery_cuts++;
	total.recovery_interrupted += !powered;
	power_on_all(&total.device_torn, &pending);
	total.recovery_lost += pending;
	if (opt.verbose)
		printf("#   cut %u: second cut at recovery write %" PRIu64 " of about %" PRIu64 " (%s; mount %s), %llu writes unflushed\n",
		       c->no, n, recovery_writes,
		       powered ? "the mount finished first" : "during the mount",
		       rc ? strerror(-rc) : "succeeded", pending);
}

/* --before-recovery: the powered-on devices, before any mount recovers. */
static void run_before_recovery(unsigned int no)
{
	char cut[16];
	int rc;

	if (!opt.before_recovery)
		return;
	snprintf(cut, sizeof(cut), "%u", no);
	if (setenv("TORTURE_CUT", cut, 1) ||
	    setenv("TORTURE_DEV", data_dev(), 1))
		die("setenv: %s", strerror(errno));
	fflush(stdout);
	rc = system(opt.before_recovery);
	if (rc)
		die("cut %u: --before-recovery command failed (status %d): %s",
		    no, rc, opt.before_recovery);
}

static void one_cut(unsigned int no)
{
	struct cut c = { .no = no, .seed = opt.seed ^ (0x9e3779b97f4a7c15ULL * no) };
	uint64_t rng = c.seed, before[PC_COUNT], after[PC_COUNT];
	enum layout layout;
	void *buf = ut_alloc_io(opt.unit);
	unsigned long long torn = 0;
	uint64_t w0;
	double t = now();
	int i;

	if (!buf)
		die("out of memory");
	c.timer = opt.cut_mode == CUT_TIMER ||
		  (opt.cut_mode == CUT_MIXED && (ut_rand(&rng) & 1));
	c.nops = 1 + ut_rand(&rng) % opt.ops;
	layout = pick_layout(&rng);
	total.layout_cuts[layout]++;
	if (layout != L_WRITTEN)
		new_file(layout);

	c.fd = open_target();
	if (layout == L_WRITTEN)
		rewrite_units(c.fd, buf);
	read_counters(before);
	workload(&c, &rng);
	read_counters(after);
	for (i = 0; i < PC_COUNT; i++)
		total.counters[i] += after[i] - before[i];
	close(c.fd);
	charge(PH_WORKLOAD, &t);
	if (opt.fs != FS_RAW)
		do_umount();
	power_on_all(&torn, NULL);
	total.device_torn += torn;
	if (opt.verbose)
		printf("#   cut %u: %s, %s, %llu writes (hw %" PRIu64 ", sw %" PRIu64
		       "), devices tore %llu writes\n",
		       no, c.timer ? "timer" : "ops", layout_names[layout],
		       c.writes, after[PC_HW] - before[PC_HW],
		       after[PC_SW] - before[PC_SW], torn);
	run_before_recovery(no);
	if (opt.recovery_cuts && (ut_rand(&rng) & 1)) {
		recovery_cut(&c, &rng);
		run_before_recovery(no);
	}
	charge(PH_POWER, &t);

	w0 = dev_writes();
	if (opt.fs != FS_RAW && do_mount()) {
		total.errors++;
		printf("# FAIL cut %u: mount after the cut failed\n", no);
		print_replay(no);
		do_fsck();
		printf("torture: %s cuts=%u errors=%u (cannot go on without a filesystem)\n",
		       opt.name, no, total.errors);
		exit(1);
	}
	recovery_writes = dev_writes() - w0 ?: 1;
	charge(PH_RECOVERY, &t);
	c.fd = open_target();
	check_units(c.fd, no, buf);
	close(c.fd);
	charge(PH_CHECK, &t);
	if (opt.fs != FS_RAW) {
		do_umount();
		charge(PH_UMOUNT, &t);
		if (do_fsck()) {
			total.fsck_failures++;
			printf("# FAIL cut %u: fsck not clean\n", no);
			print_replay(no);
			if (opt.stop_at_fsck_failure) {
				printf("torture: %s stopped at cut %u: fsck not clean, %s left unmounted\n",
				       opt.name, no, data_dev());
				exit(1);
			}
		}
		charge(PH_FSCK, &t);
		if (do_mount())
			die("mount after fsck failed");
		charge(PH_MOUNT, &t);
	}
	if (c.errors)
		print_replay(no);
	free(buf);
}

/*
 * A run whose writes the kernel would refuse proves nothing, and a
 * configuration built for these limits that no longer gets them is a
 * regression: fail.
 */
static void require_atomic_unit(void)
{
	struct ut_statx stx;
	int err = ut_statx(AT_FDCWD, path, 0, UT_STATX_WRITE_ATOMIC, &stx);

	if (err)
		die("statx %s: %s", path, strerror(-err));
	if (!(stx.stx_mask & UT_STATX_WRITE_ATOMIC) ||
	    stx.stx_atomic_write_unit_min > opt.unit ||
	    stx.stx_atomic_write_unit_max < opt.unit) {
		printf("# FAIL: %s offers atomic writes of %u..%u bytes, not %zu: the configuration lost the limits it was built for\n",
		       path, stx.stx_atomic_write_unit_min,
		       stx.stx_atomic_write_unit_max, opt.unit);
		printf("torture: %s cuts=0 errors=1\n", opt.name);
		if (opt.fs != FS_RAW)
			do_umount();
		exit(1);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: torture --dev DEV [--fs raw|xfs|ext4] [--mkfs 'ARGS'] [--mount-opts O]\n"
		"               --unit BYTES [--units N] [--cuts N] [--seed S] [--ops N]\n"
		"               [--cut-mode ops|timer|mixed] [--min-writes N]\n"
		"               [--layouts written,holes,falloc,append]\n"
		"               [--threads N] [--qd N] [--engine pwritev2|io_uring|libaio|mixed]\n"
		"               [--snapshots] [--punch BLOCK] [--expect hw_writes,sw_writes,fallback_mixed]\n"
		"               [--logdev DEV] [--rtdev DEV] [--recovery-cuts]\n"
		"               [--dm-linear SECTORS]\n"
		"               [--control | --control-floor | --control-lying] [--name NAME]\n"
		"               [--verbose] [--stop-at-fsck-failure] [--before-recovery CMD]\n");
	exit(2);
}

/* A comma-separated list of NAMES[] into a mask; dies on an unknown one. */
static unsigned int parse_list(const char *what, const char *arg,
			       const char *const names[], unsigned int n)
{
	unsigned int mask;
	char bad[64];
	int err = ut_parse_list(arg, names, n, &mask, bad, sizeof(bad));

	if (err == -ENOMEM)
		die("out of memory");
	if (err)
		die("%s: unknown %s", what, bad);
	if (!mask)
		die("%s: empty list", what);
	return mask;
}

/* A positive number no larger than MAX; dies otherwise. */
static unsigned int parse_count(const char *what, const char *arg,
				unsigned int min, unsigned int max)
{
	unsigned int v;

	if (ut_parse_uint(arg, min, max, &v))
		die("%s %s: a number from %u to %u", what, arg, min, max);
	return v;
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
		{ "min-writes", required_argument, NULL, 'W' },
		{ "layouts", required_argument, NULL, 'L' },
		{ "threads", required_argument, NULL, 'T' },
		{ "qd", required_argument, NULL, 'Q' },
		{ "engine", required_argument, NULL, 'E' },
		{ "expect", required_argument, NULL, 'X' },
		{ "control", no_argument, NULL, 'C' },
		{ "control-floor", no_argument, NULL, 'F' },
		{ "control-lying", no_argument, NULL, 'Y' },
		{ "snapshots", no_argument, NULL, 'S' },
		{ "punch", required_argument, NULL, 'P' },
		{ "name", required_argument, NULL, 'N' },
		{ "logdev", required_argument, NULL, 'l' },
		{ "rtdev", required_argument, NULL, 'r' },
		{ "recovery-cuts", no_argument, NULL, 'R' },
		{ "dm-linear", required_argument, NULL, 'M' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "stop-at-fsck-failure", no_argument, NULL, 'Z' },
		{ "before-recovery", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 },
	};
	enum ut_engine e;
	int seeded = 0;
	uint64_t v;
	char *end;
	int c;

	opt.argc = argc;
	opt.argv = argv;
	opt.dm_linear = -1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'M':
			v = strtoull(optarg, &end, 0);
			if (*end || end == optarg || v > (1ULL << 40))
				die("--dm-linear %s: a number of sectors", optarg);
			opt.dm_linear = v;
			break;
		case 'k': opt.mkfs_args = optarg; break;
		case 'o': opt.mount_opts = optarg; break;
		case 'C': opt.control = 1; break;
		case 'F': opt.control_floor = 1; break;
		case 'Y': opt.control_lying = 1; break;
		case 'S': opt.snapshots = 1; break;
		case 'P':
			if (ut_parse_size(optarg, &v) || !ut_is_pow2(v) || v < 512)
				die("--punch %s: a power of two of at least 512", optarg);
			opt.punch = v;
			break;
		case 'N': opt.name = optarg; break;
		case 'l': opt.logdev = optarg; break;
		case 'r': opt.rtdev = optarg; break;
		case 'R': opt.recovery_cuts = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'Z': opt.stop_at_fsck_failure = 1; break;
		case 'B': opt.before_recovery = optarg; break;
		case 'f':
			if (!strcmp(optarg, "raw"))
				opt.fs = FS_RAW;
			else if (!strcmp(optarg, "xfs"))
				opt.fs = FS_XFS;
			else if (!strcmp(optarg, "ext4"))
				opt.fs = FS_EXT4;
			else
				die("--fs %s: raw, xfs or ext4", optarg);
			break;
		case 'u':
			if (ut_parse_size(optarg, &v) || !ut_is_pow2(v) || v < 512 ||
			    v > (64U << 20))
				die("--unit %s: a power of two from 512 to 64M", optarg);
			opt.unit = v;
			break;
		case 'n': opt.units = parse_count("--units", optarg, 1, 1U << 20); break;
		case 'c': opt.cuts = parse_count("--cuts", optarg, 0, 1U << 30); break;
		case 'p': opt.ops = parse_count("--ops", optarg, 1, 1U << 20); break;
		case 'W': opt.min_writes = parse_count("--min-writes", optarg, 1, 1U << 20); break;
		case 'T': opt.threads = parse_count("--threads", optarg, 1, 64); break;
		case 'Q': opt.qd = parse_count("--qd", optarg, 1, MAX_QD); break;
		case 'L':
			opt.layouts = parse_list("--layouts", optarg, layout_names, L_COUNT);
			break;
		case 'X':
			opt.expect = parse_list("--expect", optarg, counter_names, PC_COUNT);
			break;
		case 'E':
			if (!strcmp(optarg, "mixed"))
				opt.engine = ENGINE_MIXED;
			else if (ut_engine_parse(optarg, &e) == 0)
				opt.engine = e;
			else
				die("--engine %s: pwritev2, io_uring, libaio or mixed", optarg);
			break;
		case 's':
			errno = 0;
			opt.seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end)
				die("--seed %s: a number", optarg);
			seeded = 1;
			break;
		case 'm':
			if (!strcmp(optarg, "ops"))
				opt.cut_mode = CUT_OPS;
			else if (!strcmp(optarg, "timer"))
				opt.cut_mode = CUT_TIMER;
			else if (!strcmp(optarg, "mixed"))
				opt.cut_mode = CUT_MIXED;
			else
				die("--cut-mode %s: ops, timer or mixed", optarg);
			break;
		default:
			usage();
		}
	}
	if (!opt.dev || !opt.unit || optind != argc)
		usage();
	if (!seeded && getrandom(&opt.seed, sizeof(opt.seed), 0) != sizeof(opt.seed))
		die("getrandom: %s", strerror(errno));
	if (opt.snapshots && opt.fs == FS_RAW)
		die("--snapshots needs a filesystem with reflink");
	if (opt.punch && (opt.fs == FS_RAW || opt.punch >= opt.unit))
		die("--punch needs a filesystem and a block smaller than the unit");
	if (opt.layouts != (1U << L_WRITTEN) && opt.fs == FS_RAW)
		die("--layouts other than written need a filesystem");
	if (opt.expect && opt.fs == FS_RAW)
		die("--expect needs a filesystem with atomic_write counters");
	if (opt.control + opt.control_floor + opt.control_lying > 1)
		die("--control, --control-floor and --control-lying are different runs");
	if (opt.threads > opt.units)
		die("--threads %u: more writers than units", opt.threads);
	if ((opt.logdev || opt.rtdev) && opt.fs != FS_XFS)
		die("--logdev and --rtdev are XFS devices");
	if (opt.recovery_cuts && opt.fs == FS_RAW)
		die("--recovery-cuts needs a filesystem with a log");
	snprintf(mount_opts, sizeof(mount_opts), "%s%s%s%s%s%s%s",
		 opt.mount_opts ? opt.mount_opts : "",
		 opt.mount_opts && opt.logdev ? "," : "",
		 opt.logdev ? "logdev=" : "", opt.logdev ? opt.logdev : "",
		 (opt.mount_opts || opt.logdev) && opt.rtdev ? "," : "",
		 opt.rtdev ? "rtdev=" : "", opt.rtdev ? opt.rtdev : "");
}

int main(int argc, char **argv)
{
	unsigned int cut, i;
	int err, fd, bad = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	{
		const char *devs[MAX_DEVS] = { opt.dev, opt.logdev, opt.rtdev };

		for (i = 0; i < MAX_DEVS; i++) {
			if (!devs[i])
				continue;
			err = ut_tear_dir(devs[i], tear_dirs[ndevs], sizeof(tear_dirs[0]));
			if (err)
				die("%s is not a tearblk device: %s", devs[i], strerror(-err));
			ndevs++;
		}
	}
	us = calloc(opt.units, sizeof(*us));
	if (!us)
		die("out of memory");
	printf("# torture: %s, seed %#" PRIx64 "\n", opt.name, opt.seed);
	for (i = 0; opt.control_lying && i < ndevs; i++) {
		err = ut_tear_write(tear_dirs[i], "honour_flush", 0);
		if (err)
			die("%s: cannot make the disk ignore flushes: %s",
			    tear_dirs[i], strerror(-err));
	}

	if (opt.dm_linear >= 0)
		dm_linear_setup();
	if (opt.fs == FS_RAW) {
		snprintf(path, sizeof(path), "%s", data_dev());
	} else {
		mkdir(opt.mnt, 0755);
		do_mkfs();
		if (do_mount())
			die("cannot mount the new filesystem");
		snprintf(path, sizeof(path), "%s/units", opt.mnt);
		snprintf(snap_path, sizeof(snap_path), "%s/snapshot", opt.mnt);
		set_aw_dir();
	}
	fd = open_target();
	close(fd);
	if (!opt.control)
		require_atomic_unit();

	for (cut = 1; cut <= opt.cuts; cut++)
		one_cut(cut);
	if (opt.fs != FS_RAW)
		do_umount();
	if (opt.dm_linear >= 0)
		dm_linear_remove();

	for (i = 0; i < PC_COUNT; i++) {
		if (!(opt.expect & (1U << i)) || total.counters[i])
			continue;
		printf("# FAIL: no %s counted in %u cuts: the configuration no longer takes the path it was built for\n",
		       counter_names[i], opt.cuts);
		bad = 1;
	}
	/*
	 * Second cuts that all came after recovery had finished would have
	 * tested nothing the first cuts did not.
	 */
	if (opt.recovery_cuts && (total.recovery_cuts == 0 ||
				  total.recovery_interrupted * 4 < total.recovery_cuts)) {
		printf("# FAIL: %u of %u second cuts came during the recovery mount: too few to test recovery\n",
		       total.recovery_interrupted, total.recovery_cuts);
		bad = 1;
	}
	total.errors += bad;
	printf("torture: %s cuts=%u torn=%u stale=%u torn_cuts=%u stale_cuts=%u fsck_failures=%u errors=%u writes=%llu hw_writes=%llu sw_writes=%llu fallback_mixed=%llu syncs=%llu snapshots=%llu punches=%llu punch_seen=%llu zero_seen=%llu",
	       opt.name, opt.cuts, total.torn, total.stale, total.torn_cuts,
	       total.stale_cuts, total.fsck_failures, total.errors,
	       total.writes, total.counters[PC_HW], total.counters[PC_SW],
	       total.counters[PC_MIXED], total.syncs, total.snapshots,
	       total.punches, total.punch_seen, total.zero_seen);
	for (i = 0; i < L_COUNT; i++)
		printf(" %s_cuts=%u", layout_names[i], total.layout_cuts[i]);
	printf(" recovery_cuts=%u recovery_interrupted=%u recovery_lost=%llu",
	       total.recovery_cuts, total.recovery_interrupted, total.recovery_lost);
	for (i = 0; i < PH_COUNT; i++)
		printf(" secs_%s=%.1f", phase_names[i], total.secs[i]);
	printf(" device_torn=%llu seed=%#" PRIx64 "\n", total.device_torn, opt.seed);
	for (i = 0; opt.control_lying && i < ndevs; i++)
		if (ut_tear_write(tear_dirs[i], "honour_flush", 1))
			die("cannot make %s honour flushes again", tear_dirs[i]);
	if (is_control())
		return total.errors ? 1 : 0;
	return total.torn || total.stale || total.fsck_failures || total.errors;
}
