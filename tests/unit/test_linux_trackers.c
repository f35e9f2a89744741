/* test_linux_trackers.c - the other Linux trackers and the kernel-tiering
 * guard against fixture trees copied to a temporary directory
 * (tests/fixtures/pagemap, kernel-tiering; each has a README.md): the maps
 * lines trackers watch, page_idle bitmap walks, perf ring-buffer records,
 * tracker selection and budget parts, switching the kernel's own tiering
 * off and back, and DAMON's regions merged with soft-dirty's written
 * pages. DAMON and soft-dirty alone: test_linux_damon.c,
 * test_linux_softdirty.c; the hint faults and perf rings: test_linux_hint.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/linux/kernel_guard.h"
#include "backend/linux/kernel_tiering.h"
#include "backend/linux/maps.h"
#include "backend/linux/clock.h"
#include "backend/linux/schedstat.h"
#include "backend/linux/softdirty_picture.h"
#include "backend/linux/softdirty_rate.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"
#include "linux_fixture.h"

static uint64_t bitmap_word(const struct tmp *t, uint64_t pfn)
{
	char path[1024];
	uint64_t w = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/sys/kernel/mm/page_idle/bitmap", t->dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &w, 8, (off_t)(pfn / 64) * 8), 8);
	close(fd);
	return w;
}

static bool idle_bit(const struct tmp *t, uint64_t pfn)
{
	return bitmap_word(t, pfn) & (1ull << (pfn % 64));
}

/* What the kernel does when a page is touched: its idle bit reads 0. */
static void touch(const struct tmp *t, uint64_t pfn)
{
	char path[1024];
	uint64_t w = bitmap_word(t, pfn) & ~(1ull << (pfn % 64));
	int fd;

	snprintf(path, sizeof(path), "%s/sys/kernel/mm/page_idle/bitmap", t->dir);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &w, 8, (off_t)(pfn / 64) * 8), 8);
	close(fd);
}

/* The mappings trackers watch are those the address space manages: one
 * parser (maps.h) decides for both. */
static void test_maps_lines(void **state)
{
	struct tier__maps_entry e;

	(void)state;
	assert_null(tier__maps_parse_line("00600000-00608000 rw-p 00000000 00:00 0      [heap]",
					  12, &e));
	assert_true(e.managed && e.start == 0x600000 && e.end == 0x608000);
	assert_null(tier__maps_parse_line("7f0000000000-7f0000100000 rw-p 00000000 00:00 0 ",
					  12, &e));
	assert_true(e.managed);
	assert_null(tier__maps_parse_line("00a00000-00a01000 rw-p 00001000 08:01 12 /a b c",
					  12, &e));
	assert_true(e.managed);
	assert_string_equal(e.path, "/a b c");
	/* Read-only private anonymous memory holds pages too. */
	assert_null(tier__maps_parse_line("00900000-00902000 r--p 00000000 00:00 0 ", 12, &e));
	assert_true(e.managed);
	assert_null(tier__maps_parse_line("00400000-00401000 r-xp 00000000 08:01 1 /bin/x",
					  12, &e));
	assert_false(e.managed);
	assert_null(tier__maps_parse_line("00700000-00704000 rw-s 00000000 00:05 9 /dev/shm/x",
					  12, &e));
	assert_false(e.managed);
	assert_null(tier__maps_parse_line("7ffc00000000-7ffc00002000 rw-p 00000000 00:00 0 "
					  "[vvar]", 12, &e));
	assert_false(e.managed);
	assert_non_null(tier__maps_parse_line("garbage", 12, &e));
	assert_non_null(tier__maps_parse_line("", 12, &e));
}

static void test_idle(void **state)
{
	static const uint64_t ours[] = {
		0x1000, 0x1001, 0x1003, 0x2040, 0x2041, 0x2042, 0x2043, 0x3000, 0x3001, 0x3002,
		0x3003, 0x3004, 0x3005, 0x3006, 0x3007, 0x4008, 0x4009, 0x400a, 0x400b, 0x400c,
		0x400d, 0x400e, 0x400f, 0x5000, 0x7000,
	};
	const pid_t pids[] = { 100, 300 /* gone */ };
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	size_t i;
	void *priv;

	(void)state;
	tmp_init(&t, "pagemap");
	write_pagemaps(&t);
	if (tier__linux_tracker_idle.probe(&t.ctx, &err))
		fail_msg("probe: %s", err.msg);
	if (tier__linux_tracker_idle.create(&t.ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	if (tier__linux_tracker_idle.set_targets(priv, pids, 2, &err))
		fail_msg("set_targets: %s", err.msg);
	/* Every present page of the watched mappings marked idle, nothing
	 * else (not 0x1002 next to them, not the shared mapping's 0x6000). */
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!idle_bit(&t, ours[i]))
			fail_msg("pfn %#llx not marked idle", (unsigned long long)ours[i]);
	assert_false(idle_bit(&t, 0x1002));
	assert_false(idle_bit(&t, 0x6000));
	assert_false(idle_bit(&t, 0x3008));

	/* Accesses; a huge page's tails read "not idle" whatever happened,
	 * its head (idle) answers for them. */
	touch(&t, 0x1001);
	touch(&t, 0x2041);
	touch(&t, 0x400a);
	for (i = 1; i < 8; i++)
		touch(&t, 0x3000 + i);
	if (tier__linux_tracker_idle.collect(priv, sink, &g, &err))
		fail_msg("collect: %s", err.msg);
	assert_int_equal(g.n, 10);
	expect_obs(&g.v[0], 100, 0x600000, 0x601000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[1], 100, 0x601000, 0x602000, TIER_OBS_ACCESSED, 1, 1);
	/* page 2 is swapped out: a gap */
	expect_obs(&g.v[2], 100, 0x603000, 0x605000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[3], 100, 0x605000, 0x606000, TIER_OBS_ACCESSED, 1, 1);
	expect_obs(&g.v[4], 100, 0x606000, 0x608000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[5], 100, 0x800000, 0x80a000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[6], 100, 0x80a000, 0x80b000, TIER_OBS_ACCESSED, 1, 1);
	expect_obs(&g.v[7], 100, 0x80b000, 0x810000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[8], 100, 0x900000, 0x901000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[9], 100, 0xa00000, 0xa01000, TIER_OBS_ACCESSED, 0, 1);
	/* Marked idle again after the scan. */
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!idle_bit(&t, ours[i]))
			fail_msg("pfn %#llx not marked idle again", (unsigned long long)ours[i]);
	assert_false(idle_bit(&t, 0x6000));

	/* The huge page's head touched: all 8 pages accessed. */
	touch(&t, 0x3000);
	for (i = 1; i < 8; i++)
		touch(&t, 0x3000 + i);
	g.n = 0;
	assert_int_equal(tier__linux_tracker_idle.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 6);
	expect_obs(&g.v[0], 100, 0x600000, 0x602000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[1], 100, 0x603000, 0x608000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[2], 100, 0x800000, 0x808000, TIER_OBS_ACCESSED, 1, 1);
	expect_obs(&g.v[3], 100, 0x808000, 0x810000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[4], 100, 0x900000, 0x901000, TIER_OBS_ACCESSED, 0, 1);
	tier__linux_tracker_idle.destroy(priv);
	tmp_release(&t);
}

static void test_idle_no_pfns(void **state)
{
	const pid_t pid = 101;
	struct tier_err err = { "" };
	struct tmp t;
	void *priv;

	(void)state;
	tmp_init(&t, "pagemap");
	write_pagemaps(&t);
	if (tier__linux_tracker_idle.create(&t.ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	assert_int_equal(tier__linux_tracker_idle.set_targets(priv, &pid, 1, &err), -EPERM);
	assert_non_null(strstr(err.msg, "pid 101"));
	assert_non_null(strstr(err.msg, "CAP_SYS_ADMIN"));
	tier__linux_tracker_idle.destroy(priv);

	/* probe: no CAP_SYS_ADMIN in the process's status. */
	snprintf(t.proc, sizeof(t.proc), "%s/proc-nocap", t.dir);
	t.ctx.procfs_root = t.proc;
	assert_int_equal(tier__linux_tracker_idle.probe(&t.ctx, &err), -EPERM);
	assert_non_null(strstr(err.msg, "CAP_SYS_ADMIN"));
	tmp_release(&t);

	/* No page_idle in the kernel. */
	tmp_init(&t, "damon-sysfs/v6.12");
	assert_int_equal(tier__linux_tracker_idle.probe(&t.ctx, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/kernel/mm/page_idle/bitmap missing (kernel without "
				"CONFIG_IDLE_PAGE_TRACKING"));
	tmp_release(&t);
}


/* ---- perf records ------------------------------------------------------- */

#define ST (PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT | \
	    PERF_SAMPLE_DATA_SRC)

struct ring {
	uint8_t data[256];
	uint64_t head;
};

static void ring_put(struct ring *r, const void *rec, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		r->data[(r->head + i) % sizeof(r->data)] = ((const uint8_t *)rec)[i];
	r->head += len;
}

static void put_sample(struct ring *r, uint32_t pid, uint64_t addr, uint64_t period,
		       uint64_t weight, uint64_t data_src)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t addr, period, weight, data_src;
	} s = { { PERF_RECORD_SAMPLE, 0, sizeof(s) }, pid, pid + 1, addr, period, weight,
		data_src };

	ring_put(r, &s, sizeof(s));
}

struct samples {
	struct tier__perf_sample v[16];
	size_t n;
};

static void on_sample(void *ctx, const struct tier__perf_sample *s)
{
	struct samples *ss = ctx;

	if (ss->n < 16)
		ss->v[ss->n++] = *s;
}

static void test_perf_decode(void **state)
{
	const uint64_t load = PERF_MEM_OP_LOAD, store = PERF_MEM_OP_STORE;
	struct tier__perf_stats st = { 0 };
	struct samples ss = { .n = 0 };
	struct ring r = { .head = 0 };
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
	} lost = { { PERF_RECORD_LOST, 0, sizeof(lost) }, 7, 42 };
	struct {
		struct perf_event_header h;
		uint64_t x;
	} other = { { PERF_RECORD_MMAP, 0, sizeof(other) }, 0 };
	uint64_t tail;

	(void)state;
	assert_true(tier__perf_sample_type_ok(ST));
	assert_false(tier__perf_sample_type_ok(ST | PERF_SAMPLE_CALLCHAIN));
	assert_false(tier__perf_sample_type_ok(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT));

	/* Start near the end of the 256-byte area: the second sample (48
	 * bytes at 208) wraps around. */
	r.head = tail = 160;
	put_sample(&r, 100, 0x7f0000001234, 10007, 250, load | (1ull << 5));
	put_sample(&r, 100, 0x7f0000002000, 10007, 90, store);
	ring_put(&r, &lost, sizeof(lost));
	ring_put(&r, &other, sizeof(other));
	put_sample(&r, 200, 0x600000, 20011, 0, PERF_MEM_OP_NA);
	tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head, ST, on_sample, &ss, &st);
	assert_true(tail == r.head);
	assert_int_equal(st.samples, 3);
	assert_int_equal(st.lost, 42);
	assert_int_equal(st.other, 1);
	assert_int_equal(st.bad, 0);
	assert_int_equal(ss.n, 3);
	assert_int_equal(ss.v[0].pid, 100);
	assert_int_equal(ss.v[0].tid, 101);
	assert_true(ss.v[0].addr == 0x7f0000001234);
	assert_int_equal(ss.v[0].period, 10007);
	assert_int_equal(ss.v[0].weight, 250);
	assert_false(tier__perf_data_src_is_store(ss.v[0].data_src));
	assert_true(ss.v[1].addr == 0x7f0000002000);	/* the wrapped one */
	assert_true(tier__perf_data_src_is_store(ss.v[1].data_src));
	assert_int_equal(ss.v[2].pid, 200);
	assert_int_equal(ss.v[2].period, 20011);
	assert_false(tier__perf_data_src_is_store(ss.v[2].data_src));

	/* A record the kernel has not finished: left for the next call. */
	ss.n = 0;
	put_sample(&r, 100, 0x1000, 1, 1, load);
	tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head - 8, ST, on_sample, &ss,
				 &st);
	assert_int_equal(ss.n, 0);
	assert_true(tail == r.head - 48);
	tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head, ST, on_sample, &ss, &st);
	assert_int_equal(ss.n, 1);
	assert_true(tail == r.head);

	/* A sample shorter than its sample_type says: counted bad. */
	{
		struct {
			struct perf_event_header h;
			uint32_t pid, tid;
		} shortrec = { { PERF_RECORD_SAMPLE, 0, sizeof(shortrec) }, 1, 1 };

		ring_put(&r, &shortrec, sizeof(shortrec));
		tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head, ST, on_sample, &ss,
					 &st);
		assert_int_equal(st.bad, 1);
		assert_true(tail == r.head);
	}
	/* Garbage (size 0): everything up to head dropped, no endless loop. */
	{
		struct perf_event_header zero = { PERF_RECORD_SAMPLE, 0, 0 };

		ring_put(&r, &zero, sizeof(zero));
		put_sample(&r, 100, 0x1000, 1, 1, load);
		ss.n = 0;
		tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head, ST, on_sample, &ss,
					 &st);
		assert_int_equal(st.bad, 2);
		assert_int_equal(ss.n, 0);
		assert_true(tail == r.head);
	}

	/* WEIGHT_STRUCT: the latency is the low 32 bits; IDENTIFIER, IP,
	 * TIME, CPU and RAW are skipped in their places. */
	{
		uint64_t st2 = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC;
		struct {
			struct perf_event_header h;
			uint64_t id, ip;
			uint32_t pid, tid;
			uint64_t time, addr;
			uint32_t cpu, res;
			uint32_t raw_size;
			uint8_t raw[12];	/* 4 + 12 = 16: u64 aligned */
			uint64_t weight, data_src;
		} __attribute__((packed)) s2 = {
			{ PERF_RECORD_SAMPLE, 0, sizeof(s2) }, 9, 0x401000, 300, 301, 5, 0xabc000,
			1, 0, 12, { 0 }, (7ull << 32) | 123, store,
		};

		struct ring r2 = { .head = 0 };

		ring_put(&r2, &s2, sizeof(s2));
		ss.n = 0;
		memset(&st, 0, sizeof(st));
		tier__perf_decode(r2.data, sizeof(r2.data), 0, r2.head, st2, on_sample, &ss, &st);
		assert_int_equal(ss.n, 1);
		assert_int_equal(ss.v[0].pid, 300);
		assert_true(ss.v[0].addr == 0xabc000);
		assert_int_equal(ss.v[0].weight, 123);
		assert_true(tier__perf_data_src_is_store(ss.v[0].data_src));
	}
}

