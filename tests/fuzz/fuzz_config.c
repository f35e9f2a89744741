/* fuzz_config.c - fuzz target of the configuration loader: any file gives
 * a valid configuration or one error line naming where, never a crash or
 * leak; on error the defaults stand. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/config_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tier_config cfg;
	struct tier_err err = { "" };
	int ret = tier_config_load_string((const char *)data, size, "fuzz.yaml", &cfg, &err);

	if (ret) {
		if (strncmp(err.msg, "fuzz.yaml", 9) || strchr(err.msg, '\n'))
			abort();
		if (!cfg.policy || strcmp(cfg.policy, "tierd") || cfg.nr_tiers)
			abort();	/* defaults stand */
	} else if (tier_config_validate(&cfg, &err)) {
		abort();	/* accepted means valid */
	}
	tier_config_release(&cfg);
	return 0;
}
