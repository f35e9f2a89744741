/* tier.h - libtier: state memory-placement intent to tierd.
 *
 * Stable ABI: opaque types, versioned symbols (libtier.so.0), errors as
 * negative errno. Link with `pkg-config --libs tier`.
 */
#ifndef TIER_H
#define TIER_H

#ifdef __cplusplus
extern "C" {
#endif

#define TIER_VERSION_MAJOR 0
#define TIER_VERSION_MINOR 1
#define TIER_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH" (static storage). */
const char *tier_version(void);

/* A human-readable message for a negative errno returned by libtier
 * (static storage; never NULL). */
const char *tier_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif
