/* libtier.c - libtier's public entry points (see include/tier.h). */
#include "tier.h"

#include <string.h>

#define TIER_API __attribute__((visibility("default")))

TIER_API const char *tier_version(void)
{
	return "0.1.0";
}

TIER_API const char *tier_strerror(int err)
{
	if (err >= 0)
		return "success";
	return strerror(-err);
}
