/* driver.c - runs a libFuzzer-style target without libFuzzer, for gcc builds.
 *
 * Replays every file of the seed corpus (the directories or files given, or
 * the built-in corpus directory) through LLVMFuzzerTestOneInput, and with
 * each seed a fixed set of mutants: every truncation of its first 256 bytes
 * and single-byte changes (bit flips, 0x00, 0xff, 0x80) at each of its first
 * 256 offsets. Inputs that the fuzzing campaign added (scripts/fuzz:
 * named by libFuzzer, 40 hex digits of their SHA-1) are replayed as they
 * are: libFuzzer has been all around them, and there are hundreds. Prints
 * TAP, one line per seed; a broken invariant aborts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MUTATE_BYTES = 256 };

static int nr_tests;

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	*data = malloc((size_t)n + 1);
	if (!*data || fread(*data, 1, (size_t)n, f) != (size_t)n) {
		free(*data);
		fclose(f);
		return -1;
	}
	fclose(f);
	*size = (size_t)n;
	return 0;
}

static void run_mutants(uint8_t *data, size_t size)
{
	static const uint8_t values[] = { 0x00, 0xff, 0x80, 0x7f };
	size_t i, lim = size < MUTATE_BYTES ? size : MUTATE_BYTES;
	unsigned bit, v;
	uint8_t keep;

	for (i = 0; i < lim; i++)
		LLVMFuzzerTestOneInput(data, i);
	for (i = 0; i < lim; i++) {
		keep = data[i];
		for (bit = 0; bit < 8; bit++) {
			data[i] = (uint8_t)(keep ^ (1u << bit));
			LLVMFuzzerTestOneInput(data, size);
		}
		for (v = 0; v < sizeof(values); v++) {
			data[i] = values[v];
			LLVMFuzzerTestOneInput(data, size);
		}
		data[i] = keep;
	}
}

/* A name libFuzzer gave: the input's SHA-1 in hex. */
static int from_campaign(const char *path)
{
	const char *name = strrchr(path, '/');
	size_t i;

	name = name ? name + 1 : path;
	for (i = 0; name[i]; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return i == 40;
}

static int run_file(const char *path)
{
	int mutate = !from_campaign(path);
	uint8_t *data;
	size_t size;

	if (load(path, &data, &size)) {
		printf("not ok %d - %s: cannot read\n", ++nr_tests, path);
		return 1;
	}
	LLVMFuzzerTestOneInput(data, size);
	if (mutate)
		run_mutants(data, size);
	free(data);
	printf("ok %d - %s%s\n", ++nr_tests, path, mutate ? " and its mutants" : "");
	return 0;
}

static int run_dir(const char *dir)
{
	char **names = NULL, path[4096];
	size_t nr = 0, i;
	struct dirent *e;
	int failed = 0;
	DIR *d = opendir(dir);

	if (!d)
		return run_file(dir);
	while ((e = readdir(d))) {
		char **grown;

		if (e->d_name[0] == '.')
			continue;
		grown = realloc(names, (nr + 1) * sizeof(*names));
		if (!grown || !(grown[nr] = strdup(e->d_name))) {
			free(grown ? grown : names);
			closedir(d);
			printf("not ok %d - %s: out of memory\n", ++nr_tests, dir);
			return 1;
		}
		names = grown;
		nr++;
	}
	closedir(d);
	qsort(names, nr, sizeof(*names), cmp_names);
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		failed |= run_file(path);
		free(names[i]);
	}
	free(names);
	if (!nr)
		printf("not ok %d - %s: empty corpus\n", ++nr_tests, dir), failed = 1;
	return failed;
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	if (argc < 2)
		failed = run_dir(TIERD_FUZZ_CORPUS);
	for (i = 1; i < argc; i++)
		failed |= run_dir(argv[i]);
	printf("1..%d\n", nr_tests);
	return failed;
}
