/* test_config.c - the YAML configuration loader: defaults, values, and one
 * clear error line for each kind of bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/config_yaml.h"
#include "common/listen_addr.h"

static int load(const char *yaml, struct tier_config *cfg, struct tier_err *err)
{
	return tier_config_load_string(yaml, strlen(yaml), "tierd.yaml", cfg, err);
}

static void test_defaults(void **state)
{
	struct tier_config cfg;
	struct tier_err err = { "" };

	(void)state;
	assert_int_equal(load("", &cfg, &err), 0);
	assert_string_equal(cfg.sysfs_root, "/sys");
	assert_int_equal(cfg.nr_tiers, 0);
	assert_int_equal(cfg.rank_by, TIER_CONFIG_RANK_FIRMWARE);
	assert_string_equal(cfg.probe_file, "/var/lib/tierd/probe.json");
	tier_config_release(&cfg);
	assert_int_equal(load("# only a comment\n", &cfg, &err), 0);
	assert_string_equal(cfg.sysfs_root, "/sys");
	tier_config_release(&cfg);
}

static void test_values(void **state)
{
	struct tier_config cfg;
	struct tier_err err = { "" };
	struct tier_tier_override *o;
	size_t nr;

	(void)state;
	assert_int_equal(load("topology:\n"
			      "  sysfs_root: /tmp/sys\n"
			      "  tiers:\n"
			      "    - nodes: [0]\n"
			      "    - nodes: [2, 1]\n", &cfg, &err), 0);
	assert_string_equal(cfg.sysfs_root, "/tmp/sys");
	assert_int_equal(cfg.nr_tiers, 2);
	assert_int_equal(cfg.tiers[1].nr_nodes, 2);
	assert_int_equal(cfg.tiers[1].nodes[0], 2);
	assert_int_equal(tier_config_override(&cfg, &o, &nr), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(o[1].nodes[1], 1);
	free(o);
	tier_config_release(&cfg);

	/* Rank by the figures `tierctl probe` saved. */
	assert_int_equal(load("topology:\n"
			      "  rank_by: measured\n"
			      "  probe_file: /tmp/probe.json\n", &cfg, &err), 0);
	assert_int_equal(cfg.rank_by, TIER_CONFIG_RANK_MEASURED);
	assert_string_equal(cfg.probe_file, "/tmp/probe.json");
	tier_config_release(&cfg);
	assert_int_equal(load("topology:\n  rank_by: firmware\n", &cfg, &err), 0);
	assert_int_equal(cfg.rank_by, TIER_CONFIG_RANK_FIRMWARE);
	tier_config_release(&cfg);
}

static void expect_error(const char *yaml, const char *want)
{
	struct tier_config cfg;
	struct tier_err err = { "" };

	assert_int_equal(load(yaml, &cfg, &err), -EINVAL);
	if (strcmp(err.msg, want))
		fail_msg("error '%s', expected '%s'", err.msg, want);
	/* On error the defaults stand, never half a file. */
	assert_string_equal(cfg.sysfs_root, "/sys");
	assert_int_equal(cfg.nr_tiers, 0);
	tier_config_release(&cfg);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("topology:\n  sysfs_rot: /x\n",
		     "tierd.yaml:2:3: topology: unknown field 'sysfs_rot'");
	expect_error("topologie: {}\n",
		     "tierd.yaml:1:1: unknown field 'topologie'");
	expect_error("topology:\n  tiers:\n    - nodes: [0]\n    - nodes: [1, abc]\n",
		     "tierd.yaml:4:18: topology.tiers[1].nodes[1]: invalid INT value: 'abc'");
	expect_error("topology:\n  tiers: 3\n",
		     "tierd.yaml:2:10: topology.tiers: expecting SEQUENCE, got event: SCALAR");
	expect_error("topology:\n  tiers:\n    - nodes: [0, 1]\n    - nodes: [1]\n",
		     "tierd.yaml: topology.tiers[1].nodes: node 1 is already in topology.tiers[0]");
	expect_error("topology:\n  sysfs_root: relative/sys\n",
		     "tierd.yaml: topology.sysfs_root: 'relative/sys' is not an absolute path");
	expect_error("topology:\n  tiers:\n    - nodes: [-1]\n",
		     "tierd.yaml: topology.tiers[0].nodes: node -1 is negative");
	expect_error("topology:\n  rank_by: guessed\n",
		     "tierd.yaml:2:12: topology.rank_by: invalid ENUM value: guessed");
	expect_error("topology:\n  probe_file: probe.json\n",
		     "tierd.yaml: topology.probe_file: 'probe.json' is not an absolute path");
	expect_error("topology:\n  rank_by: measured\n  tiers:\n    - nodes: [0]\n",
		     "tierd.yaml: topology.rank_by: 'measured' and an operator tier list (topology.tiers) exclude each other");
}

