/* main.c - tierd, the tiering daemon: parse the command line, build the
 * context, hand it to the core. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend/linux/kernel_guard.h"
#include "backend/linux/topology.h"
#include "backend/sim/machine.h"
#include "common/listen_addr.h"
#include "common/topology_config.h"
#include "common/topology_out.h"
#include "core/policy.h"
#include "tierd/daemon.h"
#include "version.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tierd [--config FILE] [--foreground] [--socket PATH] [--machine sim:PRESET]\n"
		"             [--workload W] [--metrics ADDR:PORT] [--check] [--restore]\n"
		"  --config FILE         configuration (default " TIERD_DEFAULT_CONFIG
		"; none: built-in defaults)\n"
		"  --foreground          stay in the foreground, log to stderr\n"
		"  --socket PATH         control socket (default: daemon.socket, "
		TIER_CONFIG_DEFAULT_SOCKET ")\n"
		"  --machine sim:PRESET  run against a simulated machine (see tiersim list)\n"
		"  --workload W          the simulated machine's workload (default gups-hotset)\n"
		"  --metrics ADDR:PORT   serve Prometheus metrics at http://ADDR:PORT/metrics\n"
		"                        (default: daemon.metrics, none), e.g. 127.0.0.1:9464\n"
		"  --check               load the configuration, discover the tiers, print\n"
		"                        them and exit (0 when both are valid)\n"
		"  --restore             put back the kernel settings a tierd that did not\n"
		"                        exit cleanly left changed (daemon.state_file), stop\n"
		"                        the kdamond it left running, and exit (the systemd\n"
		"                        unit's ExecStopPost)\n"
		"  --version             print the version (and the commit built) and exit\n");
}

static int parse_args(int argc, char **argv, struct tierd_args *a)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "socket", required_argument, NULL, 's' },
		{ "machine", required_argument, NULL, 'm' },
		{ "check", no_argument, NULL, 'k' },
		{ "workload", required_argument, NULL, 'w' },
		{ "restore", no_argument, NULL, 'r' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->config = TIERD_DEFAULT_CONFIG;
	a->socket = NULL;
	a->workload = "gups-hotset";
	while ((c = getopt_long(argc, argv, "c:fs:m:kw:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->config = optarg;
			a->config_given = true;
			break;
		case 'f':
			a->foreground = true;
			break;
		case 's':
			a->socket = optarg;
			break;
		case 'm':
			if (strncmp(optarg, "sim:", 4) || !optarg[4]) {
				fprintf(stderr, "tierd: --machine '%s': expected sim:PRESET\n", optarg);
				return 2;
			}
			a->machine = optarg;
			break;
		case 'k':
			a->check = true;
			break;
		case 'w':
			a->workload = optarg;
			break;
		case 'r':
			a->restore = true;
			break;
		case 'M': {
			struct tier_err err = { "" };

			if (tier_listen_addr_parse(optarg, NULL, NULL, &err)) {
				fprintf(stderr, "tierd: --metrics %s\n", err.msg);
				return 2;
			}
			a->metrics = optarg;
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("tierd %s\n", TIER_BUILD_VERSION);
			exit(0);
		default:	/* getopt said what */
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tierd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	/* What daemon.socket must be (core/config.c), checked as early. */
	if (a->socket && a->socket[0] != '/') {
		fprintf(stderr, "tierd: --socket '%s': not an absolute path\n", a->socket);
		return 2;
	}
	if (a->socket && strlen(a->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, "tierd: --socket: longer than %zu bytes\n",
			sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return 2;
	}
	if (a->restore && (a->check || a->machine)) {
		fprintf(stderr, "tierd: --restore acts on this host alone; it takes neither "
				"--check nor --machine\n");
		return 2;
	}
	return 0;
}

/* The tiers this configuration gives (--check): the machine the daemon
 * would run on, ranked as the configuration asks, exactly as the daemon's
 * world ranks it. */
