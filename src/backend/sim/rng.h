/* rng.h - the simulator's deterministic random numbers: xoshiro256** seeded
 * through splitmix64 (Blackman and Vigna, https://prng.di.unimi.it/).
 * Same seed, same sequence on every machine; state lives in the caller's
 * context, never in a global. */
#ifndef TIER_SIM_RNG_H
#define TIER_SIM_RNG_H

#include <stdint.h>

struct tier_rng {
	uint64_t s[4];
};

static inline uint64_t tier_rng_splitmix(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline void tier_rng_seed(struct tier_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = tier_rng_splitmix(&x);
}

static inline uint64_t tier_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t tier_rng_next(struct tier_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = tier_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = tier_rng_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n) by multiply-shift (Lemire); bias below 2^-32 for the
 * ranges a simulation uses. */
static inline uint64_t tier_rng_below(struct tier_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)tier_rng_next(r) * n) >> 64);
}

/* Uniform double in [0, 1). */
static inline double tier_rng_double(struct tier_rng *r)
{
	return (double)(tier_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