static void test_daemon_sections(void **state)
{
	struct tier_config cfg;
	struct tier_err err = { "" };

	(void)state;
	assert_int_equal(load("", &cfg, &err), 0);
	assert_string_equal(cfg.socket_path, "/run/tierd/tierd.sock");
	assert_int_equal(cfg.interval_ms, 100);
	assert_string_equal(cfg.policy, "tierd");
	assert_string_equal(cfg.tracker, "auto");
	assert_int_equal(cfg.budget_bytes_per_s, 256u << 20);
	assert_int_equal(cfg.min_rss_bytes, 64u << 20);
	assert_int_equal(cfg.kernel_tiering, TIER_CONFIG_KT_DISABLE);
	assert_int_equal(cfg.damon_stat, TIER_CONFIG_DS_DISABLE);
	assert_string_equal(cfg.state_file, "/run/tierd/state");
	assert_int_equal(cfg.max_cpu_percent, 5);
	assert_int_equal(cfg.nice, -10);
	assert_null(cfg.metrics_addr);
	tier_config_release(&cfg);

	assert_int_equal(load("daemon:\n"
			      "  socket: /tmp/t.sock\n"
			      "  interval_ms: 250\n"
			      "  refresh_ms: 5000\n"
			      "  log_level: debug\n"
			      "  kernel_tiering: warn\n"
			      "  damon_stat: keep\n"
			      "  state_file: /var/run/t.state\n"
			      "  metrics: \"[::1]:9464\"\n"
			      "  nice: 5\n"
			      "policy:\n"
			      "  name: hemem\n"
			      "  tracker: softdirty\n"
			      "  budget_mb_per_s: 64\n"
			      "processes:\n"
			      "  pids: [10, 20]\n"
			      "  cgroups: [/sys/fs/cgroup/db, web]\n"
			      "  exe: \"*postgres*\"\n"
			      "  min_rss_mb: 16\n", &cfg, &err), 0);
	assert_string_equal(cfg.socket_path, "/tmp/t.sock");
	assert_int_equal(cfg.interval_ms, 250);
	assert_int_equal(cfg.refresh_ms, 5000);
	assert_int_equal(cfg.log_level, 7);
	assert_int_equal(cfg.kernel_tiering, TIER_CONFIG_KT_WARN);
	assert_int_equal(cfg.damon_stat, TIER_CONFIG_DS_KEEP);
	assert_string_equal(cfg.state_file, "/var/run/t.state");
	assert_string_equal(cfg.metrics_addr, "[::1]:9464");
	assert_int_equal(cfg.nice, 5);
	assert_string_equal(cfg.policy, "hemem");
	assert_string_equal(cfg.tracker, "softdirty");
	assert_int_equal(cfg.budget_bytes_per_s, 64u << 20);
	assert_int_equal(cfg.nr_pids, 2);
	assert_int_equal(cfg.pids[1], 20);
	assert_int_equal(cfg.nr_cgroups, 2);
	assert_string_equal(cfg.cgroups[1], "web");
	assert_string_equal(cfg.exe_pattern, "*postgres*");
	assert_int_equal(cfg.min_rss_bytes, 16u << 20);
	tier_config_release(&cfg);

	expect_error("daemon:\n  interval_ms: 5\n",
		     "tierd.yaml: daemon.interval_ms: 5 is outside 10..60000");
	expect_error("daemon:\n  interval_ms: 500\n  refresh_ms: 100\n",
		     "tierd.yaml: daemon.refresh_ms: 100 is outside interval_ms..3600000");
	expect_error("daemon:\n  max_cpu_percent: 0\n",
		     "tierd.yaml: daemon.max_cpu_percent: 0 is outside 1..100");
	expect_error("daemon:\n  nice: 20\n", "tierd.yaml: daemon.nice: 20 is outside -20..19");
	expect_error("daemon:\n  nice: -21\n", "tierd.yaml: daemon.nice: -21 is outside -20..19");
	expect_error("daemon:\n  log_level: loud\n",
		     "tierd.yaml:2:14: daemon.log_level: invalid ENUM value: loud");
	expect_error("daemon:\n  kernel_tiering: fight\n",
		     "tierd.yaml:2:19: daemon.kernel_tiering: invalid ENUM value: fight");
	expect_error("daemon:\n  damon_stat: off\n",
		     "tierd.yaml:2:15: daemon.damon_stat: invalid ENUM value: off");
	expect_error("daemon:\n  state_file: tierd.state\n",
		     "tierd.yaml: daemon.state_file: 'tierd.state' is not an absolute file path");
	expect_error("daemon:\n  socket: run/x.sock\n",
		     "tierd.yaml: daemon.socket: 'run/x.sock' is not an absolute path");
	expect_error("daemon:\n  metrics: localhost:9464\n",
		     "tierd.yaml: daemon.metrics: 'localhost:9464': 'localhost' is not a numeric IPv4 address (IPv6 goes in brackets)");
	expect_error("daemon:\n  metrics: 127.0.0.1:0\n",
		     "tierd.yaml: daemon.metrics: '127.0.0.1:0': the port must be a number in 1..65535");
	expect_error("policy:\n  budget_mb_per_s: 0\n",
		     "tierd.yaml: policy.budget_mb_per_s: must be positive");
	expect_error("processes:\n  pids: [1, -3]\n",
		     "tierd.yaml: processes.pids[1]: -3 is not a process id");
	expect_error("processes:\n  min_rss_mb: lots\n",
		     "tierd.yaml:2:15: processes.min_rss_mb: invalid uint64_t value: 'lots'");
}

