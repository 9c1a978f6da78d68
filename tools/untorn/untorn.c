// SPDX-License-Identifier: GPL-2.0
/*
 * untorn - inspect and exercise torn-write protection (RWF_ATOMIC).
 *
 *   untorn info [--json] PATH
 *   untorn write [options] PATH
 *   untorn verify [options] PATH
 *   untorn stats [--json] [--reset] PATH
 *
 * See untorn.1 or "untorn --help".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "awstats.h"
#include "devinfo.h"
#include "io.h"
#include "pattern.h"
#include "statx.h"
#include "util.h"

#define DEFAULT_SEED 0x756e746f726eULL	/* "untorn" */

static const char usage_text[] =
"NAME\n"
"    untorn - inspect and exercise torn-write protection (RWF_ATOMIC)\n"
"\n"
"SYNOPSIS\n"
"    untorn info [--json] PATH\n"
"    untorn write --unit SIZE [--count N] [--first I] [--gen G] [--offset OFF]\n"
"                 [--seed S] [--engine E] [--loops L] [--dsync] [--no-atomic]\n"
"                 [--buffered] PATH\n"
"    untorn verify --unit SIZE [--count N] [--first I] [--gen G] [--offset OFF]\n"
"                 [--seed S] [--json] PATH\n"
"    untorn stats [--json] [--reset] PATH\n"
"\n"
"DESCRIPTION\n"
"    info shows what torn-write protection PATH (a file or a block device)\n"
"    offers: the statx(2) STATX_WRITE_ATOMIC fields, read through mainline's\n"
"    struct statx layout (including stx_atomic_write_unit_max_opt when the\n"
"    kernel fills it), the atomic-write queue limits of the underlying disk\n"
"    from sysfs, the filesystem type and block size, and on XFS and ext4\n"
"    with the untorn series the filesystem's atomic_write_fallback policy.\n"
"\n"
"    write writes COUNT patterned units of SIZE bytes, unit I at byte\n"
"    OFF + I*SIZE, each with one pwritev2(RWF_ATOMIC) (or io_uring/AIO) on\n"
"    an O_DIRECT descriptor. Every 512-byte stamp of a unit carries the unit\n"
"    index, the generation G, its position and a CRC-32C. A regular file is\n"
"    created if needed.\n"
"\n"
"    verify reads the same units back and classifies each as ok (one\n"
"    complete generation), zero (never written), torn (stamps from several\n"
"    generations, or partly zero) or corrupt (a stamp no write produced).\n"
"\n"
"    stats shows, for the filesystem that holds PATH (XFS or ext4 with the\n"
"    untorn series), what /sys/fs/TYPE/DEV/atomic_write/ keeps: the\n"
"    atomic write limits, the fallback policy (allow, warn or deny; set it\n"
"    with the atomic_write_fallback= mount option or by writing to\n"
"    fallback_policy there), the atomic writes and bytes by path (hw: one\n"
"    atomic write to the device in place; sw: XFS's copy-on-write path),\n"
"    the fallbacks from the hardware path by reason (XFS: no_hw, size,\n"
"    alloc, fragmented, misaligned, shared; ext4: mixed, its slow path)\n"
"    and the writes refused by reason (invalid: EINVAL, unsupported:\n"
"    EOPNOTSUPP, policy: EMEDIUMTYPE under deny, fragmented: ext4 EINVAL).\n"
"\n"
"OPTIONS\n"
"    --unit SIZE    unit size; k, m, g suffixes (powers of 1024)\n"
"    --count N      number of units (default 1)\n"
"    --first I      index of the first unit (default 0)\n"
"    --offset OFF   byte offset of unit 0 (default 0)\n"
"    --gen G        generation to write (default 1); for verify, the\n"
"                   generation every unit must hold\n"
"    --seed S       pattern seed, to tell runs apart (default \"untorn\")\n"
"    --engine E     pwritev2 (default), io_uring or libaio\n"
"    --loops L      write all units L times, generation G, G+1, ... (default 1)\n"
"    --dsync        add RWF_DSYNC to every write\n"
"    --no-atomic    plain writes without RWF_ATOMIC (a control case)\n"
"    --buffered     no O_DIRECT (RWF_ATOMIC then fails with EOPNOTSUPP)\n"
"    --json         machine-readable output\n"
"    --reset        stats: zero the counters after showing them (root)\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 when a write fails or verify finds a unit that is torn,\n"
"    corrupt, or (with --gen) not of generation G, or when stats finds no\n"
"    counters (another filesystem, or a kernel without them); 2 on bad\n"
"    usage.\n"
"\n"
"EXAMPLES\n"
"    untorn info /mnt/db/table.ibd\n"
"    untorn write --unit 16k --count 64 --gen 2 /mnt/db/file\n"
"    untorn verify --unit 16k --count 64 --gen 2 /mnt/db/file\n"
"    untorn stats --json /mnt/db\n";

