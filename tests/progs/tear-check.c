// SPDX-License-Identifier: GPL-2.0
/*
 * tear-check - show that a tearblk device tears and drops what it should and
 * nothing else, over many seeded power cuts.
 *
 *   tear-check [--cuts N] [--unit BYTES] [--seed S] [--zeroes] DEV
 *
 * DEV is a tearblk device with atomic writes of BYTES (default 64 KiB) and
 * logical blocks smaller than BYTES. Each cut round writes five units and
 * makes them durable, then before the cut:
 *   unit 0: rewritten without RWF_ATOMIC    -> old, new or torn
 *   unit 1: rewritten with RWF_ATOMIC       -> old or new, never torn
 *   unit 2: rewritten with RWF_DSYNC (FUA)  -> new
 *   unit 3: rewritten and then flushed      -> new
 * (units 2 and 3 first: their flushes must not cover units 0 and 1)
 *   unit 4: untouched                       -> old
 * With --zeroes (a device created with discard=1,write_zeroes=1) three more:
 *   unit 5: discarded (BLKDISCARD)          -> old, zeroes or torn
 *   unit 6: zeroed (BLKZEROOUT)             -> old, zeroes or torn
 *   unit 7: discarded, then flushed         -> zeroes
 * where torn is the old version with some blocks zeroed, and units 5 and 6
 * must read as zeroes at once, before the cut.
 * Over all cuts unit 0 must tear in a clear share, unit 1 must survive
 * and vanish each in a clear share, the others never deviate; the device's
 * counters agree; the same seed replays the same image; with flushes
 * ignored (honour_flush=0) flushed writes do get lost; and a powered-off
 * device fails I/O and refuses power-on while open.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "io.h"
#include "pattern.h"
#include "tap.h"
#include "tear.h"
#include "util.h"

#define NUNITS 8
#define SEED_PATTERN 0x7ea5

static const char *dev;
static char dir[256];
static size_t unit = 65536;
static void *buf;
static int zeroes;	/* --zeroes: units 5-7 are discarded or zeroed */
static int nunits = 5;
static unsigned int zero_not_visible;

static int open_dev(void)
{
	int fd = open(dev, O_RDWR | O_DIRECT);

	if (fd < 0)
		ut_diag("open %s: %s", dev, strerror(errno));
	return fd;
}

static int write_unit(int fd, int u, uint64_t gen, int flags)
{
	struct iovec iov = { buf, unit };

	ut_pattern_fill(buf, unit, u, gen, SEED_PATTERN);
	if (ut_writev(UT_ENGINE_PWRITEV2, fd, &iov, 1, (off_t)u * unit,
		      flags) != (ssize_t)unit) {
		ut_diag("write of unit %d failed", u);
		return -1;
	}
	return 0;
}

/* Discard (BLKDISCARD) or zero (BLKZEROOUT) unit U through the device. */
static int zero_unit(int fd, int u, unsigned long req)
{
	uint64_t range[2] = { (uint64_t)u * unit, unit };

	if (ioctl(fd, req, range)) {
		ut_diag("%s of unit %d: %s", req == BLKDISCARD ? "BLKDISCARD" :
			"BLKZEROOUT", u, strerror(errno));
		return -1;
	}
	return 0;
}

/* Zeroes are visible at once, before anything makes them durable. */
static void check_zero_visible(int fd, int u)
{
	struct ut_unit_check r;

	if (ut_pread(fd, buf, unit, (off_t)u * unit) != (ssize_t)unit) {
		zero_not_visible++;
		return;
	}
	ut_pattern_check(buf, unit, u, SEED_PATTERN, &r);
	zero_not_visible += r.state != UT_UNIT_ZERO;
}

/*
 * One round: durable base generation GEN, the five writes, a cut with SEED,
 * power on. States of the units after the cut go to RES; the CRC of the
 * whole image to *image_crc. 0 or -1.
 */