static int discover(const struct tierd_args *a, const struct tier_config *cfg,
		    struct tier_topology *topo, struct tier_err *err)
{
	struct tier_linux_topology lt = { .sysfs_root = cfg->sysfs_root };
	struct tier_sim_machine sm;
	int ret;

	if (!a->machine)
		return tier_config_topology_discover(cfg, &tier_linux_topology_ops, &lt, topo, err);
	ret = tier_sim_machine_init(&sm, a->machine + 4, NULL, TIER_SIM_UNIT_BYTES_DEFAULT, err);
	return ret ? ret : tier_config_topology_discover(cfg, &tier_sim_topology_ops, &sm, topo,
							 err);
}

/* The configured control groups' shares, one line each. */
static void print_cgroup_rules(const struct tier_config *cfg)
{
	size_t i;
	int r;

	if (cfg->nr_cgroup_rules)
		printf("\ncontrol groups:\n");
	for (i = 0; i < cfg->nr_cgroup_rules; i++) {
		const struct tier_config_cgroup *c = &cfg->cgroup_rules[i];
		char buf[32];

		printf("  %s:", c->path);
		for (r = 0; r < TIER_GROUP_RANKS; r++) {
			if (c->rule.max[r].kind) {
				tier_amount_format(&c->rule.max[r], buf, sizeof(buf));
				printf(" tier-max %d=%s", r, buf);
			}
			if (c->rule.min[r].kind) {
				tier_amount_format(&c->rule.min[r], buf, sizeof(buf));
				printf(" tier-min %d=%s", r, buf);
			}
		}
		if (c->rule.weight)
			printf(" weight %u", c->rule.weight);
		printf("\n");
	}
}

static void restore_say(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "tierd: %s\n", msg);
}

/* --restore: what a tierd that died left changed in the kernel goes back. */
static int restore(const struct tier_config *cfg)
{
	struct tier_linux_ctx ctx = { .sysfs_root = cfg->sysfs_root, .procfs_root = "/proc",
				      .debugfs_root = "/sys/kernel/debug" };
	struct tier_err err = { "" };
	bool found;

	if (tier_linux_guard_restore_leftovers(&ctx, cfg->state_file, restore_say, NULL, &found,
					       &err)) {
		fprintf(stderr, "tierd: --restore: %s\n", err.msg);
		return 1;
	}
	if (!found)
		fprintf(stderr, "tierd: --restore: nothing to put back (no %s)\n", cfg->state_file);
	return 0;
}

int main(int argc, char **argv)
{
	struct tierd_args args;
	struct tier_config cfg;
	struct tier_topology topo;
	struct tier_err err = { "" };
	int ret;

	ret = parse_args(argc, argv, &args);
	if (ret)
		return ret;
	ret = tierd_config_load(&args, &cfg, &err);
	if (ret) {
		fprintf(stderr, "tierd: %s\n", err.msg[0] ? err.msg : strerror(-ret));
		tier_config_release(&cfg);	/* the defaults it holds on error */
		return 1;
	}
	if (args.restore) {
		ret = restore(&cfg);
		tier_config_release(&cfg);
		return ret;
	}
	if (args.check) {
		/* What the daemon's start refuses, --check refuses too. */
		if (!tier_policy_find(cfg.policy)) {
			fprintf(stderr, "tierd: %s: policy.name: unknown policy '%s'\n", args.config,
				cfg.policy);
			tier_config_release(&cfg);
			return 1;
		}
		ret = discover(&args, &cfg, &topo, &err);
		if (ret) {
			fprintf(stderr, "tierd: %s\n", err.msg[0] ? err.msg : strerror(-ret));
			tier_config_release(&cfg);
			return 1;
		}
		printf("configuration: %s\n",
		       args.config_given || access(args.config, F_OK) == 0 ? args.config
									  : "built-in defaults");
		printf("machine: %s\n\n", args.machine ? args.machine : "this host");
		tier_topology_print(&topo, stdout);
		print_cgroup_rules(&cfg);
		tier_topology_release(&topo);
		tier_config_release(&cfg);
		return 0;
	}
	return tierd_run(&args, &cfg);
}