struct opts {
	uint64_t unit, count, first, offset, gen, seed, loops;
	enum ut_engine engine;
	int dsync, no_atomic, buffered, json, gen_set, reset;
	const char *path;
};

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "untorn: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'untorn --help'.\n");
	exit(2);
}

static uint64_t parse_num(const char *opt, const char *arg)
{
	uint64_t v;

	if (ut_parse_size(arg, &v))
		usage_error("bad number for --%s", opt);
	return v;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "unit", required_argument, NULL, 'u' },
		{ "count", required_argument, NULL, 'n' },
		{ "first", required_argument, NULL, 'i' },
		{ "offset", required_argument, NULL, 'o' },
		{ "gen", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 's' },
		{ "loops", required_argument, NULL, 'l' },
		{ "engine", required_argument, NULL, 'e' },
		{ "dsync", no_argument, NULL, 'D' },
		{ "no-atomic", no_argument, NULL, 'N' },
		{ "buffered", no_argument, NULL, 'B' },
		{ "json", no_argument, NULL, 'j' },
		{ "reset", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->count = 1;
	o->gen = 1;
	o->loops = 1;
	o->seed = DEFAULT_SEED;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u': o->unit = parse_num("unit", optarg); break;
		case 'n': o->count = parse_num("count", optarg); break;
		case 'i': o->first = parse_num("first", optarg); break;
		case 'o': o->offset = parse_num("offset", optarg); break;
		case 'g': o->gen = parse_num("gen", optarg); o->gen_set = 1; break;
		case 's': o->seed = parse_num("seed", optarg); break;
		case 'l': o->loops = parse_num("loops", optarg); break;
		case 'e':
			if (ut_engine_parse(optarg, &o->engine))
				usage_error("unknown engine '%s'", optarg);
			break;
		case 'D': o->dsync = 1; break;
		case 'N': o->no_atomic = 1; break;
		case 'B': o->buffered = 1; break;
		case 'j': o->json = 1; break;
		case 'R': o->reset = 1; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default: usage_error("%s", "bad option");
		}
	}
	if (optind != argc - 1)
		usage_error("%s", "expected exactly one PATH");
	o->path = argv[optind];
}

static void need_unit(const struct opts *o)
{
	if (!o->unit)
		usage_error("%s", "--unit is required");
	if (o->unit % UT_STAMP_SIZE)
		usage_error("%s", "--unit must be a multiple of 512 bytes");
}