static void test_perf_event_alias(void **state)
{
	uint64_t config, config1;

	(void)state;
	assert_int_equal(tier__perf_parse_event("event=0xcd,umask=0x1,ldlat=3\n", &config,
						&config1), 0);
	assert_true(config == 0x1cd);
	assert_true(config1 == 3);
	assert_int_equal(tier__perf_parse_event("event=0xcd,umask=0x1", &config, &config1), 0);
	assert_true(config1 == 3);	/* the default threshold */
	assert_int_equal(tier__perf_parse_event("umask=0x1", &config, &config1), -EINVAL);
	assert_int_equal(tier__perf_parse_event("event=0xcd,frontend=0x8", &config, &config1),
			 -EINVAL);
	assert_int_equal(tier__perf_parse_event("event=zz", &config, &config1), -EINVAL);
}

static void test_perf_probe(void **state)
{
	struct tier_err err = { "" };
	struct tmp t;
	char path[1024];

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	assert_int_equal(tier__linux_tracker_perf.probe(&t.ctx, &err), -ENODEV);
	assert_non_null(strstr(err.msg, "perf: no PMU with memory-access samples"));

	/* An Intel PMU with the mem-loads alias. */
	snprintf(path, sizeof(path), "%s/sys/bus", t.dir);
	mkdir(path, 0755);
	strcat(path, "/event_source");
	mkdir(path, 0755);
	strcat(path, "/devices");
	mkdir(path, 0755);
	strcat(path, "/cpu");
	mkdir(path, 0755);
	strcat(path, "/events");
	assert_int_equal(mkdir(path, 0755), 0);
	put(&t, "sys/bus/event_source/devices/cpu/events/mem-loads",
	    "event=0xcd,umask=0x1,ldlat=3\n");
	put(&t, "sys/bus/event_source/devices/cpu/type", "4\n");
	assert_int_equal(tier__linux_tracker_perf.probe(&t.ctx, &err), 0);
	put(&t, "sys/bus/event_source/devices/cpu/events/mem-loads", "event=what\n");
	assert_int_equal(tier__linux_tracker_perf.probe(&t.ctx, &err), -EINVAL);
	tmp_release(&t);
}

/* ---- picking ------------------------------------------------------------ */

/* The budget in equal parts: steps alone (idle, perf: no thread of
 * their own), steps and kdamond (damon), steps and soft-dirty's thread
 * (softdirty), a third each (damon+softdirty); the parts add up to it. */