static int cut_round(uint64_t gen, uint64_t seed, struct ut_unit_check *res,
		     uint32_t *image_crc)
{
	int fd = open_dev(), u, err;

	if (fd < 0)
		return -1;
	for (u = 0; u < nunits; u++)
		if (write_unit(fd, u, gen, 0))
			goto fail;
	if (fdatasync(fd))
		goto fail;
	/*
	 * Flushes come first: fdatasync, and RWF_DSYNC on a block device
	 * (FUA, then a cache flush), must not cover the writes after them.
	 */
	if ((zeroes && zero_unit(fd, 7, BLKDISCARD)) ||
	    write_unit(fd, 3, gen + 1, 0) || fdatasync(fd) ||
	    write_unit(fd, 2, gen + 1, RWF_DSYNC) ||
	    write_unit(fd, 0, gen + 1, 0) ||
	    write_unit(fd, 1, gen + 1, RWF_ATOMIC))
		goto fail;
	if (zeroes) {
		if (zero_unit(fd, 5, BLKDISCARD) || zero_unit(fd, 6, BLKZEROOUT))
			goto fail;
		check_zero_visible(fd, 5);
		check_zero_visible(fd, 6);
	}
	err = ut_tear_cut(dir, seed);
	if (err) {
		ut_diag("cut: %s", strerror(-err));
		goto fail;
	}
	close(fd);
	err = ut_tear_power_on(dir);
	if (err) {
		ut_diag("power_on: %s", strerror(-err));
		return -1;
	}
	fd = open_dev();
	if (fd < 0)
		return -1;
	*image_crc = 0;
	for (u = 0; u < nunits; u++) {
		if (ut_pread(fd, buf, unit, (off_t)u * unit) != (ssize_t)unit)
			goto fail;
		ut_pattern_check(buf, unit, u, SEED_PATTERN, &res[u]);
		*image_crc = ut_crc32c(*image_crc, buf, unit);
	}
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

static int is_gen(const struct ut_unit_check *r, uint64_t gen)
{
	return r->state == UT_UNIT_OK && r->gen == gen;
}

/*
 * A discarded or zeroed unit after the cut: 0 zeroes, 1 the old version,
 * 2 the old version with some blocks zeroed, -1 anything else.
 */
static int zeroed_state(const struct ut_unit_check *r, uint64_t gen)
{
	if (r->state == UT_UNIT_ZERO)
		return 0;
	if (is_gen(r, gen))
		return 1;
	if (r->state == UT_UNIT_TORN && r->stamps_bad == 0 && r->stamps_zero &&
	    r->stamps_valid && r->gen_min == gen && r->gen_max == gen)
		return 2;
	return -1;
}

/* What units 5-7 showed over the cuts: [unit 5 or 6][zeroes, old, torn]. */
struct zero_tally {
	unsigned int seen[2][3];
	unsigned int bad[2];
	unsigned int flushed_lost;
	uint64_t discards, write_zeroes;
};

static void tally_zeroes(struct zero_tally *z, const struct ut_unit_check *res,
			 uint64_t gen)
{
	int u, st;

	for (u = 5; u <= 6; u++) {
		st = zeroed_state(&res[u], gen);
		if (st < 0)
			z->bad[u - 5]++;
		else
			z->seen[u - 5][st]++;
	}
	z->flushed_lost += res[7].state != UT_UNIT_ZERO;
}

static void report_zeroes(const struct zero_tally *z, unsigned int cuts)
{
	static const char *const what[2] = { "a discard", "a write-zeroes" };
	int i;

	ut_tap(zero_not_visible == 0,
	       "discarded and zeroed units read as zeroes before the cut (%u did not)",
	       zero_not_visible);
	for (i = 0; i < 2; i++) {
		ut_diag("%s: zeroes %u, old %u, torn %u", what[i], z->seen[i][0],
			z->seen[i][1], z->seen[i][2]);
		ut_tap(z->bad[i] == 0, "%s leaves old data, zeroes or a mix, nothing else (%u other)",
		       what[i], z->bad[i]);
		ut_tap(z->seen[i][2] >= cuts / 4,
		       "an unflushed %s tears in a clear share of cuts (%u of %u)",
		       what[i] + 2, z->seen[i][2], cuts);
		ut_tap(z->seen[i][0] > 0 && z->seen[i][1] > 0,
		       "an unflushed %s also survives or vanishes whole", what[i] + 2);
	}
	ut_tap(z->flushed_lost == 0, "a flushed discard always survives (%u lost)",
	       z->flushed_lost);
	ut_tap(z->discards >= 2 * (uint64_t)cuts && z->write_zeroes >= cuts,
	       "the device counted the discards (%llu) and write-zeroes (%llu) as such",
	       (unsigned long long)z->discards, (unsigned long long)z->write_zeroes);
}

static void check_cuts(unsigned int cuts, uint64_t seed)
{
	unsigned int torn0 = 0, new0 = 0, old0 = 0, new1 = 0, old1 = 0;
	unsigned int bad[NUNITS] = { 0 }, i;
	uint64_t before = 0, after = 0, dev_torn = 0, t;
	uint64_t dis0 = 0, wz0 = 0;
	struct ut_unit_check res[NUNITS];
	struct zero_tally z = { 0 };
	uint32_t crc;

	ut_tear_read(dir, "atomic", &before);
	ut_tear_read(dir, "discards", &dis0);
	ut_tear_read(dir, "write_zeroes", &wz0);
	for (i = 0; i < cuts; i++) {
		uint64_t gen = 10 + 2 * (uint64_t)i;

		if (cut_round(gen, seed + i, res, &crc)) {
			ut_tap(0, "cut round %u ran", i);
			return;
		}
		if (res[0].state == UT_UNIT_TORN)
			torn0++;
		else if (is_gen(&res[0], gen + 1))
			new0++;
		else if (is_gen(&res[0], gen))
			old0++;
		else
			bad[0]++;
		if (is_gen(&res[1], gen + 1))
			new1++;
		else if (is_gen(&res[1], gen))
			old1++;
		else
			bad[1]++;
		bad[2] += !is_gen(&res[2], gen + 1);
		bad[3] += !is_gen(&res[3], gen + 1);
		bad[4] += !is_gen(&res[4], gen);
		if (zeroes)
			tally_zeroes(&z, res, gen);
		if (!ut_tear_read(dir, "cut_torn", &t))
			dev_torn += t;
	}
	ut_tear_read(dir, "atomic", &after);
	ut_tear_read(dir, "discards", &z.discards);
	ut_tear_read(dir, "write_zeroes", &z.write_zeroes);
	z.discards -= dis0;
	z.write_zeroes -= wz0;

	ut_diag("%u cuts: plain write new %u, old %u, torn %u; atomic write new %u, old %u",
		cuts, new0, old0, torn0, new1, old1);
	ut_tap(bad[0] == 0, "a plain write is old, new or torn, nothing else (%u other)",
	       bad[0]);
	ut_tap(torn0 >= cuts / 4, "a plain unflushed write tears in a clear share of cuts (%u of %u)",
	       torn0, cuts);
	ut_tap(new0 > 0 && old0 > 0, "a plain unflushed write also survives or vanishes whole");
	ut_tap(bad[1] == 0, "an atomic write is never torn (%u torn or damaged)", bad[1]);
	ut_tap(new1 >= cuts / 4 && old1 >= cuts / 4,
	       "an unflushed atomic write survives (%u) and vanishes (%u) whole", new1, old1);
	ut_tap(bad[2] == 0, "a RWF_DSYNC (FUA) write always survives (%u lost)", bad[2]);
	ut_tap(bad[3] == 0, "a flushed write always survives (%u lost)", bad[3]);
	ut_tap(bad[4] == 0, "an untouched unit never changes (%u changed)", bad[4]);
	ut_tap(after - before == cuts, "the device counted one atomic write per round (%llu)",
	       (unsigned long long)(after - before));
	ut_tap(dev_torn == torn0 + (zeroes ? z.seen[0][2] + z.seen[1][2] : 0),
	       "the device's cut_torn matches the tears seen (%llu vs %u)",
	       (unsigned long long)dev_torn,
	       torn0 + (zeroes ? z.seen[0][2] + z.seen[1][2] : 0));
	if (zeroes)
		report_zeroes(&z, cuts);
}

static void check_replay(uint64_t seed)
{
	struct ut_unit_check res[NUNITS];
	uint32_t crc[3];
	unsigned int differ = 0, i;

	if (cut_round(1000, seed, res, &crc[0]) ||
	    cut_round(1000, seed, res, &crc[1])) {
		ut_tap(0, "replay rounds ran");
		return;
	}
	ut_tap(crc[0] == crc[1], "the same writes and seed give the same image");
	for (i = 1; i <= 8; i++) {
		if (cut_round(1000, seed + 7919 * i, res, &crc[2])) {
			ut_tap(0, "replay rounds ran");
			return;
		}
		differ += crc[2] != crc[0];
	}
	ut_tap(differ > 0, "other seeds give other images (%u of 8)", differ);
}

/*
 * The same rounds on a disk that ignores flushes and FUA: flushed and
 * RWF_DSYNC writes must now be lost in some cuts, or the checks above
 * could not have seen a loss either.
 */
static void check_lying_disk(unsigned int cuts, uint64_t seed)
{
	struct ut_unit_check res[NUNITS];
	unsigned int lost = 0, i;
	uint32_t crc;
	int err = ut_tear_write(dir, "honour_flush", 0);

	if (err) {
		ut_tap(0, "honour_flush=0 accepted (%s)", strerror(-err));
		return;
	}
	for (i = 0; i < cuts; i++) {
		uint64_t gen = 5000 + 2 * (uint64_t)i;

		if (cut_round(gen, seed + i, res, &crc))
			break;
		lost += is_gen(&res[2], gen) || is_gen(&res[3], gen);
	}
	ut_tear_write(dir, "honour_flush", 1);
	ut_tap(i == cuts && lost > 0,
	       "a disk that ignores flushes loses flushed or FUA writes (%u of %u cuts)",
	       lost, cuts);
}

static void check_power_off(void)
{
	int fd = open_dev(), err;
	ssize_t n;

	if (fd < 0 || write_unit(fd, 0, 1, 0) || fdatasync(fd)) {
		ut_tap(0, "power-off setup");
		return;
	}
	err = ut_tear_cut(dir, 1);
	ut_tap(err == 0, "cut");
	n = ut_pread(fd, buf, unit, 0);
	ut_tap(n == -ENODEV, "a read after the cut fails with ENODEV, the disk gone (%zd)", n);
	err = ut_tear_cut(dir, 1);
	ut_tap(err == -EBUSY, "a second cut is refused with EBUSY (%d)", err);
	err = ut_tear_power_on(dir);
	ut_tap(err == -EBUSY, "power-on while the disk is open is refused with EBUSY (%d)",
	       err);
	close(fd);
	err = ut_tear_power_on(dir);
	ut_tap(err == 0, "power-on once it is closed");
	fd = open_dev();
	n = fd < 0 ? -1 : ut_pread(fd, buf, unit, 0);
	ut_tap(n == (ssize_t)unit, "reads work again after power-on");
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cuts", required_argument, NULL, 'c' },
		{ "unit", required_argument, NULL, 'u' },
		{ "seed", required_argument, NULL, 's' },
		{ "zeroes", no_argument, NULL, 'z' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int cuts = 200;
	uint64_t seed = 1, v;
	static char prefix[128];
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cuts = strtoul(optarg, NULL, 0);
			break;
		case 'u':
			if (ut_parse_size(optarg, &v) || !ut_is_pow2(v)) {
				fprintf(stderr, "tear-check: bad --unit %s\n", optarg);
				return 2;
			}
			unit = v;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'z':
			zeroes = 1;
			nunits = NUNITS;
			break;
		default:
			fprintf(stderr, "usage: tear-check [--cuts N] [--unit BYTES] [--seed S] [--zeroes] DEV\n");
			return 2;
		}
	}
	if (optind != argc - 1 || cuts < 8) {
		fprintf(stderr, "usage: tear-check [--cuts N>=8] [--unit BYTES] [--seed S] [--zeroes] DEV\n");
		return 2;
	}
	dev = argv[optind];
	err = ut_tear_dir(dev, dir, sizeof(dir));
	if (err) {
		fprintf(stderr, "tear-check: %s is not a tearblk device: %s\n", dev,
			strerror(-err));
		return 2;
	}
	buf = ut_alloc_io(unit);
	if (!buf)
		return 2;
	snprintf(prefix, sizeof(prefix), "tear-check %s %zu-byte units",
		 strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev, unit);
	ut_tap_prefix = prefix;
	check_cuts(cuts, seed);
	check_replay(seed);
	check_lying_disk(cuts / 4, seed);
	check_power_off();
	return ut_tap_failures ? 1 : 0;
}