static int cmd_info(const struct opts *o)
{
	struct ut_statx stx;
	struct ut_devinfo dev;
	struct ut_awstats aw;
	char a[32], b[32], c[32], awdir[PATH_MAX];
	int ret, atomic;

	ret = ut_statx(AT_FDCWD, o->path, 0,
		       UT_STATX_WRITE_ATOMIC | 0x7ff, &stx);
	if (ret) {
		fprintf(stderr, "untorn: statx %s: %s\n", o->path, strerror(-ret));
		return 1;
	}
	ret = ut_devinfo(o->path, &dev);
	if (ret) {
		fprintf(stderr, "untorn: %s: %s\n", o->path, strerror(-ret));
		return 1;
	}
	atomic = (stx.stx_mask & UT_STATX_WRITE_ATOMIC) &&
		 (stx.stx_attributes & UT_STATX_ATTR_WRITE_ATOMIC);
	if (ut_awstats_dir(&dev, awdir, sizeof(awdir)) ||
	    ut_awstats_read_dir(awdir, &aw))
		aw.policy[0] = '\0';
	if (o->json) {
		printf("{\"path\":\"%s\",\"type\":\"%s\",\"fs_block_size\":%llu,"
		       "\"atomic\":%s,\"statx\":{\"mask_write_atomic\":%s,"
		       "\"attr_write_atomic\":%s,\"unit_min\":%u,\"unit_max\":%u,"
		       "\"unit_max_opt\":%u,\"segments_max\":%u},",
		       o->path, dev.fstype,
		       (unsigned long long)dev.fs_blocksize,
		       atomic ? "true" : "false",
		       stx.stx_mask & UT_STATX_WRITE_ATOMIC ? "true" : "false",
		       stx.stx_attributes & UT_STATX_ATTR_WRITE_ATOMIC ? "true" : "false",
		       stx.stx_atomic_write_unit_min, stx.stx_atomic_write_unit_max,
		       stx.stx_atomic_write_unit_max_opt,
		       stx.stx_atomic_write_segments_max);
		if (aw.policy[0])
			printf("\"fallback_policy\":\"%s\",", aw.policy);
		else
			printf("\"fallback_policy\":null,");
		if (dev.have_queue)
			printf("\"device\":{\"name\":\"%s\",\"logical_block_size\":%llu,"
			       "\"atomic_write_max\":%llu,\"atomic_write_unit_min\":%llu,"
			       "\"atomic_write_unit_max\":%llu,\"atomic_write_boundary\":%llu}}\n",
			       dev.disk,
			       (unsigned long long)dev.logical_block_size,
			       (unsigned long long)dev.aw_max,
			       (unsigned long long)dev.aw_unit_min,
			       (unsigned long long)dev.aw_unit_max,
			       (unsigned long long)dev.aw_boundary);
		else
			printf("\"device\":null}\n");
		return 0;
	}
	printf("%s\n", o->path);
	if (dev.is_blockdev)
		printf("  type:                 block device\n");
	else
		printf("  filesystem:           %s, block size %s\n", dev.fstype,
		       ut_fmt_size(dev.fs_blocksize, a, sizeof(a)));
	printf("  torn-write protection: %s\n", atomic ? "yes (RWF_ATOMIC with O_DIRECT)" : "no");
	printf("  statx unit min/max:   %s / %s\n",
	       ut_fmt_size(stx.stx_atomic_write_unit_min, a, sizeof(a)),
	       ut_fmt_size(stx.stx_atomic_write_unit_max, b, sizeof(b)));
	if (stx.stx_atomic_write_unit_max_opt)
		printf("  statx unit max opt:   %s (larger writes take a slower path)\n",
		       ut_fmt_size(stx.stx_atomic_write_unit_max_opt, c, sizeof(c)));
	else
		printf("  statx unit max opt:   0 (unit max is the fast limit)\n");
	printf("  statx segments max:   %u\n", stx.stx_atomic_write_segments_max);
	if (aw.policy[0])
		printf("  fallback policy:      %s (atomic_write_fallback=)\n",
		       aw.policy);
	if (dev.have_queue) {
		printf("  device:               %s, logical block %s\n", dev.disk,
		       ut_fmt_size(dev.logical_block_size, a, sizeof(a)));
		printf("  device atomic unit:   %s .. %s, max %s, boundary %s\n",
		       ut_fmt_size(dev.aw_unit_min, a, sizeof(a)),
		       ut_fmt_size(dev.aw_unit_max, b, sizeof(b)),
		       ut_fmt_size(dev.aw_max, c, sizeof(c)),
		       dev.aw_boundary ? "set" : "none");
	}
	return 0;
}

static void print_group(const struct ut_awstats *st, enum ut_awstat_kind kind,
			const char *title, const char *strip)
{
	const char *sep = "";
	char a[32];

	printf("  %-12s", title);
	for (int i = 0; i < st->n; i++) {
		const struct ut_awstat *s = &st->s[i];
		const char *name = s->name;

		if (s->kind != kind)
			continue;
		if (strip && !strncmp(name, strip, strlen(strip)))
			name += strlen(strip);
		if (kind == UT_AW_LIMIT)
			printf("%s%s %s", sep, name,
			       ut_fmt_size(s->value, a, sizeof(a)));
		else
			printf("%s%s %llu", sep, name,
			       (unsigned long long)s->value);
		sep = ", ";
	}
	printf("%s\n", *sep ? "" : "none");
}

/* Writes and bytes side by side: "hw 12 (48 KiB), sw 5 (80 KiB)". */
static void print_paths(const struct ut_awstats *st)
{
	const char *sep = "";
	char path[48], bytes_name[64], a[32];
	uint64_t bytes;

	printf("  %-12s", "writes:");
	for (int i = 0; i < st->n; i++) {
		const struct ut_awstat *s = &st->s[i];

		if (s->kind != UT_AW_WRITES)
			continue;
		snprintf(path, sizeof(path), "%.*s",
			 (int)(strlen(s->name) - strlen("_writes")), s->name);
		snprintf(bytes_name, sizeof(bytes_name), "%s_bytes", path);
		printf("%s%s %llu", sep, path, (unsigned long long)s->value);
		if (!ut_awstats_get(st, bytes_name, &bytes))
			printf(" (%s)", ut_fmt_size(bytes, a, sizeof(a)));
		sep = ", ";
	}
	printf("%s\n", *sep ? "" : "none");
}

static void print_json_group(const struct ut_awstats *st, int limits)
{
	const char *sep = "";

	printf("{");
	for (int i = 0; i < st->n; i++) {
		if ((st->s[i].kind == UT_AW_LIMIT) != limits)
			continue;
		printf("%s\"%s\":%llu", sep, st->s[i].name,
		       (unsigned long long)st->s[i].value);
		sep = ",";
	}
	printf("}");
}

static int reset_counters(const char *dir)
{
	char path[PATH_MAX + 32];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/reset_counters", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ok = write(fd, "1\n", 2) == 2;
	close(fd);
	return ok ? 0 : -EIO;
}

static int cmd_stats(const struct opts *o)
{
	struct ut_devinfo dev;
	struct ut_awstats st;
	char dir[PATH_MAX];
	int ret;

	ret = ut_devinfo(o->path, &dev);
	if (ret) {
		fprintf(stderr, "untorn: %s: %s\n", o->path, strerror(-ret));
		return 1;
	}
	if (ut_awstats_dir(&dev, dir, sizeof(dir)) ||
	    (ret = ut_awstats_read_dir(dir, &st))) {
		fprintf(stderr,
			"untorn: %s: no atomic write counters for this %s filesystem%s%s "
			"(XFS and ext4 with the untorn series keep them in "
			"/sys/fs/TYPE/DEV/atomic_write/)\n",
			o->path, dev.fstype, dev.fsdev[0] ? " on " : "",
			dev.fsdev);
		return 1;
	}
	if (o->json) {
		printf("{\"path\":\"%s\",\"type\":\"%s\",\"device\":\"%s\","
		       "\"sysfs\":\"%s\",\"fallback_policy\":",
		       o->path, dev.fstype, dev.fsdev, st.dir);
		if (st.policy[0])
			printf("\"%s\"", st.policy);
		else
			printf("null");
		printf(",\"limits\":");
		print_json_group(&st, 1);
		printf(",\"counters\":");
		print_json_group(&st, 0);
		printf("}\n");
	} else {
		printf("%s: %s on %s (%s)\n", o->path, dev.fstype, dev.fsdev,
		       st.dir);
		printf("  %-12s%s\n", "policy:",
		       st.policy[0] ? st.policy : "not offered");
		print_group(&st, UT_AW_LIMIT, "limits:", NULL);
		print_paths(&st);
		print_group(&st, UT_AW_FALLBACK, "fallbacks:", "fallback_");
		print_group(&st, UT_AW_REFUSED, "refused:", "refused_");
	}
	if (o->reset) {
		ret = reset_counters(st.dir);
		if (ret) {
			fprintf(stderr, "untorn: resetting %s: %s\n", st.dir,
				strerror(-ret));
			return 1;
		}
	}
	return 0;
}

static int open_target(const struct opts *o, int writing)
{
	int flags = writing ? O_RDWR : O_RDONLY;
	struct stat st;
	int fd;

	if (!o->buffered)
		flags |= O_DIRECT;
	if (writing && (stat(o->path, &st) || S_ISREG(st.st_mode)))
		flags |= O_CREAT;
	fd = open(o->path, flags, 0644);
	if (fd < 0)
		fprintf(stderr, "untorn: open %s: %s\n", o->path, strerror(errno));
	return fd;
}

