# tierd - the top-level driver of the Meson build.
#   make          build everything into build/ (installs missing Debian packages)
#   make test     unit, simulator, CLI and system (guest) tests, plus the
#                 unit and simulator tests again under ASan+UBSan
#   make run      the main job: tierd on this host's tiers, or on a simulated
#                 tiered machine when this host has one tier
#   make bench    benchmarks, figures into bench/results/
#   make bench-guest  no tiering vs kernel tiering vs tierd on a GUPS-like
#                 workload in the QEMU guest, a contiguous and a scattered
#                 hot set (~10 min; not part of make test); KERNEL=sid (or
#                 another Debian suite) boots that kernel, KERNEL=hwtlb the
#                 test bed's hardware-like one (below); LAYOUT=contiguous
#                 or LAYOUT=scattered runs one layout
#   make bench-ab A=PATH  another tierd build (A) against build/tierd (or
#                 B=PATH) on bench-guest's workload, in one boot, REPS
#                 times (default 3) each layout, medians (bench/guest-ab.sh;
#                 ~14 min); KERNEL and LAYOUT as for bench-guest; MOVE_AT=S
#                 moves the hot set at second S of each run (time to follow)
#   make calib-guest  tiersim against the guest's recorded series
#                 (bench/guest-calib.sh: per second, kernel and tierd, both
#                 layouts; RESULTS=FILE another bench-guest output; ~2 min)
#   make guest-kernel  builds the test bed's own guest kernel (KERNEL=hwtlb,
#                 the default: Linux 6.12; KERNEL=sid-hwtlb: 7.x) from
#                 Debian's source into the kernel cache, once (minutes;
#                 scripts/build-guest-kernel); tiered-vm --kernel hwtlb
#                 builds it on first use too
#   make fuzz     the fuzzing campaign: each fuzz target under libFuzzer and
#                 ASan+UBSan (build-fuzz/, needs clang) to FUZZ_RUNS
#                 executions (default 10^7; hours on a shared machine),
#                 FUZZ_TARGETS to pick; see scripts/fuzz
#   make soak     data integrity under migration, the long run in the QEMU
#                 guest (~30 min, >= 10^6 pages migrated; the short run is
#                 tests/system/integrity.sh in make test); SOAK_SECONDS,
#                 SOAK_MIN_PAGES, SOAK_RESTARTS change it
#   make load     1000 managed processes and 100 control clients in the
#                 guest, tierd's memory printed (~5 min; the short run is
#                 tests/system/load.sh); LOAD_PROCS, LOAD_CLIENTS, LOAD_SECONDS,
#                 LOAD_TRACKER
#   make install  PREFIX=/usr/local (DESTDIR honoured)
#   make deb      Debian packages (tierd, libtier0, libtier-dev, tiersim)
#                 into build-deb/, checked by lintian (scripts/build-deb)
#   make test-deb the packages built and checked: contents, unit, maintainer
#                 scripts, lintian (tests/package/deb.sh, a few minutes;
#                 make test runs the fast check of debian/, tests/cli/deb.sh)

BUILD      := build
ASAN_BUILD := build-asan
PREFIX     ?= /usr/local

SOAK_SECONDS   ?= 1700
SOAK_MIN_PAGES ?= 1000000
SOAK_RESTARTS  ?= 10
LOAD_PROCS     ?= 1000
LOAD_CLIENTS   ?= 100
LOAD_SECONDS   ?= 120
LOAD_TRACKER   ?= softdirty

.PHONY: all deps asan test run bench bench-guest bench-ab calib-guest guest-kernel fuzz soak load install deb test-deb clean

all: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

deps:
	@scripts/install-deps

$(BUILD)/build.ninja: | deps
	meson setup $(BUILD) --prefix=$(PREFIX)

$(ASAN_BUILD)/build.ninja: | deps
	meson setup $(ASAN_BUILD) --buildtype=debug \
		-Db_sanitize=address,undefined -Db_lundef=false

asan: deps $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)

test: all asan
	tests/run

run: all
	scripts/run

bench: all
	@scripts/install-deps bench
	BENCH_PARTS="$(PARTS)" bench/run

bench-guest: all
	bench/guest-tiering.sh $(if $(KERNEL),--kernel $(KERNEL)) $(if $(LAYOUT),--layout $(LAYOUT))

bench-ab: all
	@[ -n "$(A)" ] || { echo "make bench-ab: A=PATH names the tierd to compare build/tierd with" >&2; exit 2; }
	bench/guest-ab.sh $(if $(KERNEL),--kernel $(KERNEL)) $(if $(LAYOUT),--layout $(LAYOUT)) $(if $(REPS),--reps $(REPS)) $(if $(MOVE_AT),--seconds 60 --move-at $(MOVE_AT)) $(A) $(B)

calib-guest: all
	for r in kernel tierd; do for l in contiguous scattered; do \
		bench/guest-calib.sh --layout $$l --run $$r $(if $(RESULTS),--results $(RESULTS)) || true; done; done

guest-kernel:
	@scripts/install-deps kernel
	scripts/build-guest-kernel $(or $(KERNEL),hwtlb)

fuzz:
	@scripts/install-deps fuzz
	scripts/fuzz

soak: all
	INTEGRITY_SECONDS=$(SOAK_SECONDS) INTEGRITY_MIN_PAGES=$(SOAK_MIN_PAGES) \
		INTEGRITY_RESTARTS=$(SOAK_RESTARTS) bash tests/system/integrity.sh

load: all
	LOAD_PROCS=$(LOAD_PROCS) LOAD_CLIENTS=$(LOAD_CLIENTS) LOAD_SECONDS=$(LOAD_SECONDS) \
		LOAD_TRACKER=$(LOAD_TRACKER) bash tests/system/load.sh

install: all
	meson configure $(BUILD) -Dprefix=$(PREFIX)
	meson install -C $(BUILD) $(if $(DESTDIR),--destdir $(DESTDIR))

deb: deps
	scripts/build-deb

test-deb: deps
	bash tests/package/deb.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz build-deb