static void test_budget_parts(void **state)
{
	static const struct {
		const char *name;
		double steps, kthread, thread;
	} want[] = {
		{ "idle", 1, 0, 0 },
		{ "perf", 1, 0, 0 },
		{ "damon", 0.5, 3, 0 },
		{ "softdirty", 0.5, 0, 3 },
		{ "damon+softdirty", 1.0 / 3, 2, 2 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct tier_linux_tracker_ops *t = tier_linux_tracker_find(want[i].name);
		double k = -1, th = -1, steps;

		assert_non_null(t);
		steps = tier_linux_tracker_budget(t, 6, &k, &th);
		assert_float_equal(steps, want[i].steps, 1e-9);
		assert_float_equal(k, want[i].kthread, 1e-9);
		assert_float_equal(th, want[i].thread, 1e-9);
		assert_float_equal(steps * 6 + k + th, 6, 1e-9);
	}
}

/* The steps' share with what the tracker's threads used: their own part
 * at least (threads over their parts take nothing from it), what the
 * threads leave of the whole, never more than all of it. */
static void test_step_share(void **state)
{
	(void)state;
	/* damon+softdirty under 5%: a kdamond at its 1.67%, soft-dirty's
	 * thread at 0.2% of a core: the steps get the other 3.13%. */
	assert_float_equal(tier_linux_step_share(1.0 / 3, 5, 5.0 / 3 + 0.2), 1 - (5.0 / 3 + 0.2) / 5,
			   1e-9);
	/* threads at or over their parts: the steps' own part */
	assert_float_equal(tier_linux_step_share(1.0 / 3, 5, 10.0 / 3), 1.0 / 3, 1e-9);
	assert_float_equal(tier_linux_step_share(1.0 / 3, 5, 4.5), 1.0 / 3, 1e-9);
	/* idle threads: all of it, not more */
	assert_float_equal(tier_linux_step_share(0.5, 5, 0), 1, 1e-9);
	assert_float_equal(tier_linux_step_share(0.5, 5, -1), 1, 1e-9);
	/* no budget to split: the own part */
	assert_float_equal(tier_linux_step_share(0.5, 0, 1), 0.5, 1e-9);
}

/* The threads' CPU average: seeded with their parts, it follows a steady
 * rate within a few time constants, a 1 s burst moves it by a tenth of
 * the burst's excess (10 s), and readings less than 1 s apart wait. */
static void test_others_average(void **state)
{
	struct tier_linux_others o = { 0 };
	uint64_t now = 1000000;
	double cpu = 0, pct;
	int i;

	(void)state;
	/* Seeded: their parts (two thirds of 5%). */
	pct = tier_linux_others_update(&o, now, cpu, 10.0 / 3);
	assert_float_equal(pct, 10.0 / 3, 1e-9);
	/* 0.5 s later, whatever was used: not yet counted. */
	pct = tier_linux_others_update(&o, now + 500000, 5.0, 10.0 / 3);
	assert_float_equal(pct, 10.0 / 3, 1e-9);
	/* The kdamond at 1%, the thread idle, for 60 s read every second:
	 * within 1% of 1% (e^-6 of the seed's excess is left). */
	for (i = 0; i < 60; i++) {
		now += 1000000;
		cpu += 0.01;
		pct = tier_linux_others_update(&o, now, cpu, 10.0 / 3);
	}
	assert_true(fabs(pct - 1.0) < 0.01);
	/* A 1 s burst at 50% of a core: 1 - e^-0.1 of the way there. */
	now += 1000000;
	cpu += 0.5;
	pct = tier_linux_others_update(&o, now, cpu, 10.0 / 3);
	assert_true(fabs(pct - (1.0 + -expm1(-0.1) * 49.0)) < 0.05);
	/* The share the steps then get is their own part: the threads are
	 * over what they leave. */
	assert_float_equal(tier_linux_step_share(1.0 / 3, 5, pct), 1.0 / 3, 1e-9);
	/* A gap of 5 s read at once: its mean rate, weighted for 5 s. */
	{
		double before = pct;

		now += 5000000;
		cpu += 0.05;
		pct = tier_linux_others_update(&o, now, cpu, 10.0 / 3);
		assert_true(fabs(pct - (before + -expm1(-0.5) * (1.0 - before))) < 1e-6);
	}
}

static void test_pick(void **state)
{
	const struct tier_linux_tracker_ops *ops;
	struct tmp t, p;
	char why[2048];

	(void)state;
	assert_ptr_equal(tier_linux_tracker_find("damon"), &tier__linux_tracker_damon);
	assert_ptr_equal(tier_linux_tracker_find("perf"), &tier__linux_tracker_perf);
	assert_null(tier_linux_tracker_find("hintfault"));
	assert_string_equal(tier_linux_trackers[0]->name, "damon+softdirty");
	assert_string_equal(tier_linux_trackers[1]->name, "damon");
	assert_string_equal(tier_linux_trackers[2]->name, "idle");
	assert_string_equal(tier_linux_trackers[3]->name, "softdirty");
	assert_string_equal(tier_linux_trackers[4]->name, "perf");
	assert_string_equal(tier_linux_trackers[5]->name, "damon+hint");
	assert_string_equal(tier_linux_trackers[6]->name, "hint");
	assert_null(tier_linux_trackers[7]);
	assert_true(tier_linux_tracker_find("hint")->hint_faults);
	assert_true(tier_linux_tracker_find("damon+hint")->hint_faults);
	assert_false(tier_linux_tracker_find("damon+softdirty")->hint_faults);

	/* DAMON's sysfs, the pagemap fixture's procfs: like Debian 6.12. */
	tmp_init(&t, "damon-sysfs/v6.12");
	tmp_init(&p, "pagemap");
	t.ctx.procfs_root = p.proc;
	assert_int_equal(tier_linux_tracker_pick(&t.ctx, NULL, &ops, why, sizeof(why)), 0);
	assert_ptr_equal(ops, &tier__linux_tracker_combo);
	assert_non_null(strstr(why, "idle: "));
	assert_non_null(strstr(why, "CONFIG_IDLE_PAGE_TRACKING"));
	assert_non_null(strstr(why, "\nperf: no PMU"));
	assert_null(strstr(why, "DAMON"));
	assert_null(strstr(why, "softdirty"));
	assert_int_equal(why[strlen(why) - 1], '\n');

	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "softdirty", &ops, why, sizeof(why)), 0);
	assert_ptr_equal(ops, &tier__linux_tracker_softdirty);
	assert_string_equal(why, "");

	/* Both together, where both can run. */
	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "damon+softdirty", &ops, why, sizeof(why)),
			 0);
	assert_ptr_equal(ops, &tier__linux_tracker_combo);
	assert_int_equal(ops->kinds, TIER_OBS_ACCESSED | TIER_OBS_WRITTEN);
	assert_string_equal(why, "");

	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "perf", &ops, why, sizeof(why)), -ENODEV);
	assert_null(ops);
	assert_non_null(strstr(why, "perf: no PMU"));

	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "bogus", &ops, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "unknown tracker 'bogus' (known: damon+softdirty damon idle softdirty perf damon+hint hint, auto)\n");

	/* The pagemap fixture's sysfs has page_idle but no DAMON: idle. */
	assert_int_equal(tier_linux_tracker_pick(&p.ctx, "auto", &ops, why, sizeof(why)), 0);
	assert_ptr_equal(ops, &tier__linux_tracker_idle);
	assert_non_null(strstr(why, "DAMON: "));

	/* A small why: cut, never overrun. */
	assert_int_equal(tier_linux_tracker_pick(&t.ctx, NULL, &ops, why, 16), 0);
	assert_true(strlen(why) < 16);
	tmp_release(&p);

	/* DAMON without soft-dirty (this procfs has no clear_refs): DAMON
	 * alone, and why not both. */
	t.ctx.procfs_root = t.proc;
	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "auto", &ops, why, sizeof(why)), 0);
	assert_ptr_equal(ops, &tier__linux_tracker_damon);
	assert_non_null(strstr(why, "softdirty: "));
	tmp_release(&t);
}

/* ---- kernel tiering ----------------------------------------------------- */

static void test_kernel_tiering(void **state)
{
	struct tier_linux_kernel_tiering kt, saved;
	struct tier_err err = { "" };
	struct tmp t;
	char buf[256];

	(void)state;
	tmp_init(&t, "kernel-tiering/debian");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), 0);
	assert_true(kt.has_numa_balancing && kt.has_demotion);
	assert_int_equal(kt.numa_balancing, 1);
	assert_false(kt.demotion_enabled);
	/* Mode 1 migrates too. */
	assert_true(tier_linux_kernel_tiering_active(&kt));
	tier_linux_kernel_tiering_describe(&kt, buf, sizeof(buf));
	assert_string_equal(buf, "numa_balancing=1 (NUMA balancing), demotion_enabled=false");
	/* No promotion rate limit (before 6.0): no hint faults only, and
	 * nothing written. */
	assert_false(kt.has_rate_limit);
	assert_int_equal(tier_linux_kernel_tiering_hint_only(&t.ctx, &saved, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "numa_balancing_promote_rate_limit_MBps missing"));
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "1");
	tmp_release(&t);

	tmp_init(&t, "kernel-tiering/tiering");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), 0);
	tier_linux_kernel_tiering_describe(&kt, buf, sizeof(buf));
	assert_string_equal(buf, "numa_balancing=2 (memory tiering), demotion_enabled=true");
	if (tier_linux_kernel_tiering_disable(&t.ctx, &saved, &err))
		fail_msg("disable: %s", err.msg);
	assert_int_equal(saved.numa_balancing, 2);
	assert_true(saved.demotion_enabled);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "0");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "false");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), 0);
	assert_false(tier_linux_kernel_tiering_active(&kt));
	if (tier_linux_kernel_tiering_restore(&t.ctx, &saved, &err))
		fail_msg("restore: %s", err.msg);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "true");
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"),
			    "65536");

	/* Switching off leaves the rate limit: nothing of it to put back. */
	assert_false(saved.has_rate_limit);
	/* Hint faults only (the hint-fault tracker): memory tiering mode, no
	 * promotion, no demotion; put back as found. */
	if (tier_linux_kernel_tiering_hint_only(&t.ctx, &saved, &err))
		fail_msg("hint_only: %s", err.msg);
	assert_true(saved.has_rate_limit);
	assert_int_equal(saved.rate_limit_mbps, 65536);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"), "0");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "false");
	if (tier_linux_kernel_tiering_restore(&t.ctx, &saved, &err))
		fail_msg("restore: %s", err.msg);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"),
			    "65536");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "true");

	/* Not writable: a clear error, nothing left half-done. As root the
	 * check runs in a child that gave up root. */
	{
		char path[1024];
		pid_t pid;
		int status = -1;

		snprintf(path, sizeof(path), "%s/proc/sys/kernel/numa_balancing", t.dir);
		assert_int_equal(chmod(path, 0666), 0);
		snprintf(path, sizeof(path), "%s/sys/kernel/mm/numa/demotion_enabled", t.dir);
		assert_int_equal(chmod(path, 0444), 0);
		assert_int_equal(chmod(t.dir, 0755), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
				_exit(2);
			if (tier_linux_kernel_tiering_disable(&t.ctx, &saved, &err) != -EACCES)
				_exit(3);
			if (!strstr(err.msg, "demotion_enabled: writing 'false': Permission "
				    "denied; switching kernel tiering needs root"))
				_exit(4);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		/* numa_balancing was put back after demotion failed. */
		assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
		chmod(path, 0644);
	}
	tmp_release(&t);

	/* An old kernel: neither file. */
	tmp_init(&t, "pagemap");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), 0);
	assert_false(kt.has_numa_balancing || kt.has_demotion);
	assert_false(tier_linux_kernel_tiering_active(&kt));
	assert_int_equal(tier_linux_kernel_tiering_disable(&t.ctx, &saved, &err), 0);
	assert_int_equal(tier_linux_kernel_tiering_restore(&t.ctx, &saved, &err), 0);
	tier_linux_kernel_tiering_describe(&kt, buf, sizeof(buf));
	assert_string_equal(buf, "numa_balancing absent, demotion_enabled absent");
	tmp_release(&t);

	tmp_init(&t, "kernel-tiering/bad");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "demotion_enabled: expected true or false, found 'maybe'"));
	tmp_release(&t);
}