static int cmd_write(const struct opts *o)
{
	int rwflags = (o->no_atomic ? 0 : RWF_ATOMIC) | (o->dsync ? RWF_DSYNC : 0);
	void *buf;
	int fd, ret = 0;

	need_unit(o);
	fd = open_target(o, 1);
	if (fd < 0)
		return 1;
	buf = ut_alloc_io(o->unit);
	if (!buf) {
		fprintf(stderr, "untorn: out of memory\n");
		close(fd);
		return 1;
	}
	for (uint64_t k = 0; k < o->count * o->loops && !ret; k++) {
		uint64_t i = o->first + k % o->count, gen = o->gen + k / o->count;
		struct iovec iov = { buf, o->unit };
		off_t off = o->offset + i * o->unit;
		ssize_t n;

		ut_pattern_fill(buf, o->unit, i, gen, o->seed);
		n = ut_writev(o->engine, fd, &iov, 1, off, rwflags);
		if (n != (ssize_t)o->unit) {
			fprintf(stderr, "untorn: %s write of unit %llu (%llu bytes at %lld): %s\n",
				ut_engine_name(o->engine), (unsigned long long)i,
				(unsigned long long)o->unit, (long long)off,
				n < 0 ? strerror(-n) : "short write");
			ret = 1;
		}
	}
	free(buf);
	if (close(fd) && !ret) {
		perror("untorn: close");
		ret = 1;
	}
	return ret;
}

static int cmd_verify(const struct opts *o)
{
	uint64_t counts[UT_UNIT_CORRUPT + 1] = { 0 }, wrong_gen = 0, shown = 0;
	void *buf;
	int fd;

	need_unit(o);
	fd = open_target(o, 0);
	if (fd < 0)
		return 1;
	buf = ut_alloc_io(o->unit);
	if (!buf) {
		close(fd);
		return 1;
	}
	for (uint64_t i = o->first; i < o->first + o->count; i++) {
		off_t off = o->offset + i * o->unit;
		struct ut_unit_check res;
		ssize_t n = ut_pread(fd, buf, o->unit, off);

		if (n < 0) {
			fprintf(stderr, "untorn: read of unit %llu: %s\n",
				(unsigned long long)i, strerror(-n));
			free(buf);
			close(fd);
			return 1;
		}
		if (n < (ssize_t)o->unit)
			memset((char *)buf + n, 0, o->unit - n);
		ut_pattern_check(buf, o->unit, i, o->seed, &res);
		counts[res.state]++;
		if (res.state == UT_UNIT_OK && o->gen_set && res.gen != o->gen)
			wrong_gen++;
		if ((res.state == UT_UNIT_TORN || res.state == UT_UNIT_CORRUPT ||
		     (o->gen_set && res.gen != o->gen)) && shown++ < 8 && !o->json)
			fprintf(stderr, "untorn: unit %llu at %lld: %s (generations %llu..%llu, %u valid, %u zero, %u bad stamps)\n",
				(unsigned long long)i, (long long)off,
				ut_unit_state_name(res.state),
				(unsigned long long)res.gen_min,
				(unsigned long long)res.gen_max, res.stamps_valid,
				res.stamps_zero, res.stamps_bad);
	}
	free(buf);
	close(fd);
	if (o->json)
		printf("{\"units\":%llu,\"ok\":%llu,\"zero\":%llu,\"torn\":%llu,"
		       "\"corrupt\":%llu,\"wrong_generation\":%llu}\n",
		       (unsigned long long)o->count,
		       (unsigned long long)counts[UT_UNIT_OK],
		       (unsigned long long)counts[UT_UNIT_ZERO],
		       (unsigned long long)counts[UT_UNIT_TORN],
		       (unsigned long long)counts[UT_UNIT_CORRUPT],
		       (unsigned long long)wrong_gen);
	else
		printf("%llu units: %llu ok, %llu zero, %llu torn, %llu corrupt, %llu of another generation\n",
		       (unsigned long long)o->count,
		       (unsigned long long)counts[UT_UNIT_OK],
		       (unsigned long long)counts[UT_UNIT_ZERO],
		       (unsigned long long)counts[UT_UNIT_TORN],
		       (unsigned long long)counts[UT_UNIT_CORRUPT],
		       (unsigned long long)wrong_gen);
	if (counts[UT_UNIT_TORN] || counts[UT_UNIT_CORRUPT] || wrong_gen)
		return 1;
	if (o->gen_set && counts[UT_UNIT_OK] != o->count)
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	const char *cmd;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	cmd = argv[1];
	parse_opts(argc - 1, argv + 1, &o);
	if (!strcmp(cmd, "info"))
		return cmd_info(&o);
	if (!strcmp(cmd, "write"))
		return cmd_write(&o);
	if (!strcmp(cmd, "verify"))
		return cmd_verify(&o);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(&o);
	usage_error("unknown command '%s'", cmd);
	return 2;
}
