/* machine_file.c - load a tiersim machine file with libcyaml. */
#include "tiersim/machine_file.h"

#include <cyaml/cyaml.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/yaml_err.h"

/* The file's shape, as libcyaml loads it. */
struct yaml_mnode {
	char *kind;
	uint64_t latency_ns;
	uint64_t read_bw_mbps;
	uint64_t write_bw_mbps;
	uint64_t *ratio;		/* pointers: NULL when absent */
	uint64_t *size_mb;
	uint64_t *cpus;
};

struct yaml_machine {
	char *name;
	char *description;
	double *cpu_slowdown;		/* NULL when absent */
	struct yaml_mnode *nodes;
	unsigned nodes_count;
};

#define OPT_PTR (CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL)

static const cyaml_schema_field_t mnode_fields[] = {
	CYAML_FIELD_STRING_PTR("kind", CYAML_FLAG_POINTER, struct yaml_mnode, kind, 1, 31),
	CYAML_FIELD_UINT("latency_ns", CYAML_FLAG_DEFAULT, struct yaml_mnode, latency_ns),
	CYAML_FIELD_UINT("read_bw_mbps", CYAML_FLAG_DEFAULT, struct yaml_mnode, read_bw_mbps),
	CYAML_FIELD_UINT("write_bw_mbps", CYAML_FLAG_DEFAULT, struct yaml_mnode, write_bw_mbps),
	CYAML_FIELD_UINT_PTR("ratio", OPT_PTR, struct yaml_mnode, ratio),
	CYAML_FIELD_UINT_PTR("size_mb", OPT_PTR, struct yaml_mnode, size_mb),
	CYAML_FIELD_UINT_PTR("cpus", OPT_PTR, struct yaml_mnode, cpus),
	CYAML_FIELD_END
};

static const cyaml_schema_value_t mnode_schema = {
	CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, struct yaml_mnode, mnode_fields),
};

static const cyaml_schema_field_t machine_fields[] = {
	CYAML_FIELD_STRING_PTR("name", OPT_PTR, struct yaml_machine, name, 1, 63),
	CYAML_FIELD_STRING_PTR("description", OPT_PTR, struct yaml_machine, description, 0, 127),
	CYAML_FIELD_FLOAT_PTR("cpu_slowdown", OPT_PTR, struct yaml_machine, cpu_slowdown),
	CYAML_FIELD_SEQUENCE("nodes", CYAML_FLAG_POINTER, struct yaml_machine, nodes,
			     &mnode_schema, 0, CYAML_UNLIMITED),
	CYAML_FIELD_END
};

static const cyaml_schema_value_t machine_schema = {
	CYAML_VALUE_MAPPING(CYAML_FLAG_POINTER, struct yaml_machine, machine_fields),
};

/* Position of nodes[idx].field (field NULL: of the entry; idx < 0: of the
 * top-level key field, "nodes" when field is NULL), 1-based; 1:1 when not
 * found. A small walk over libyaml's
 * events: a stack of "next scalar is a key" per mapping level. */
static void locate_node(const char *yaml, size_t len, int idx, const char *field,
			unsigned *line, unsigned *column)
{
	enum { MAXD = 32 };
	bool is_map[MAXD], want_key[MAXD];
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0, nodes_depth = -1, entry = -1;
	bool next_is_nodes = false, done = false;

	*line = *column = 1;
	if (!yaml_parser_initialize(&parser))
		return;
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	while (!done && yaml_parser_parse(&parser, &ev)) {
		unsigned l = (unsigned)ev.start_mark.line + 1;
		unsigned c = (unsigned)ev.start_mark.column + 1;
		bool key = depth > 0 && is_map[depth - 1] && want_key[depth - 1];

		switch (ev.type) {
		case YAML_SCALAR_EVENT: {
			const char *v = (const char *)ev.data.scalar.value;
			size_t n = ev.data.scalar.length;

			const char *top = field ? field : "nodes";

			if (key && depth == 1 && idx < 0 && n == strlen(top) && !memcmp(v, top, n)) {
				*line = l;
				*column = c;
				done = true;
			} else if (key && depth == 1 && n == 5 && !memcmp(v, "nodes", 5)) {
				next_is_nodes = true;
			} else if (key && nodes_depth >= 0 && depth == nodes_depth + 2 &&
				   entry == idx && field && n == strlen(field) &&
				   !memcmp(v, field, n)) {
				*line = l;
				*column = c;
				done = true;
			}
			if (depth > 0 && is_map[depth - 1])
				want_key[depth - 1] = !want_key[depth - 1];
			break;
		}
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (depth == nodes_depth + 1 && nodes_depth >= 0 &&
			    ev.type == YAML_MAPPING_START_EVENT) {
				entry++;
				if (entry == idx) {
					*line = l;
					*column = c;	/* the entry, until the field is found */
					if (!field)
						done = true;
				}
			}
			if (depth == MAXD) {
				done = true;
				break;
			}
			if (next_is_nodes && ev.type == YAML_SEQUENCE_START_EVENT)
				nodes_depth = depth;
			next_is_nodes = false;
			is_map[depth] = ev.type == YAML_MAPPING_START_EVENT;
			want_key[depth] = true;
			depth++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			depth--;
			if (depth == nodes_depth)
				nodes_depth = -1, done = idx >= 0 && entry >= idx;
			if (depth > 0 && is_map[depth - 1])
				want_key[depth - 1] = !want_key[depth - 1];
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
}

struct ctx {
	const char *yaml;
	size_t len;
	const char *name;
	struct tier_err *err;
};

static int bad(const struct ctx *x, int idx, const char *field, const char *reason)
{
	unsigned line, col;

	locate_node(x->yaml, x->len, idx, field, &line, &col);
	if (idx < 0)
		return tier_err_set(x->err, -EINVAL, "%s:%u:%u: %s: %s", x->name, line, col,
				    field ? field : "nodes", reason);
	if (!field)
		return tier_err_set(x->err, -EINVAL, "%s:%u:%u: nodes[%d]: %s", x->name, line,
				    col, idx, reason);
	return tier_err_set(x->err, -EINVAL, "%s:%u:%u: nodes[%d].%s: %s", x->name, line, col,
			    idx, field, reason);
}

static int convert(const struct ctx *x, const struct yaml_machine *y,
		   struct tier_machine_file *mf)
{
	struct tier_sim_preset *p = &mf->preset;
	bool any_cpus = false;
	unsigned i;

	if (!y->nodes_count)
		return bad(x, -1, NULL, "at least one node is needed");
	if (y->nodes_count > TIER_SIM_MAX_NODES) {
		char why[64];

		snprintf(why, sizeof(why), "%u nodes, at most %d", y->nodes_count,
			 TIER_SIM_MAX_NODES);
		return bad(x, -1, NULL, why);
	}
	for (i = 0; i < y->nodes_count; i++) {
		const struct yaml_mnode *n = &y->nodes[i];
		struct tier_sim_node_spec *s = &p->nodes[i];
		int k = (int)i;

		if (!n->latency_ns)
			return bad(x, k, "latency_ns", "must be positive");
		if (n->latency_ns > 1000000)
			return bad(x, k, "latency_ns", "larger than 1 ms");
		if (!n->read_bw_mbps)
			return bad(x, k, "read_bw_mbps", "must be positive");
		if (!n->write_bw_mbps)
			return bad(x, k, "write_bw_mbps", "must be positive");
		if (n->read_bw_mbps > UINT32_MAX)
			return bad(x, k, "read_bw_mbps", "too large");
		if (n->write_bw_mbps > UINT32_MAX)
			return bad(x, k, "write_bw_mbps", "too large");
		if (n->ratio && n->size_mb)
			return bad(x, k, "size_mb", "give ratio or size_mb, not both");
		if (!n->ratio && !n->size_mb)
			return bad(x, k, NULL, "needs ratio (capacity share) or size_mb");
		if (i && !y->nodes[0].ratio != !n->ratio)
			return bad(x, k, n->ratio ? "ratio" : "size_mb",
				   "every node gives ratio, or every node gives size_mb");
		if (n->ratio && !*n->ratio)
			return bad(x, k, "ratio", "must be positive");
		if (n->ratio && *n->ratio > 1000000)
			return bad(x, k, "ratio", "too large");
		if (n->size_mb && !*n->size_mb)
			return bad(x, k, "size_mb", "must be positive");
		if (n->size_mb && *n->size_mb > (UINT64_C(1) << 30))
			return bad(x, k, "size_mb", "too large");
		if (n->cpus && *n->cpus > 64)
			return bad(x, k, "cpus", "at most 64");
		snprintf(mf->kinds[i], sizeof(mf->kinds[i]), "%s", n->kind);
		s->kind = mf->kinds[i];
		s->latency_ns = (uint32_t)n->latency_ns;
		s->read_bw_mbps = (uint32_t)n->read_bw_mbps;
		s->write_bw_mbps = (uint32_t)n->write_bw_mbps;
		s->ratio = n->ratio ? (unsigned)*n->ratio : 1;
		s->size_mb = n->size_mb ? *n->size_mb : 0;
		s->nr_cpus = n->cpus ? (int)*n->cpus : 0;
		any_cpus |= s->nr_cpus > 0;
	}
	if (!any_cpus)
		return bad(x, -1, NULL, "no node has CPUs (give one node cpus: N)");
	if (y->cpu_slowdown && !(isfinite(*y->cpu_slowdown) && *y->cpu_slowdown >= 0.01 &&
				 *y->cpu_slowdown <= 1000))
		return bad(x, -1, "cpu_slowdown", "a factor from 0.01 to 1000 (1: the cost model's CPU)");
	p->cpu_slowdown = y->cpu_slowdown ? *y->cpu_slowdown : 0;
	p->nr_nodes = y->nodes_count;
	snprintf(mf->name, sizeof(mf->name), "%s", y->name ? y->name : x->name);
	snprintf(mf->description, sizeof(mf->description), "%s",
		 y->description ? y->description : "machine file");
	p->name = mf->name;
	p->description = mf->description;
	return 0;
}

int tier_machine_file_load_string(const char *yaml, size_t len, const char *name,
				  struct tier_machine_file *mf, struct tier_err *err)
{
	struct tier_yaml_log lc = { 0 };
	cyaml_config_t cc = tier_yaml_cyaml_config(&lc);
	struct ctx x = { yaml, len, name, err };
	struct yaml_machine *y = NULL;
	cyaml_err_t cerr;
	int ret;

	memset(mf, 0, sizeof(*mf));
	cerr = cyaml_load_data((const uint8_t *)yaml, len, &cc, &machine_schema,
			       (cyaml_data_t **)&y, NULL);
	if (cerr != CYAML_OK)
		return tier_yaml_load_error(&lc, yaml, len, name, cerr, err);
	if (!y)
		return tier_err_set(err, -EINVAL, "%s: empty machine file", name);
	ret = convert(&x, y, mf);
	cyaml_free(&cc, &machine_schema, y, 0);
	if (ret)
		memset(mf, 0, sizeof(*mf));
	return ret;
}

/* Machine files are small; a larger one is a mistake. */
enum { MACHINE_MAX_BYTES = 1 << 20 };

int tier_machine_file_load(const char *path, struct tier_machine_file *mf,
			   struct tier_err *err)
{
	char *buf;
	size_t len = 0;
	FILE *f;
	int ret;

	memset(mf, 0, sizeof(*mf));
	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		return tier_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	buf = malloc(MACHINE_MAX_BYTES + 1);
	if (buf)
		len = fread(buf, 1, MACHINE_MAX_BYTES + 1, f);
	ret = !buf ? -ENOMEM : ferror(f) ? -EIO : len > MACHINE_MAX_BYTES ? -EFBIG : 0;
	fclose(f);
	if (ret) {
		free(buf);
		return tier_err_set(err, ret, "%s: %s", path,
				    ret == -EFBIG ? "larger than 1 MiB" : strerror(-ret));
	}
	ret = tier_machine_file_load_string(buf, len, path, mf, err);
	free(buf);
	return ret;
}

const char *tier_machine_file_arg(const char *arg)
{
	return arg && !strncmp(arg, "file:", 5) ? arg + 5 : NULL;
}