/* ---- the kernel guard: damon_stat, kernel tiering, the state file ------- */

static char said[2048];

static void say_collect(void *arg, int level, const char *msg)
{
	size_t len = strlen(said);

	(void)arg;
	snprintf(said + len, sizeof(said) - len, "%d %s\n", level, msg);
}

static const char *state_file(const struct tmp *t)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s/tierd/state", t->dir);
	return path;
}

static void test_guard_take_and_give_back(void **state)
{
	struct tier_linux_guard g;
	struct tier_err err = { "" };
	struct tmp t;
	char want[64];

	(void)state;
	tmp_init(&t, "kernel-tiering/sid");
	said[0] = '\0';
	if (tier_linux_guard_open(&g, &t.ctx, state_file(&t), say_collect, NULL, &err))
		fail_msg("open: %s", err.msg);
	assert_string_equal(said, "");
	assert_null(get(&t, "tierd/state"));	/* nothing changed yet */
	if (tier_linux_guard_damon_stat(&g, true, &err))
		fail_msg("damon_stat: %s", err.msg);
	assert_string_equal(get(&t, "sys/module/damon_stat/parameters/enabled"), "N");
	assert_non_null(strstr(said, "damon_stat switched off while tierd runs"));
	if (tier_linux_guard_kernel_tiering(&g, true, &err))
		fail_msg("kernel tiering: %s", err.msg);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "0");
	assert_int_equal(tier_linux_guard_kdamond(&g, true, 0, 127, &err), 0);
	{
		struct tier_linux_kernel_state st;

		if (tier_linux_kernel_state_load(state_file(&t), &st, &err))
			fail_msg("load: %s", err.msg);
		assert_int_equal(st.pid, getpid());
		assert_true(st.damon_stat && st.has_kdamond);
		assert_int_equal(st.kdamond_pid, 127);
		assert_int_equal(st.tiering.numa_balancing, 2);
		assert_true(st.tiering.has_demotion && st.tiering.demotion_enabled);
	}
	/* The clean exit: everything back, the file gone. */
	said[0] = '\0';
	if (tier_linux_guard_close(&g, &err))
		fail_msg("close: %s", err.msg);
	assert_string_equal(get(&t, "sys/module/damon_stat/parameters/enabled"), "Y");
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "true");
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "off");
	assert_null(get(&t, "tierd/state"));
	snprintf(want, sizeof(want), "stopped kdamond 0 (pid 127)");
	assert_non_null(strstr(said, want));
	tmp_release(&t);
}

static void test_guard_after_crash(void **state)
{
	struct tier_linux_guard g, g2;
	struct tier_err err = { "" };
	bool found;
	struct tmp t;

	(void)state;
	tmp_init(&t, "kernel-tiering/sid");
	said[0] = '\0';
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), say_collect, NULL,
					       &err), 0);
	assert_int_equal(tier_linux_guard_damon_stat(&g, true, &err), 0);
	assert_int_equal(tier_linux_guard_kernel_tiering(&g, true, &err), 0);
	assert_int_equal(tier_linux_guard_kdamond(&g, true, 0, 127, &err), 0);
	/* Killed here: no close. The next start puts everything back. */
	said[0] = '\0';
	if (tier_linux_guard_open(&g2, &t.ctx, state_file(&t), say_collect, NULL, &err))
		fail_msg("reopen: %s", err.msg);
	assert_non_null(strstr(said, "did not exit cleanly"));
	assert_non_null(strstr(said, "stopped kdamond 0 (pid 127)"));
	assert_non_null(strstr(said, "numa_balancing=2"));
	assert_non_null(strstr(said, "damon_stat enabled=Y"));
	assert_string_equal(get(&t, "sys/module/damon_stat/parameters/enabled"), "Y");
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "off");
	assert_null(get(&t, "tierd/state"));
	assert_int_equal(tier_linux_guard_close(&g2, &err), 0);

	/* A kdamond index that serves someone else by now is left alone. */
	put(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state", "on\n");
	put(&t, "sys/kernel/mm/damon/admin/kdamonds/0/pid", "300\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err), 0);
	assert_int_equal(tier_linux_guard_kdamond(&g, true, 0, 127, &err), 0);
	assert_int_equal(tier_linux_guard_restore_leftovers(&t.ctx, state_file(&t), NULL, NULL,
							    &found, &err), 0);
	assert_true(found);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "on");
	assert_int_equal(tier_linux_guard_restore_leftovers(&t.ctx, state_file(&t), NULL, NULL,
							    &found, &err), 0);
	assert_false(found);

	/* Killed while its kdamond was being started again (new targets):
	 * recorded with no thread, the kdamond at its index is stopped
	 * whatever its thread - with the old thread's pid, the new one was
	 * left running and the next start could not take DAMON. */
	put(&t, "sys/kernel/mm/damon/admin/kdamonds/0/pid", "301\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err), 0);
	assert_int_equal(tier_linux_guard_kdamond(&g, true, 0, 0, &err), 0);
	said[0] = '\0';
	assert_int_equal(tier_linux_guard_restore_leftovers(&t.ctx, state_file(&t), say_collect,
							    NULL, &found, &err), 0);
	assert_true(found);
	assert_non_null(strstr(said, "stopped kdamond 0 (pid 301)"));
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "off");
	tmp_release(&t);
}

/* For the hint-fault tracker: NUMA balancing takes hint faults and moves
 * nothing while tierd runs; a tierd killed then leaves the three settings
 * in its state file, and the next start puts them back. */
static void test_guard_hint_faults(void **state)
{
	struct tier_linux_guard g, g2;
	struct tier_linux_kernel_state st;
	struct tier_err err = { "" };
	struct tmp t;

	(void)state;
	tmp_init(&t, "kernel-tiering/sid");
	said[0] = '\0';
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), say_collect, NULL,
					       &err), 0);
	if (tier_linux_guard_hint_faults(&g, &err))
		fail_msg("hint faults: %s", err.msg);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"), "0");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "false");
	assert_non_null(strstr(said, "takes hint faults for tierd and moves nothing"));
	if (tier_linux_kernel_state_load(state_file(&t), &st, &err))
		fail_msg("load: %s", err.msg);
	assert_true(st.tiering.has_rate_limit);
	assert_int_equal(st.tiering.rate_limit_mbps, 65536);
	assert_int_equal(st.tiering.numa_balancing, 2);
	assert_true(st.tiering.demotion_enabled);
	/* Killed here: the next start puts all three back. */
	said[0] = '\0';
	if (tier_linux_guard_open(&g2, &t.ctx, state_file(&t), say_collect, NULL, &err))
		fail_msg("reopen: %s", err.msg);
	assert_non_null(strstr(said, "numa_balancing_promote_rate_limit_MBps=65536"));
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"),
			    "65536");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "true");
	assert_null(get(&t, "tierd/state"));
	assert_int_equal(tier_linux_guard_close(&g2, &err), 0);
	/* A kernel without the rate limit: refused, nothing changed. */
	tmp_release(&t);
	tmp_init(&t, "kernel-tiering/debian");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err), 0);
	assert_int_equal(tier_linux_guard_hint_faults(&g, &err), -EOPNOTSUPP);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "1");
	assert_int_equal(tier_linux_guard_close(&g, &err), 0);
	assert_null(get(&t, "tierd/state"));
	tmp_release(&t);
}

static void test_guard_refuses(void **state)
{
	struct tier_linux_guard g;
	struct tier_err err = { "" };
	struct tmp t;
	char path[700];

	(void)state;
	tmp_init(&t, "kernel-tiering/sid");
	/* Another tierd runs (proc/4242/comm is tierd): its file is not ours. */
	snprintf(path, sizeof(path), "%s/tierd", t.dir);
	assert_int_equal(mkdir(path, 0755), 0);
	put(&t, "tierd/state", "pid 4242\nnuma_balancing 2\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err),
			 -EBUSY);
	assert_non_null(strstr(err.msg, "another tierd (pid 4242) runs"));
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	/* A damaged file: its line named, nothing written. */
	put(&t, "tierd/state", "pid 1\nnuma_balancing two\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "state:2: bad value for 'numa_balancing'"));
	put(&t, "tierd/state", "pid 1\nnuma 2\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "state:2: unknown key 'numa'"));
	put(&t, "tierd/state", "pid 1\nnuma_balancing 2\nnuma_balancing_promote_rate_limit_MBps -1\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg,
			       "state:3: bad value for 'numa_balancing_promote_rate_limit_MBps'"));
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"),
			    "65536");
	tmp_release(&t);
}

static void test_guard_keeps(void **state)
{
	struct tier_linux_guard g;
	struct tier_err err = { "" };
	struct tmp t;

	(void)state;
	tmp_init(&t, "kernel-tiering/sid");
	put(&t, "sys/module/damon_reclaim/parameters/enabled", "Y\n");
	said[0] = '\0';
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), say_collect, NULL,
					       &err), 0);
	assert_int_equal(tier_linux_guard_damon_stat(&g, false, &err), 0);
	assert_int_equal(tier_linux_guard_kernel_tiering(&g, false, &err), 0);
	assert_string_equal(get(&t, "sys/module/damon_stat/parameters/enabled"), "Y");
	assert_string_equal(get(&t, "sys/module/damon_reclaim/parameters/enabled"), "Y");
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_non_null(strstr(said, "damon_stat kept on (daemon.damon_stat: keep)"));
	assert_non_null(strstr(said, "lost: DAMON's access counts"));
	assert_non_null(strstr(said, "damon_reclaim is enabled"));
	assert_non_null(strstr(said, "kernel's own tiering is on"));
	assert_null(get(&t, "tierd/state"));
	assert_int_equal(tier_linux_guard_close(&g, &err), 0);
	/* The DAMON tracker names the holder when it cannot start. */
	assert_int_equal(tier__linux_tracker_damon.probe(&t.ctx, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "damon_stat is enabled and runs DAMON exclusively"));
	tmp_release(&t);
}

/* ---- damon+softdirty: the regions with what their written pages leave - */

#define BY_PAGES	2048
#define BY_PIDS		2

struct merge_got {
	double rate[BY_PIDS][BY_PAGES];	/* written accesses/s handed on, per page */
	double region[BY_PIDS][BY_PAGES];	/* regions' accesses/s handed on, per page */
	double other[BY_PIDS][BY_PAGES];	/* other kinds' */
	unsigned calls;
	size_t n;
};

static void merge_sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct merge_got *g = ctx;
	size_t i;

	g->calls++;
	g->n += n;
	for (i = 0; i < n; i++) {
		double r = tier__obs_rate(&obs[i]);
		uint64_t a;

		assert_true(obs[i].start < obs[i].end);
		for (a = obs[i].start; a < obs[i].end; a += 4096) {
			if (obs[i].kind == TIER_OBS_WRITTEN)
				g->rate[obs[i].pid - 1][a / 4096] += r;
			else if (obs[i].kind == TIER_OBS_ACCESSED)
				g->region[obs[i].pid - 1][a / 4096] += r;
			else
				g->other[obs[i].pid - 1][a / 4096] += 1;
		}
	}
}

static struct tier_linux_addr_obs by_obs(pid_t pid, uint64_t first, uint64_t nr, uint16_t kind,
					 uint32_t count, uint32_t max, uint32_t interval_us)
{
	return (struct tier_linux_addr_obs){ .pid = pid, .start = first * 4096,
					     .end = (first + nr) * 4096, .kind = kind,
					     .count = count, .max = max,
					     .interval_us = interval_us };
}

static uint32_t iv_of(double rate)
{
	return (uint32_t)(2 * M_LN2 / rate * 1e6);
}

/* Written runs pass whole; each region goes on with its rate less what
 * the written pages under it stand for, spread over its pages (nothing
 * left: count 0); an idle region, one with nothing written under it, and
 * another process's runs change nothing; standing estimates count as
 * written; other kinds pass. */
