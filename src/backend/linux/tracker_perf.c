/* tracker_perf.c - hardware memory-access sampling through
 * perf_event_open(2): Intel PEBS load-latency samples (the cpu PMU's
 * "mem-loads" event, MEM_TRANS_RETIRED.LOAD_LATENCY: event 0xcd umask 0x1
 * with an ldlat threshold in config1), or AMD IBS op samples (the ibs_op
 * PMU, which samples loads and stores alike).
 *
 * Each sample carries (PERF_SAMPLE_TID | ADDR | PERIOD | WEIGHT | DATA_SRC)
 * the process, the data address, the period (accesses one sample stands
 * for), the load latency, and where the data came from; it becomes one
 * SAMPLE observation of the 4 KiB page at the address, count = the
 * period, write = DATA_SRC's mem_op says store.
 *
 * Intel events are opened per thread of each target, and for threads
 * created later at a collect a second or more after the last look (an
 * event that inherits cannot be mapped). IBS cannot count per task, so there one event
 * per CPU samples everything and the decoder keeps the targets' samples.
 *
 * Ring buffer (struct perf_event_mmap_page): records between data_tail
 * (ours) and data_head (the kernel's), positions counting bytes forever;
 * the data area is a power of two, so a record may wrap around its end.
 * tier__perf_decode() is the pure decoder the unit tests drive.
 *
 * Virtual machines without a virtual PMU (the test guest under TCG, and
 * these development machines) have neither PMU: probe() says so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/linux/sysfs.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define PERF_SAMPLE_PERIOD_DEFAULT	10007u	/* prime: no lockstep with loops */
#define PERF_IBS_PERIOD_DEFAULT		0x10000u
#define PERF_DATA_PAGES			16u	/* per ring; a power of two */
#define PERF_LDLAT_DEFAULT		3u

/* ---- decoding ----------------------------------------------------------- */

#define PERF_SAMPLE_SUPPORTED                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |   \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT |                     \
	 PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR)

bool tier__perf_sample_type_ok(uint64_t sample_type)
{
	/* WEIGHT and WEIGHT_STRUCT are the same u64 and exclusive. */
	if ((sample_type & PERF_SAMPLE_WEIGHT) && (sample_type & PERF_SAMPLE_WEIGHT_STRUCT))
		return false;
	return !(sample_type & ~(uint64_t)PERF_SAMPLE_SUPPORTED);
}

bool tier__perf_data_src_is_store(uint64_t data_src)
{
	return (data_src & 0x1f) & PERF_MEM_OP_STORE;	/* mem_op: bits 0-4 */
}

/* Copies len bytes at ring position pos (wrapping) into out. */
static void ring_copy(const uint8_t *data, size_t data_sz, uint64_t pos, void *out, size_t len)
{
	size_t off = (size_t)(pos & (data_sz - 1)), first = data_sz - off;

	if (first >= len) {
		memcpy(out, data + off, len);
	} else {
		memcpy(out, data + off, first);
		memcpy((uint8_t *)out + first, data, len - first);
	}
}

struct reader {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static uint64_t rd64(struct reader *r)
{
	uint64_t v = 0;

	if (r->left < 8) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, 8);
	r->p += 8;
	r->left -= 8;
	return v;
}

static void skip(struct reader *r, size_t n)
{
	if (r->left < n) {
		r->bad = true;
		return;
	}
	r->p += n;
	r->left -= n;
}

static bool decode_sample(const uint8_t *body, size_t len, uint64_t st,
			  struct tier__perf_sample *s)
{
	struct reader r = { .p = body, .left = len, .bad = false };
	uint64_t v;

	memset(s, 0, sizeof(*s));
	if (st & PERF_SAMPLE_IDENTIFIER)
		rd64(&r);
	if (st & PERF_SAMPLE_IP)
		rd64(&r);
	if (st & PERF_SAMPLE_TID) {
		v = rd64(&r);
		s->pid = (uint32_t)v;		/* u32 pid, u32 tid (little endian) */
		s->tid = (uint32_t)(v >> 32);
	}
	if (st & PERF_SAMPLE_TIME)
		s->time = rd64(&r);
	if (st & PERF_SAMPLE_ADDR)
		s->addr = rd64(&r);
	if (st & PERF_SAMPLE_ID)
		rd64(&r);
	if (st & PERF_SAMPLE_STREAM_ID)
		rd64(&r);
	if (st & PERF_SAMPLE_CPU)
		rd64(&r);
	if (st & PERF_SAMPLE_PERIOD)
		s->period = rd64(&r);
	if (st & PERF_SAMPLE_RAW) {
		uint32_t size = 0;

		/* u32 size, then size bytes; the two end u64-aligned. */
		if (r.left < 4)
			return false;
		memcpy(&size, r.p, 4);
		skip(&r, 4);
		skip(&r, size);
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		v = rd64(&r);
		/* WEIGHT_STRUCT: the latency is var1_dw, the low 32 bits. */
		s->weight = (st & PERF_SAMPLE_WEIGHT_STRUCT) ? (uint32_t)v : v;
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		s->data_src = rd64(&r);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		rd64(&r);
	return !r.bad;
}

uint64_t tier__perf_decode(const uint8_t *data, size_t data_sz, uint64_t tail,
			   uint64_t head, uint64_t sample_type,
			   void (*fn)(void *ctx, const struct tier__perf_sample *s), void *ctx,
			   struct tier__perf_stats *st)
{
	uint8_t buf[1u << 16];		/* a record is at most 64 KiB (u16 size) */

	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		struct tier__perf_sample s;

		ring_copy(data, data_sz, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > data_sz) {
			/* Garbage: nothing after it can be trusted. */
			st->bad++;
			return head;
		}
		if (head - tail < h.size)
			break;		/* incomplete: the kernel is still writing */
		ring_copy(data, data_sz, tail, buf, h.size);
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			if (decode_sample(buf + sizeof(h), h.size - sizeof(h), sample_type, &s)) {
				st->samples++;
				if (fn)
					fn(ctx, &s);
			} else {
				st->bad++;
			}
			break;
		case PERF_RECORD_LOST: {
			uint64_t lost;

			/* { header; u64 id; u64 lost; sample_id } */
			if (h.size >= sizeof(h) + 16) {
				memcpy(&lost, buf + sizeof(h) + 8, 8);
				st->lost += lost;
			} else {
				st->bad++;
			}
			break;
		}
		default:
			st->other++;
			break;
		}
		tail += h.size;
	}
	return tail;
}

int tier__perf_parse_event(const char *alias, uint64_t *config, uint64_t *config1)
{
	char buf[256], *tok, *save = NULL;
	uint64_t event = 0, umask = 0, ldlat = 0;
	bool has_event = false;

	if (strlen(alias) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, alias);
	buf[strcspn(buf, "\n")] = '\0';
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		unsigned long long v;

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		errno = 0;
		v = strtoull(eq + 1, &end, 0);
		if (errno || end == eq + 1 || *end)
			return -EINVAL;
		if (!strcmp(tok, "event")) {
			event = v;
			has_event = true;
		} else if (!strcmp(tok, "umask")) {
			umask = v;
		} else if (!strcmp(tok, "ldlat")) {
			ldlat = v;
		} else {
			return -EINVAL;	/* a term this decoder does not know */
		}
	}
	if (!has_event || event > 0xff || umask > 0xff || ldlat > 0xffff)
		return -EINVAL;
	*config = event | umask << 8;
	*config1 = ldlat ? ldlat : PERF_LDLAT_DEFAULT;
	return 0;
}

/* ---- the PMU ------------------------------------------------------------ */

enum perf_pmu_kind { PMU_INTEL_MEM_LOADS, PMU_AMD_IBS_OP };

struct pmu_choice {
	enum perf_pmu_kind kind;
	uint32_t type;
	uint64_t config, config1;
};

static int pmu_find(const struct tier_linux_ctx *ctx, struct pmu_choice *pc,
		    struct tier_err *err)
{
	char path[512], buf[256];
	uint64_t type;
	int ret;

	memset(pc, 0, sizeof(*pc));
	tier_sysfs_path(path, sizeof(path), ctx->sysfs_root,
			"bus/event_source/devices/cpu/events/mem-loads");
	if (tier_sysfs_exists(path)) {
		ret = tier__read_line(path, buf, sizeof(buf), err);
		if (!ret && tier__perf_parse_event(buf, &pc->config, &pc->config1))
			ret = tier_err_set(err, -EINVAL, "perf: %s: cannot parse '%s'", path, buf);
		if (!ret) {
			tier_sysfs_path(path, sizeof(path), ctx->sysfs_root,
					"bus/event_source/devices/cpu/type");
			ret = tier_sysfs_read_u64(path, &type, err);
		}
		if (ret)
			return ret;
		pc->kind = PMU_INTEL_MEM_LOADS;
		pc->type = (uint32_t)type;
		return 0;
	}
	tier_sysfs_path(path, sizeof(path), ctx->sysfs_root, "bus/event_source/devices/ibs_op/type");
	if (tier_sysfs_exists(path)) {
		ret = tier_sysfs_read_u64(path, &type, err);
		if (ret)
			return ret;
		pc->kind = PMU_AMD_IBS_OP;
		pc->type = (uint32_t)type;
		return 0;
	}
	tier_sysfs_path(path, sizeof(path), ctx->sysfs_root, "bus/event_source/devices");
	return tier_err_set(err, -ENODEV,
			    "perf: no PMU with memory-access samples (neither "
			    "cpu/events/mem-loads nor ibs_op under %s; virtual machines "
			    "usually expose none)", path);
}

static int perf_probe(const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	struct pmu_choice pc;

	return pmu_find(ctx, &pc, err);
}

/* ---- rings ---------------------------------------------------------------- */

long tier__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			   unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

void tier__perf_rings_close(struct tier__perf_rings *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++) {
		if (rs->v[i].base)
			munmap(rs->v[i].base, rs->v[i].map_sz);
		close(rs->v[i].fd);
	}
	rs->n = 0;
	rs->bytes = 0;
}

/* Closes ring i; the last takes its place. */
static void ring_drop(struct tier__perf_rings *rs, size_t i)
{
	size_t page_sz = (size_t)sysconf(_SC_PAGESIZE);

	munmap(rs->v[i].base, rs->v[i].map_sz);
	close(rs->v[i].fd);
	rs->bytes -= rs->v[i].data_pages * page_sz;
	rs->v[i] = rs->v[--rs->n];
}

void tier__perf_rings_free(struct tier__perf_rings *rs)
{
	tier__perf_rings_close(rs);
	free(rs->v);
	rs->v = NULL;
	rs->cap = 0;
}

int tier__perf_ring_open(struct tier__perf_rings *rs, struct perf_event_attr *attr, pid_t tid,
			 int cpu, struct tier_err *err)
{
	size_t page_sz = (size_t)sysconf(_SC_PAGESIZE);
	struct tier__perf_ring r;
	long fd;
	int ret;

	fd = tier__perf_event_open(attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return tier_err_set(err, ret, "perf: perf_event_open(pid %d, cpu %d): %s%s",
				    (int)tid, cpu, strerror(-ret),
				    ret == -EACCES || ret == -EPERM ?
				    " (needs CAP_PERFMON or kernel.perf_event_paranoid <= 1)" : "");
	}
	r.fd = (int)fd;
	r.data_pages = rs->data_pages;
	while (rs->max_bytes && r.data_pages > TIER__PERF_MIN_PAGES &&
	       rs->bytes + r.data_pages * page_sz > rs->max_bytes)
		r.data_pages /= 2;
	r.map_sz = (1 + r.data_pages) * page_sz;
	r.base = mmap(NULL, r.map_sz, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	if (r.base == MAP_FAILED) {
		ret = -errno;
		close(r.fd);
		return tier_err_set(err, ret, "perf: mmap of the sample buffer: %s",
				    strerror(-ret));
	}
	if (rs->n == rs->cap) {
		size_t c = rs->cap ? rs->cap * 2 : 16;
		struct tier__perf_ring *g = realloc(rs->v, c * sizeof(*g));

		if (!g) {
			munmap(r.base, r.map_sz);
			close(r.fd);
			return tier_err_set(err, -ENOMEM, "perf: out of memory");
		}
		rs->v = g;
		rs->cap = c;
	}
	r.tid = tid;
	r.seen = true;
	rs->v[rs->n++] = r;
	rs->bytes += r.data_pages * page_sz;
	return 0;
}

int tier__perf_open_threads(struct tier__perf_rings *rs, const char *procfs_root, pid_t pid,
			    struct perf_event_attr *attr, struct tier_err *err)
{
	char path[512];
	struct dirent *de;
	DIR *d;
	int ret = 0, opened = 0;

	tier_sysfs_path(path, sizeof(path), procfs_root, "%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		size_t k;

		if (*end || tid <= 0)
			continue;
		for (k = 0; k < rs->n && rs->v[k].tid != (pid_t)tid; k++)
			;
		if (k < rs->n) {
			rs->v[k].seen = true;
			opened++;	/* followed already */
			continue;
		}
		ret = tier__perf_ring_open(rs, attr, (pid_t)tid, -1, err);
		if (ret == -ESRCH) {
			tier_err_clear(err);
			ret = 0;	/* the thread exited */
			continue;
		}
		if (ret)
			break;
		opened++;
	}
	closedir(d);
	if (!ret && !opened)
		ret = -ESRCH;
	return ret;
}

int tier__perf_follow_threads(struct tier__perf_rings *rs, const char *procfs_root,
			      const pid_t *pids, size_t n, struct perf_event_attr *attr,
			      uint64_t *last_us, struct tier_err *err)
{
	uint64_t now = tier_linux_now_us();
	size_t i;
	int ret;

	if (*last_us && now < *last_us + TIER__PERF_THREADS_US)
		return 0;
	*last_us = now;
	for (i = 0; i < rs->n; i++)
		rs->v[i].seen = rs->v[i].tid <= 0;	/* a CPU's stays */
	for (i = 0; i < n; i++) {
		ret = tier__perf_open_threads(rs, procfs_root, pids[i], attr, err);
		if (ret == -ESRCH) {
			tier_err_clear(err);
			continue;
		}
		if (ret)
			return ret;	/* not every thread listed: none closed */
	}
	for (i = 0; i < rs->n;)
		if (rs->v[i].seen)
			i++;
		else
			ring_drop(rs, i);
	return 0;
}

void tier__perf_rings_read(struct tier__perf_rings *rs, uint64_t sample_type,
			   void (*fn)(void *ctx, const struct tier__perf_sample *s), void *ctx,
			   struct tier__perf_stats *st)
{
	size_t page_sz = (size_t)sysconf(_SC_PAGESIZE), i;

	for (i = 0; i < rs->n; i++) {
		struct perf_event_mmap_page *mp = rs->v[i].base;
		const uint8_t *data = (const uint8_t *)mp + page_sz;
		uint64_t head, tail;

		head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
		tail = mp->data_tail;
		tail = tier__perf_decode(data, rs->v[i].data_pages * page_sz, tail, head, sample_type, fn,
					 ctx, st);
		__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	}
}

/* ---- events ------------------------------------------------------------- */

struct perf_tracker {
	struct tier__roots roots;
	struct pmu_choice pmu;
	uint64_t sample_type;
	uint64_t period;
	pid_t *pids;
	size_t nr_pids;
	struct tier__perf_rings rings;
	struct tier__perf_stats stats;
	uint64_t threads_us;		/* the last look for new threads */
};

/* The event, per thread or per CPU. */
static void event_attr(const struct perf_tracker *t, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = t->pmu.type;
	attr->config = t->pmu.config;
	attr->config1 = t->pmu.config1;
	attr->sample_period = t->period;
	attr->sample_type = t->sample_type;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	/* PEBS needs a precise event; IBS is precise by nature. */
	attr->precise_ip = t->pmu.kind == PMU_INTEL_MEM_LOADS ? 2 : 0;
}

static void perf_destroy(void *priv)
{
	struct perf_tracker *t = priv;

	if (!t)
		return;
	tier__perf_rings_free(&t->rings);
	free(t->pids);
	tier__roots_release(&t->roots);
	free(t);
}

static int perf_create(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
		       struct tier_err *err)
{
	struct perf_tracker *t;
	long ncpu, cpu;
	int ret;

	(void)interval_us;
	*priv = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return tier_err_set(err, -ENOMEM, "perf: out of memory");
	ret = pmu_find(ctx, &t->pmu, err);
	if (ret)
		goto out;
	if (tier__roots_init(&t->roots, ctx)) {
		ret = tier_err_set(err, -ENOMEM, "perf: out of memory");
		goto out;
	}
	t->rings.data_pages = PERF_DATA_PAGES;
	t->rings.max_bytes = TIER__PERF_RINGS_MAX_BYTES;
	t->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
	t->period = t->pmu.kind == PMU_AMD_IBS_OP ? PERF_IBS_PERIOD_DEFAULT :
		    PERF_SAMPLE_PERIOD_DEFAULT;
	if (t->pmu.kind == PMU_AMD_IBS_OP) {
		/* IBS samples system-wide per CPU. */
		ncpu = sysconf(_SC_NPROCESSORS_CONF);
		for (cpu = 0; cpu < ncpu; cpu++) {
			struct perf_event_attr attr;

			event_attr(t, &attr);
			ret = tier__perf_ring_open(&t->rings, &attr, -1, (int)cpu, err);
			if (ret)
				goto out;
		}
	}
	*priv = t;
	return 0;
out:
	perf_destroy(t);
	return ret;
}

static int perf_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct perf_tracker *t = priv;
	struct perf_event_attr attr;
	pid_t *v = NULL;

	if (n) {
		v = malloc(n * sizeof(*v));
		if (!v)
			return tier_err_set(err, -ENOMEM, "perf: out of memory");
		memcpy(v, pids, n * sizeof(*v));
	}
	free(t->pids);
	t->pids = v;
	t->nr_pids = n;
	if (t->pmu.kind == PMU_AMD_IBS_OP)
		return 0;	/* per-CPU events; samples are filtered */
	tier__perf_rings_close(&t->rings);
	event_attr(t, &attr);
	t->threads_us = 0;	/* every thread now */
	return tier__perf_follow_threads(&t->rings, t->roots.ctx.procfs_root, pids, n, &attr,
					 &t->threads_us, err);
}

struct perf_collect {
	struct perf_tracker *t;
	struct tier__obs_batch *b;
};

static void perf_sample(void *arg, const struct tier__perf_sample *s)
{
	struct perf_collect *c = arg;
	struct tier_linux_addr_obs o;
	size_t i;

	if (!s->addr)
		return;		/* no data address (IBS: not a memory op) */
	for (i = 0; i < c->t->nr_pids && c->t->pids[i] != (pid_t)s->pid; i++)
		;
	if (i == c->t->nr_pids)
		return;
	memset(&o, 0, sizeof(o));
	o.pid = (pid_t)s->pid;
	o.start = s->addr & ~4095ull;
	o.end = o.start + 4096;
	o.kind = TIER_OBS_SAMPLE;
	o.write = tier__perf_data_src_is_store(s->data_src);
	o.count = (uint32_t)(s->period ? s->period : c->t->period);
	tier__batch_add(c->b, &o);
}

static int perf_collect(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err)
{
	struct perf_tracker *t = priv;
	struct perf_collect c;

	c.t = t;
	c.b = malloc(sizeof(*c.b));
	if (!c.b)
		return tier_err_set(err, -ENOMEM, "perf: out of memory");
	tier__batch_init(c.b, sink, ctx);
	tier__perf_rings_read(&t->rings, t->sample_type, perf_sample, &c, &t->stats);
	tier__batch_flush(c.b);
	free(c.b);
	if (t->pmu.kind != PMU_AMD_IBS_OP) {
		struct perf_event_attr attr;

		event_attr(t, &attr);
		return tier__perf_follow_threads(&t->rings, t->roots.ctx.procfs_root, t->pids,
						 t->nr_pids, &attr, &t->threads_us, err);
	}
	return 0;
}

const struct tier_linux_tracker_ops tier__linux_tracker_perf = {
	.name = "perf",
	.kinds = TIER_OBS_SAMPLE,
	.probe = perf_probe,
	.create = perf_create,
	.destroy = perf_destroy,
	.set_targets = perf_set_targets,
	.collect = perf_collect,
};
