// SPDX-License-Identifier: GPL-2.0
/*
 * untorn - inspect and exercise torn-write protection (RWF_ATOMIC).
 *
 *   untorn info [--json] PATH
 *   untorn write [options] PATH
 *   untorn verify [options] PATH
 *   untorn stats [--json] [--reset] PATH
 *   untorn --version
 *
 * See untorn.1 or "untorn --help". JSON goes through json-c, so that any
 * path (quotes, tabs, bytes that are not UTF-8) comes out as valid JSON,
 * and a key has one type in every subcommand.
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

#include <json-c/json.h>

#include "awstats.h"
#include "devinfo.h"
#include "io.h"
#include "pattern.h"
#include "statx.h"
#include "util.h"

#define DEFAULT_SEED 0x756e746f726eULL	/* "untorn" */

#ifndef UNTORN_VERSION
#define UNTORN_VERSION "unknown"
#endif

static const char usage_text[] =
"NAME\n"
"    untorn - inspect and exercise torn-write protection (RWF_ATOMIC)\n"
"\n"
"SYNOPSIS\n"
"    untorn info [--json] PATH\n"
"    untorn write --unit SIZE [--count N] [--first I] [--gen G] [--offset OFF]\n"
"                 [--seed S] [--engine E] [--loops L] [--dsync] [--no-atomic]\n"
"                 [--buffered] [--force] PATH\n"
"    untorn verify --unit SIZE [--count N] [--first I] [--gen G] [--offset OFF]\n"
"                 [--seed S] [--json] PATH\n"
"    untorn stats [--json] [--reset] PATH\n"
"    untorn --version\n"
"\n"
"DESCRIPTION\n"
"    info shows what torn-write protection PATH (a file or a block device)\n"
"    offers: the statx(2) STATX_WRITE_ATOMIC fields, read through mainline's\n"
"    struct statx layout (including stx_atomic_write_unit_max_opt when the\n"
"    kernel fills it), the atomic-write queue limits of the underlying disk\n"
"    from sysfs, the filesystem type and block size, and on XFS and ext4\n"
"    with the untorn series the filesystem's atomic_write_fallback policy.\n"
"    For a directory it says so and shows the filesystem's atomic write\n"
"    limits (statx describes files, not directories).\n"
"\n"
"    write writes COUNT patterned units of SIZE bytes, unit I at byte\n"
"    OFF + I*SIZE, each with one pwritev2(RWF_ATOMIC) (or io_uring/AIO) on\n"
"    an O_DIRECT descriptor. Every 512-byte stamp of a unit carries the unit\n"
"    index, the generation G, its position and a CRC-32C. It writes into\n"
"    an existing regular file; a missing file is created, and a block\n"
"    device overwritten, only with --force.\n"
"\n"
"    verify reads the same units back and classifies each as ok (one\n"
"    complete generation), zero (never written), torn (stamps from several\n"
"    generations, or partly zero) or corrupt (a stamp no write produced).\n"
"    Only ok units pass: a zero unit was never written, or lost.\n"
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
"    EOPNOTSUPP, policy: EMEDIUMTYPE under deny, fragmented: ext4 EINVAL);\n"
"    on XFS, how its software writes ran in parallel (sw_parallel: those\n"
"    that started while another of the same file was in flight;\n"
"    range_waits: direct I/O that waited for an overlapping range).\n"
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
"    --force        write: create a missing file, or write to a block device\n"
"    --json         machine-readable output\n"
"    --reset        stats: zero the counters after showing them (root)\n"
"    --version      print the version and exit\n"
"    --help         print this help and exit\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 when PATH cannot be opened or examined, when write\n"
"    fails or refuses (a missing file or a block device without --force),\n"
"    when verify finds a unit that is not ok (zero, torn, corrupt) or (with\n"
"    --gen) not of generation G, or when stats finds no counters (another\n"
"    filesystem, or a kernel without them); 2 on bad usage.\n"
"\n"
"EXAMPLES\n"
"    untorn info /mnt/db/table.ibd\n"
"    untorn write --force --unit 16k --count 64 --gen 2 /mnt/db/file\n"
"    untorn verify --unit 16k --count 64 --gen 2 /mnt/db/file\n"
"    untorn stats --json /mnt/db\n";

struct opts {
	uint64_t unit, count, first, offset, gen, seed, loops;
	enum ut_engine engine;
	int dsync, no_atomic, buffered, json, gen_set, reset, force;
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
		{ "force", no_argument, NULL, 'F' },
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
		case 'F': o->force = 1; break;
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

static int has_kind(const struct ut_awstats *st, enum ut_awstat_kind kind)
{
	for (int i = 0; i < st->n; i++)
		if (st->s[i].kind == kind)
			return 1;
	return 0;
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

/* What stat(2) says PATH is, in words that go into text and JSON alike. */
static const char *file_type_name(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return "unknown";
	if (S_ISREG(st.st_mode))
		return "regular file";
	if (S_ISDIR(st.st_mode))
		return "directory";
	if (S_ISBLK(st.st_mode))
		return "block device";
	return "other";
}

/* Print one JSON document on a line of its own and free it. */
static void json_print(json_object *obj)
{
	puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}

static void json_add_str(json_object *obj, const char *key, const char *val)
{
	json_object_object_add(obj, key, json_object_new_string(val));
}

/* Length of the valid UTF-8 sequence at S, or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points beyond Unicode. */
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
	    (n == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
	    c > 0x10ffff)
		return 0;
	return n;
}

/*
 * A path is bytes, JSON text is UTF-8: a byte that is not part of valid
 * UTF-8 becomes U+FFFD, so that the document stays valid for every parser.
 */
static void json_add_path(json_object *obj, const char *key, const char *path)
{
	const unsigned char *p = (const unsigned char *)path;
	char *out = malloc(strlen(path) * 3 + 1), *q = out;
	size_t n;

	if (!out) {
		fprintf(stderr, "untorn: out of memory\n");
		exit(1);
	}
	while (*p) {
		n = utf8_len(p);
		if (n) {
			memcpy(q, p, n);
			q += n;
			p += n;
		} else {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			p++;
		}
	}
	*q = '\0';
	json_add_str(obj, key, out);
	free(out);
}

static void json_add_u64(json_object *obj, const char *key, uint64_t val)
{
	json_object_object_add(obj, key, json_object_new_uint64(val));
}

/* The sysfs values of one kind: limits, or every counter. */
static json_object *json_awstats_group(const struct ut_awstats *st, int limits)
{
	json_object *obj = json_object_new_object();

	for (int i = 0; i < st->n; i++)
		if ((st->s[i].kind == UT_AW_LIMIT) == limits)
			json_add_u64(obj, st->s[i].name, st->s[i].value);
	return obj;
}

static json_object *json_statx(const struct ut_statx *stx)
{
	json_object *obj = json_object_new_object();

	json_object_object_add(obj, "mask_write_atomic",
		json_object_new_boolean(stx->stx_mask & UT_STATX_WRITE_ATOMIC));
	json_object_object_add(obj, "attr_write_atomic",
		json_object_new_boolean(stx->stx_attributes & UT_STATX_ATTR_WRITE_ATOMIC));
	json_add_u64(obj, "unit_min", stx->stx_atomic_write_unit_min);
	json_add_u64(obj, "unit_max", stx->stx_atomic_write_unit_max);
	json_add_u64(obj, "unit_max_opt", stx->stx_atomic_write_unit_max_opt);
	json_add_u64(obj, "segments_max", stx->stx_atomic_write_segments_max);
	return obj;
}

static json_object *json_device(const struct ut_devinfo *dev)
{
	json_object *obj = json_object_new_object();

	json_add_str(obj, "name", dev->disk);
	json_add_u64(obj, "logical_block_size", dev->logical_block_size);
	json_add_u64(obj, "atomic_write_max", dev->aw_max);
	json_add_u64(obj, "atomic_write_unit_min", dev->aw_unit_min);
	json_add_u64(obj, "atomic_write_unit_max", dev->aw_unit_max);
	json_add_u64(obj, "atomic_write_boundary", dev->aw_boundary);
	return obj;
}

/*
 * The keys info and stats share, with one type each: path, file_type,
 * filesystem and fs_device are strings (fs_device absent for a block
 * device, which is its own).
 */
static json_object *json_where(const char *path, const struct ut_devinfo *dev)
{
	json_object *obj = json_object_new_object();

	json_add_path(obj, "path", path);
	json_add_str(obj, "file_type", file_type_name(path));
	json_add_str(obj, "filesystem", dev->fstype);
	if (!dev->is_blockdev && dev->fsdev[0])
		json_add_str(obj, "fs_device", dev->fsdev);
	return obj;
}

static int cmd_info(const struct opts *o)
{
	const char *type = file_type_name(o->path);
	int is_dir = !strcmp(type, "directory");
	struct ut_statx stx;
	struct ut_devinfo dev;
	struct ut_awstats aw;
	char a[32], b[32], c[32], awdir[PATH_MAX];
	int ret, atomic, have_aw;

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
	have_aw = !ut_awstats_dir(&dev, awdir, sizeof(awdir)) &&
		  !ut_awstats_read_dir(awdir, &aw);
	if (o->json) {
		json_object *obj = json_where(o->path, &dev);

		json_add_u64(obj, "fs_block_size", dev.fs_blocksize);
		/* statx's atomic fields describe files; a directory has none. */
		if (!is_dir) {
			json_object_object_add(obj, "atomic",
					       json_object_new_boolean(atomic));
			json_object_object_add(obj, "statx", json_statx(&stx));
		}
		if (have_aw && aw.policy[0])
			json_add_str(obj, "fallback_policy", aw.policy);
		if (have_aw)
			json_object_object_add(obj, "limits",
					       json_awstats_group(&aw, 1));
		if (dev.have_queue)
			json_object_object_add(obj, "device", json_device(&dev));
		json_print(obj);
		return 0;
	}
	printf("%s\n", o->path);
	if (dev.is_blockdev)
		printf("  type:                 block device\n");
	else
		printf("  filesystem:           %s, block size %s\n", dev.fstype,
		       ut_fmt_size(dev.fs_blocksize, a, sizeof(a)));
	if (is_dir) {
		printf("  type:                 directory: atomic write limits are per file\n"
		       "                        (untorn info FILE shows a file's statx)\n");
		if (have_aw)
			print_group(&aw, UT_AW_LIMIT, "filesystem limits:  ", NULL);
	} else {
		printf("  torn-write protection: %s\n",
		       atomic ? "yes (RWF_ATOMIC with O_DIRECT)" : "no");
		printf("  statx unit min/max:   %s / %s\n",
		       ut_fmt_size(stx.stx_atomic_write_unit_min, a, sizeof(a)),
		       ut_fmt_size(stx.stx_atomic_write_unit_max, b, sizeof(b)));
		if (stx.stx_atomic_write_unit_max_opt)
			printf("  statx unit max opt:   %s (larger writes take a slower path)\n",
			       ut_fmt_size(stx.stx_atomic_write_unit_max_opt, c, sizeof(c)));
		else
			printf("  statx unit max opt:   0 (unit max is the fast limit)\n");
		printf("  statx segments max:   %u\n", stx.stx_atomic_write_segments_max);
	}
	if (have_aw && aw.policy[0])
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
		json_object *obj = json_where(o->path, &dev);

		json_add_path(obj, "sysfs", st.dir);
		if (st.policy[0])
			json_add_str(obj, "fallback_policy", st.policy);
		json_object_object_add(obj, "limits", json_awstats_group(&st, 1));
		json_object_object_add(obj, "counters", json_awstats_group(&st, 0));
		json_print(obj);
	} else {
		printf("%s: %s on %s (%s)\n", o->path, dev.fstype, dev.fsdev,
		       st.dir);
		printf("  %-12s%s\n", "policy:",
		       st.policy[0] ? st.policy : "not offered");
		print_group(&st, UT_AW_LIMIT, "limits:", NULL);
		print_paths(&st);
		print_group(&st, UT_AW_FALLBACK, "fallbacks:", "fallback_");
		print_group(&st, UT_AW_REFUSED, "refused:", "refused_");
		if (has_kind(&st, UT_AW_PARALLEL))
			print_group(&st, UT_AW_PARALLEL, "parallel:", NULL);
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

/*
 * write goes into an existing regular file. Creating a file that is not
 * there (a typo in the path) and overwriting a block device (a whole
 * disk's data) are what --force is for.
 */
static int write_allowed(const struct opts *o)
{
	struct stat st;

	if (o->force)
		return 1;
	if (stat(o->path, &st)) {
		if (errno == ENOENT)
			fprintf(stderr, "untorn: %s does not exist; --force creates it\n",
				o->path);
		else
			fprintf(stderr, "untorn: %s: %s\n", o->path, strerror(errno));
		return 0;
	}
	if (S_ISBLK(st.st_mode)) {
		fprintf(stderr, "untorn: %s is a block device: writing destroys its data; --force to do it\n",
			o->path);
		return 0;
	}
	return 1;
}

static int open_target(const struct opts *o, int writing)
{
	int flags = writing ? O_RDWR : O_RDONLY;
	int fd;

	if (!o->buffered)
		flags |= O_DIRECT;
	if (writing && o->force)
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
	if (!write_allowed(o))
		return 1;
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
		if ((res.state != UT_UNIT_OK || (o->gen_set && res.gen != o->gen)) &&
		    shown++ < 8 && !o->json)
			fprintf(stderr, "untorn: unit %llu at %lld: %s (generations %llu..%llu, %u valid, %u zero, %u bad stamps)\n",
				(unsigned long long)i, (long long)off,
				ut_unit_state_name(res.state),
				(unsigned long long)res.gen_min,
				(unsigned long long)res.gen_max, res.stamps_valid,
				res.stamps_zero, res.stamps_bad);
	}
	free(buf);
	close(fd);
	if (o->json) {
		json_object *obj = json_object_new_object();

		json_add_path(obj, "path", o->path);
		json_add_u64(obj, "units", o->count);
		json_add_u64(obj, "ok", counts[UT_UNIT_OK]);
		json_add_u64(obj, "zero", counts[UT_UNIT_ZERO]);
		json_add_u64(obj, "torn", counts[UT_UNIT_TORN]);
		json_add_u64(obj, "corrupt", counts[UT_UNIT_CORRUPT]);
		json_add_u64(obj, "wrong_generation", wrong_gen);
		json_print(obj);
	} else {
		printf("%llu units: %llu ok, %llu zero, %llu torn, %llu corrupt, %llu of another generation\n",
		       (unsigned long long)o->count,
		       (unsigned long long)counts[UT_UNIT_OK],
		       (unsigned long long)counts[UT_UNIT_ZERO],
		       (unsigned long long)counts[UT_UNIT_TORN],
		       (unsigned long long)counts[UT_UNIT_CORRUPT],
		       (unsigned long long)wrong_gen);
	}
	/* A zero unit was never written, or its write was lost: not a pass. */
	return counts[UT_UNIT_OK] == o->count && !wrong_gen ? 0 : 1;
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
	if (!strcmp(argv[1], "--version")) {
		printf("untorn %s\n", UNTORN_VERSION);
		return 0;
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