static void test_obs_merge(void **state)
{
	static struct merge_got g;
	struct tier_linux_addr_obs acc[4], wr[5];
	struct tier__obs_sums sums = { 0 };
	double d, h;
	size_t i;

	(void)state;
	memset(&g, 0, sizeof(g));
	assert_true(tier__obs_sums_reset(&sums, 4));
	/* pid 1: [16, 32) at 10 of 20 checks in 100 ms (138.6/s), [32, 48)
	 * seen in none, [64, 80) at 138.6/s; pid 2: [0, 64) hot (20 of 20). */
	acc[0] = by_obs(1, 16, 16, TIER_OBS_ACCESSED, 10, 20, 100000);
	acc[1] = by_obs(1, 32, 16, TIER_OBS_ACCESSED, 0, 20, 100000);
	acc[2] = by_obs(1, 64, 16, TIER_OBS_ACCESSED, 10, 20, 100000);
	acc[3] = by_obs(2, 0, 64, TIER_OBS_ACCESSED, 20, 20, 100000);
	d = tier__obs_rate(&acc[0]);
	h = tier__obs_rate(&acc[3]);
	assert_true(fabs(d - 138.63) < 0.01);
	assert_true(h > 700);
	/* pid 1: 50/s over [28, 40), 500/s over [64, 72), 50/s over
	 * [100, 104) (no region), a sample; pid 2: 500/s over [60, 70) and
	 * a standing 500/s over [0, 4). */
	wr[0] = by_obs(1, 28, 12, TIER_OBS_WRITTEN, 1, 2, iv_of(50));
	wr[1] = by_obs(1, 64, 8, TIER_OBS_WRITTEN, 1, 2, iv_of(500));
	wr[2] = by_obs(1, 100, 4, TIER_OBS_WRITTEN, 1, 2, iv_of(50));
	wr[3] = by_obs(1, 200, 1, TIER_OBS_SAMPLE, 1, 0, 0);
	wr[4] = by_obs(2, 60, 10, TIER_OBS_WRITTEN, 1, 2, iv_of(500));
	/* In two batches, as soft-dirty's thread hands them. */
	tier__obs_written(acc, 4, &sums, wr, 4, merge_sink, &g);
	tier__obs_written(acc, 4, &sums, wr + 4, 1, merge_sink, &g);
	wr[0] = by_obs(2, 0, 4, TIER_OBS_WRITTEN, 1, 2, iv_of(500));
	wr[0].write = TIER_OBS_STANDING;
	tier__obs_written(acc, 4, &sums, wr, 1, merge_sink, &g);
	tier__obs_rest(acc, 4, &sums, merge_sink, &g);
	tier__obs_sums_free(&sums);
	/* Written: whole, wherever they lie. */
	assert_true(fabs(g.rate[0][28] - 50) < 0.1 && fabs(g.rate[0][39] - 50) < 0.1);
	assert_true(fabs(g.rate[0][64] - 500) < 0.5 && fabs(g.rate[0][71] - 500) < 0.5);
	assert_true(fabs(g.rate[0][100] - 50) < 0.1);
	assert_true(g.rate[0][27] == 0 && g.rate[0][40] == 0 && g.rate[0][72] == 0);
	assert_true(fabs(g.rate[1][0] - 500) < 0.5 && fabs(g.rate[1][69] - 500) < 0.5);
	assert_true(g.other[0][200] == 1);
	/* [16, 32): 4 pages written at 50/s explain 12.5/s of its 138.6/s
	 * a page: every page of it, written or not, goes on at 126.1/s. */
	for (i = 16; i < 32; i++)
		assert_true(fabs(g.region[0][i] - (d - 12.5)) < 0.01 * d);
	/* [32, 48) idle: nothing, written or not; [64, 80): half its pages
	 * at 500/s explain more than its 138.6/s: nothing left. */
	for (i = 32; i < 48; i++)
		assert_true(g.region[0][i] == 0);
	for (i = 64; i < 80; i++)
		assert_true(g.region[0][i] == 0);
	/* pid 2's [0, 64): 4 pages at 500/s and 4 standing at 500/s. */
	for (i = 0; i < 64; i++)
		assert_true(fabs(g.region[1][i] - (h - 8 * 500.0 / 64)) < 0.01 * h);
	assert_true(g.region[1][64] == 0);
	/* Five written and a sample, as handed; four regions. */
	assert_int_equal(g.n, 10);
}

/* Held regions: pid's lukewarm ones (under half their checks) at no more
 * than the rate given; hot, idle, slow and other processes' as they are. */
static void test_obs_hold(void **state)
{
	struct tier_linux_addr_obs acc[5], was[5];
	size_t i;

	(void)state;
	acc[0] = by_obs(1, 0, 16, TIER_OBS_ACCESSED, 10, 20, 100000);		/* hot enough */
	acc[1] = by_obs(1, 16, 16, TIER_OBS_ACCESSED, 5, 20, 100000);		/* 57.5/s */
	acc[2] = by_obs(1, 32, 16, TIER_OBS_ACCESSED, 0, 20, 100000);		/* idle */
	acc[3] = by_obs(1, 48, 16, TIER_OBS_ACCESSED, 1, 20, 10000000);	/* 0.1/s */
	acc[4] = by_obs(2, 0, 16, TIER_OBS_ACCESSED, 5, 20, 100000);		/* pid 2 */
	memcpy(was, acc, sizeof(acc));
	assert_true(tier__obs_rate(&acc[1]) > 57 && tier__obs_rate(&acc[3]) < 0.11);
	tier__obs_hold(acc, 5, 1, 1.0);
	assert_true(fabs(tier__obs_rate(&acc[1]) - 1.0) < 1e-3);
	assert_true(acc[1].start == was[1].start && acc[1].end == was[1].end &&
		    acc[1].kind == TIER_OBS_ACCESSED);
	for (i = 0; i < 5; i++)
		if (i != 1)
			assert_memory_equal(&acc[i], &was[i], sizeof(acc[i]));
}

/* Random regions and written runs, enough regions to fill several
 * batches: written rates pass whole, and over every region what is
 * handed on adds up to the larger of the region's accesses and those of
 * the written pages under it. */
static void test_obs_merge_random(void **state)
{
	static struct merge_got g;
	static struct tier_linux_addr_obs acc[2 * BY_PAGES], wr[2 * BY_PAGES];
	static double wrate[BY_PIDS][BY_PAGES];
	static bool low[BY_PIDS][BY_PAGES];
	struct tier__obs_sums sums = { 0 };
	size_t nacc = 0, nwr = 0;
	unsigned seed, round;

	(void)state;
	for (round = 0; round < 20; round++) {
		pid_t pid;
		size_t k;

		seed = 12345 + round;
		memset(&g, 0, sizeof(g));
		memset(wrate, 0, sizeof(wrate));
		memset(low, 0, sizeof(low));
		nacc = nwr = 0;
		for (pid = 1; pid <= BY_PIDS; pid++) {
			uint64_t p = (uint64_t)(rand_r(&seed) % 4);

			/* Regions in address order, with gaps, some idle. */
			while (p < BY_PAGES) {
				uint64_t len = 1 + (uint64_t)(rand_r(&seed) % 8);

				if (p + len > BY_PAGES)
					len = BY_PAGES - p;
				acc[nacc++] = by_obs(pid, p, len, TIER_OBS_ACCESSED,
						     (uint32_t)(rand_r(&seed) % 21), 20, 100000);
				p += len + (uint64_t)(rand_r(&seed) % 3);
			}
			/* Written runs, disjoint, 1/s to 1000/s. */
			p = (uint64_t)(rand_r(&seed) % 5);
			while (p < BY_PAGES) {
				uint64_t len = 1 + (uint64_t)(rand_r(&seed) % 20), i;
				double r = pow(10, (rand_r(&seed) % 3001) / 1000.0);

				if (p + len > BY_PAGES)
					len = BY_PAGES - p;
				wr[nwr] = by_obs(pid, p, len, TIER_OBS_WRITTEN, 1, 2, iv_of(r));
				/* A quarter rated only at least. */
				if (rand_r(&seed) % 4 == 0)
					wr[nwr].write = TIER_OBS_AT_LEAST;
				for (i = p; i < p + len; i++) {
					wrate[pid - 1][i] = tier__obs_rate(&wr[nwr]);
					low[pid - 1][i] = wr[nwr].write != 0;
				}
				nwr++;
				p += len + (uint64_t)(rand_r(&seed) % 4);
			}
		}
		assert_true(tier__obs_sums_reset(&sums, nacc));
		tier__obs_written(acc, nacc, &sums, wr, nwr / 2, merge_sink, &g);
		tier__obs_written(acc, nacc, &sums, wr + nwr / 2, nwr - nwr / 2, merge_sink, &g);
		tier__obs_rest(acc, nacc, &sums, merge_sink, &g);
		assert_true(g.calls >= 4);	/* the regions in more than one batch */
		for (pid = 0; pid < BY_PIDS; pid++) {
			size_t i;

			for (i = 0; i < BY_PAGES; i++)
				if (fabs(g.rate[pid][i] - wrate[pid][i]) > 1e-9)
					fail_msg("round %u pid %d page %zu: written %.3f/s, handed on "
						 "%.3f/s", round, (int)pid + 1, i, wrate[pid][i],
						 g.rate[pid][i]);
		}
		for (k = 0; k < nacc; k++) {
			int q = acc[k].pid - 1;
			uint64_t i, first = acc[k].start / 4096, last = acc[k].end / 4096;
			double region = tier__obs_rate(&acc[k]) * (double)(last - first);
			double written = 0, handed = 0, want, share[2] = { -1, -1 };
			struct tier_linux_addr_obs full = acc[k];

			full.count = full.max;
			for (i = first; i < last; i++) {
				bool l = low[q][i];

				written += wrate[q][i];
				handed += g.region[q][i] + g.rate[q][i];
				/* Spread evenly over the region's pages rated at
				 * least, and over the others. */
				if (share[l] < 0)
					share[l] = g.region[q][i];
				if (fabs(g.region[q][i] - share[l]) > 1e-6 * (1 + region))
					fail_msg("round %u region %zu: page %llu (%s) gets %.3f/s, "
						 "its like %.3f/s", round, k, (unsigned long long)i,
						 l ? "at least" : "rated", g.region[q][i], share[l]);
			}
			/* Those rated at least take more, by no more than a page
			 * of the region can have read. */
			if (share[0] >= 0 && share[1] >= 0 &&
			    (share[1] < share[0] - 1e-9 ||
			     share[1] - share[0] > tier__obs_rate(&full) * (1 + 1e-3)))
				fail_msg("round %u region %zu: at least %.3f/s, rated %.3f/s", round, k,
					 share[1], share[0]);
			want = region > written ? region : written;
			if (fabs(handed - want) > 1e-3 * want + 1e-6)
				fail_msg("round %u region %zu: region %.3f, written %.3f accesses/s: "
					 "handed on %.3f, want %.3f", round, k, region, written,
					 handed, want);
		}
	}
	tier__obs_sums_free(&sums);
}

/* A region whose written pages are partly rated at least (a soft-dirty
 * picture's first bracket): what they do not explain goes to those pages
 * first, at most what a page of the region can read, and what is left to
 * all its pages. */
static void test_obs_merge_at_least(void **state)
{
	static struct merge_got g;
	struct tier_linux_addr_obs acc[2], wr[2];
	struct tier__obs_sums sums = { 0 };
	double r0, r1, top, extra, rest;
	size_t i;

	(void)state;
	memset(&g, 0, sizeof(g));
	/* [0, 100) at 5 of 20 checks (57.5/s a page); [100, 170) at 10 of
	 * 20 (138.6/s); a page of either reads at most 20 of 20 (738/s). */
	acc[0] = by_obs(1, 0, 100, TIER_OBS_ACCESSED, 5, 20, 100000);
	acc[1] = by_obs(1, 100, 70, TIER_OBS_ACCESSED, 10, 20, 100000);
	r0 = tier__obs_rate(&acc[0]);
	r1 = tier__obs_rate(&acc[1]);
	wr[0] = acc[0];
	wr[0].count = 20;
	top = tier__obs_rate(&wr[0]);
	/* 10 pages of each rated at least 35/s (standing, as the picture's
	 * pages written in the first bracket of both rounds). */
	wr[0] = by_obs(1, 40, 10, TIER_OBS_WRITTEN, 1, 2, iv_of(35));
	wr[1] = by_obs(1, 120, 10, TIER_OBS_WRITTEN, 1, 2, iv_of(35));
	wr[0].write = wr[1].write = TIER_OBS_STANDING | TIER_OBS_AT_LEAST;
	assert_true(tier__obs_sums_reset(&sums, 2));
	tier__obs_written(acc, 2, &sums, wr, 2, merge_sink, &g);
	tier__obs_rest(acc, 2, &sums, merge_sink, &g);
	/* [0, 100): 100 x 57.5 - 10 x 35 left, all to the ten pages (540/s
	 * each, under 738): the other 90 get nothing (without the rule, all
	 * 100 got 54/s). */
	extra = (r0 * 100 - 35 * 10) / 10;
	assert_true(extra < top);
	for (i = 0; i < 100; i++) {
		double want = i >= 40 && i < 50 ? extra : 0;

		if (fabs(g.region[0][i] - want) > 1e-3 * (1 + want))
			fail_msg("page %zu: %.3f/s from the region, want %.3f", i, g.region[0][i], want);
	}
	/* [100, 170): 70 x 138.6 - 350 left, more than the ten can take at
	 * 738/s each: they take that, the rest goes to all 70. */
	rest = (r1 * 70 - 35 * 10 - top * 10) / 70;
	assert_true(rest > 0);
	for (i = 100; i < 170; i++) {
		double want = rest + (i >= 120 && i < 130 ? top : 0);

		if (fabs(g.region[0][i] - want) > 1e-3 * want)
			fail_msg("page %zu: %.3f/s from the region, want %.3f", i, g.region[0][i], want);
	}
	tier__obs_sums_free(&sums);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_lines),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_idle_no_pfns),
		cmocka_unit_test(test_obs_merge),
		cmocka_unit_test(test_obs_hold),
		cmocka_unit_test(test_obs_merge_random),
		cmocka_unit_test(test_obs_merge_at_least),
		cmocka_unit_test(test_perf_decode),
		cmocka_unit_test(test_perf_event_alias),
		cmocka_unit_test(test_perf_probe),
		cmocka_unit_test(test_budget_parts),
		cmocka_unit_test(test_step_share),
		cmocka_unit_test(test_others_average),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_kernel_tiering),
		cmocka_unit_test(test_guard_take_and_give_back),
		cmocka_unit_test(test_guard_after_crash),
		cmocka_unit_test(test_guard_hint_faults),
		cmocka_unit_test(test_guard_refuses),
		cmocka_unit_test(test_guard_keeps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