/* "ADDR:PORT" of the metrics endpoint: what bind(2) gets, and what is
 * refused. */
static void test_listen_addr(void **state)
{
	static const char *const bad[] = {
		"", ":9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
		"127.0.0.1:94x", "127.0.0.1:-1", "127.0.0.1: 80", "256.0.0.1:80", "::1:9464",
		"[::1]", "[::1]9464", "[::1:9464", "[127.0.0.1]:80", "host.example:80",
	};
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	struct tier_err err = { "" };
	socklen_t len = 0;
	size_t i;

	(void)state;
	assert_int_equal(tier_listen_addr_parse("127.0.0.1:9464", &ss, &len, &err), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(*a4));
	assert_int_equal(ntohs(a4->sin_port), 9464);
	assert_int_equal(ntohl(a4->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(tier_listen_addr_parse("[::1]:65535", &ss, &len, &err), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(len, sizeof(*a6));
	assert_int_equal(ntohs(a6->sin6_port), 65535);
	assert_true(IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr));
	assert_int_equal(tier_listen_addr_parse("0.0.0.0:1", NULL, NULL, &err), 0);
	assert_int_equal(tier_listen_addr_parse("[::]:9464", NULL, NULL, &err), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = '\0';
		if (tier_listen_addr_parse(bad[i], NULL, NULL, &err) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_non_null(strstr(err.msg, bad[i]));
	}
}

/* A value spanning lines (a quoted YAML string folds a blank line into a
 * newline) still gives one error line: the fuzzer's config finding. */
static void test_error_one_line(void **state)
{
	struct tier_config cfg;
	struct tier_err err = { "" };

	(void)state;
	assert_int_equal(load("daemon:\n  metrics: \"[100\n\n  x]\"\n", &cfg, &err), -EINVAL);
	assert_true(strncmp(err.msg, "tierd.yaml", 10) == 0);
	assert_null(strchr(err.msg, '\n'));
	assert_non_null(strstr(err.msg, "daemon.metrics"));
	assert_non_null(strstr(err.msg, "[100?"));
	tier_config_release(&cfg);
	tier_err_set(&err, -EINVAL, "a\tb\x7f");
	tier_err_prefix(&err, "p\nq");
	assert_string_equal(err.msg, "p?q: a?b?");
}

static void test_syntax_error(void **state)
{
	struct tier_config cfg;
	struct tier_err err = { "" };

	(void)state;
	assert_int_equal(load("topology: [\n", &cfg, &err), -EINVAL);
	assert_true(strncmp(err.msg, "tierd.yaml", 10) == 0);
	assert_null(strchr(err.msg, '\n'));
	tier_config_release(&cfg);
}

static void test_file(void **state)
{
	char path[] = "/tmp/tierd-test-config-XXXXXX";
	struct tier_config cfg;
	struct tier_err err = { "" };
	int fd;
	FILE *f;

	(void)state;
	assert_int_equal(tier_config_load_file("/nonexistent/tierd.yaml", &cfg, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent/tierd.yaml: No such file or directory");
	tier_config_release(&cfg);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("topology:\n  sysfs_root: /x\n  bogus: 1\n", f);
	fclose(f);
	assert_int_equal(tier_config_load_file(path, &cfg, &err), -EINVAL);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, ":3:3: topology: unknown field 'bogus'"));
	tier_config_release(&cfg);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_daemon_sections),
		cmocka_unit_test(test_listen_addr),
		cmocka_unit_test(test_error_one_line),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
