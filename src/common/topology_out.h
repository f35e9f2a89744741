/* topology_out.h - the topology as JSON (json-c) and as a readable table.
 *
 * The JSON shape is part of the command-line contract (tierctl topology --json):
 * {"nodes":[{"id","cpus","mem_total_bytes","mem_free_bytes","distance",
 *            "hmat":{...}|null,"kernel_tier":N|null}],
 *  "tiers":[{"rank","nodes"}], "rank_source":"kernel|hmat|slit|config|measured|none"}
 */
#ifndef TIER_COMMON_TOPOLOGY_OUT_H
#define TIER_COMMON_TOPOLOGY_OUT_H

#include <json-c/json.h>
#include <stdio.h>

#include "core/topology.h"

/* A new JSON object (caller puts it with json_object_put), NULL on ENOMEM. */
struct json_object *tier_topology_to_json(const struct tier_topology *topo);

/* Prints the node table and the tiers to out. */
void tier_topology_print(const struct tier_topology *topo, FILE *out);

/* Formats a byte count as "512 MiB" / "1.5 GiB" into buf. */
const char *tier_format_bytes(unsigned long long bytes, char *buf, size_t sz);

#endif
