/* tierctl.h - verbs of the tierctl command line. Each takes the arguments
 * after the verb (argv[0] is the verb) and returns the exit status:
 * 0 success, 1 failure (one line on stderr), 2 usage error. */
#ifndef TIERCTL_H
#define TIERCTL_H

#include <getopt.h>
#include <stdint.h>

#define TIERCTL_DEFAULT_CONFIG "/etc/tierd/tierd.yaml"

int tierctl_topology(int argc, char **argv);
int tierctl_probe(int argc, char **argv);
int tierctl_status(int argc, char **argv);
int tierctl_top(int argc, char **argv);

/* A member of a JSON object: 0, 0.0 or "?" when it is missing. */
uint64_t tierctl_json_u64(struct json_object *o, const char *k);
double tierctl_json_dbl(struct json_object *o, const char *k);
const char *tierctl_json_str(struct json_object *o, const char *k);
int tierctl_reload(int argc, char **argv);
int tierctl_hint(int argc, char **argv);
int tierctl_cgroup(int argc, char **argv);
int tierctl_explain(int argc, char **argv);
int tierctl_heatmap(int argc, char **argv);
int tierctl_history(int argc, char **argv);
int tierctl_device(int argc, char **argv);
int tierctl_node(int argc, char **argv);

/* top.c: the full-screen view of `tierctl top` on a terminal, refreshed
 * every interval_ms, until q, a signal, or iterations refreshes (< 0: no
 * end). Returns the exit status: 0, or 1 when tierd does not answer (one
 * line on stderr, the terminal put back). Dies of SIGINT and SIGTERM after
 * putting the terminal back. */
int tierctl_top_screen(const char *socket, int interval_ms, long iterations);

/* The verbs' getopt_long tables, also behind --help's verb list and the
 * completion script (main.c). cgroup show and explain share one. */
extern const struct option tierctl_topology_opts[];
extern const struct option tierctl_probe_opts[];
extern const struct option tierctl_status_opts[];
extern const struct option tierctl_top_opts[];
extern const struct option tierctl_history_opts[];
extern const struct option tierctl_reload_opts[];
extern const struct option tierctl_hint_opts[];
extern const struct option tierctl_cgroup_set_opts[];
extern const struct option tierctl_socket_json_opts[];
extern const struct option tierctl_heatmap_opts[];
extern const struct option tierctl_device_list_opts[];
extern const struct option tierctl_device_online_opts[];
extern const struct option tierctl_node_drain_opts[];

struct json_object;

/* The daemon's socket: $TIERD_SOCKET, else the default. */
const char *tierctl_socket(void);

/* Prints o as pretty JSON and a newline on stdout. */
void tierctl_print_json(struct json_object *o);

/* Parses a size with an optional K/M/G/T suffix (powers of 1024) or a
 * 0x-prefixed hex number. Returns 0 or -EINVAL. */
int tierctl_parse_size(const char *s, uint64_t *out);

#endif
