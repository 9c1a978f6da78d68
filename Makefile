# untorn: torn-write protection for Linux 6.12. See README.md.
#
#   make demo      install what is needed, build, boot, show it working
#   make test      run the whole test suite (host unit tests + VM suite)
#   make vm CMD=.. run a command line in the guest (no CMD: a shell)
#   make crash     power-cut torture per configuration (CRASH_CUTS=N cuts)
#   make fsx-soak  the operation tester at length (FSX_OPS, FSX_ROUNDS per config)
#   make bench     the benchmark report (markdown, CSV, PNG) under $UNTORN_CACHE/bench
#   make db-crash  MariaDB through power cuts (DB_CUTS per configuration)
#   make db-bench  MariaDB TPS and p99: doublewrite against untorn-preload
#   make deb       linux-image and linux-headers .deb files for Debian 12
#   make deb-check install them on Debian 12 in QEMU, boot, check, roll back
#   make config-check  the series built as distributions configure kernels

include versions.env

BUILD   := build
CC      := gcc
CFLAGS  := -O2 -g -Wall -Wextra -Werror -std=gnu11 -Wno-format-truncation -Ilib
LDFLAGS := -static
LIBS    := -luring -laio

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB_HDRS := $(wildcard lib/*.h)
BINS     := $(BUILD)/bin/untorn $(BUILD)/bin/atomic-check $(BUILD)/bin/atomic-file-check $(BUILD)/bin/statx-abi \
	    $(BUILD)/bin/tear-check $(BUILD)/bin/torture $(BUILD)/bin/atomic-fsx $(BUILD)/bin/atomic-refuse $(BUILD)/bin/dwbench \
	    $(BUILD)/bin/abbench $(BUILD)/bin/cpufactor $(BUILD)/bin/redobench $(BUILD)/bin/clone-race
UNITS    := $(BUILD)/unit/unit
PRELOAD  := $(BUILD)/lib/untorn-preload.so

.PHONY: FORCE config-check deb deb-check db-crash db-bench fsx-kasan all build deps kernel image vm test unit demo clean \
	export-patches bisect-check checkpatch crash fsx-soak bench
all: build
build: $(BINS) $(UNITS) $(PRELOAD)

$(BUILD)/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/lib/libuntorn.a: $(LIB_OBJS)
	ar rcs $@ $^

# untorn --version: the release in versions.env and the commit it was
# built from. The header is rewritten only when that changes, so that an
# unchanged tree does not relink.
$(BUILD)/version.h: FORCE
	@mkdir -p $(dir $@)
	@v='#define UNTORN_VERSION "$(UNTORN_VERSION) ($(shell git describe --always --dirty 2>/dev/null || echo no git))"'; \
	[ "$$(cat $@ 2>/dev/null)" = "$$v" ] || echo "$$v" >$@
FORCE:

$(BUILD)/tools/untorn/untorn.o: tools/untorn/untorn.c $(LIB_HDRS) $(BUILD)/version.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -include $(BUILD)/version.h -c -o $@ $<

# JSON through Debian's json-c, linked in like the rest (static).
$(BUILD)/bin/untorn: $(BUILD)/tools/untorn/untorn.o $(BUILD)/lib/libuntorn.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -ljson-c

$(BUILD)/bin/%: $(BUILD)/tests/progs/%.o $(BUILD)/lib/libuntorn.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/bin/dwbench $(BUILD)/bin/abbench $(BUILD)/bin/cpufactor $(BUILD)/bin/redobench: $(BUILD)/bin/%: $(BUILD)/benches/progs/%.o $(BUILD)/lib/libuntorn.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/unit/unit: $(BUILD)/tests/unit/unit.o $(BUILD)/lib/libuntorn.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBS)

# The LD_PRELOAD library: a shared object, so not static, and position
# independent throughout (its own copy of the statx wrapper).
$(PRELOAD): tools/untorn-preload/untorn-preload.c lib/statx.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ \
		tools/untorn-preload/untorn-preload.c lib/statx.c -ldl

deps:
	scripts/install-deps.sh

kernel:
	kernel/build.sh

image:
	vm/build-image.sh >/dev/null

# Command-line variables reach the recipe's environment: $$CMD keeps any
# quoting the caller used.
vm: build kernel image
	vm/run.sh "$$CMD"

unit: $(UNITS)
	tests/run.sh --unit-only

test: build kernel image
	tests/run.sh

# Cuts per configuration; the control runs a tenth as many (at least 20).
CRASH_CUTS ?= 100
# CRASH_SEED unset: a fresh random seed per run, printed in the report.
CRASH_SEED ?=
# VMs at once, one a configuration (tests/crash/run.sh): for long runs,
# about 15 % more cuts an hour with 2 on 2 CPUs.
CRASH_JOBS ?= 1
crash: build kernel image
	tests/crash/run.sh --jobs $(CRASH_JOBS) --cuts $(CRASH_CUTS) $(if $(CRASH_SEED),--seed $(CRASH_SEED)) $(CRASH_CONFIGS)

# The fs/atomic-fsx case with long runs: FSX_OPS operations and FSX_ROUNDS
# threaded rounds per filesystem configuration, a fresh seed each.
FSX_OPS    ?= 100000
FSX_ROUNDS ?= 300
# The report goes to $UNTORN_CACHE/fsx/ for tests/fsx/ledger.sh.
fsx-soak: build kernel image
	tests/fsx/run.sh $(FSX_OPS) $(FSX_ROUNDS)

# The same tester under the KASAN kernel (kernel/config/kasan.config, built
# side by side in its own directory; the first build takes about 15 min).
fsx-kasan: build image
	UNTORN_KASAN=1 kernel/build.sh
	UNTORN_KASAN=1 UNTORN_VM_MEM=4096 tests/fsx/run.sh $(FSX_OPS) $(FSX_ROUNDS)

# MariaDB through power cuts (tests/db/): DB_CUTS per configuration,
# DB_CONTROL_CUTS per control (a tenth, at least 3, when unset), DB_SEED
# (fresh when unset), DB_CONFIGS (all when unset). The db image
# (mariadb-server, sysbench) is built on first use.
DB_CUTS    ?= 5
DB_SEED    ?=
DB_CONFIGS ?=
db-crash: build kernel
	tests/db/run.sh --cuts $(DB_CUTS) $(if $(DB_CONTROL_CUTS),--control-cuts $(DB_CONTROL_CUTS)) $(if $(DB_SEED),--seed $(DB_SEED)) $(DB_CONFIGS)

bench: build image
	benches/run.sh

# MariaDB with doublewrite against doublewrite OFF + untorn-preload
# (benches/db-bench): DB_BENCH_PAIRS, DB_BENCH_SECONDS, ... pass through.
db-bench: build
	benches/db-run.sh

demo: deps
	$(MAKE) build kernel image
	vm/run.sh demo/demo.sh

export-patches:
	kernel/export-patches.sh

bisect-check:
	kernel/bisect-check.sh

# The series in the configurations distributions use (kernel/config-check.sh):
# modules, no realtime/quota, 32-bit, then W=1 and sparse on its lines.
config-check:
	kernel/config-check.sh

# Debian packages of the series for a Debian 12 machine (kernel/deb.sh):
# hours on 2 cores; not in CI.
deb:
	kernel/deb.sh

# Install the package of `make deb` on a Debian 12 system in QEMU, boot it,
# write atomically, roll back to the stock kernel (kernel/deb-check.sh).
deb-check: build
	kernel/deb-check.sh

checkpatch:
	kernel/checkpatch.sh

clean:
	rm -rf $(BUILD)
.SECONDARY:
