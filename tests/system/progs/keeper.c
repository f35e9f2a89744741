/* keeper - a workload whose data must survive migrations, for the guest
 * system tests (tests/system/devices.sh).
 *
 *   keeper MIB
 *     maps MIB MiB of anonymous memory, fills it with a seeded pattern,
 *     prints
 *       keeper pid=P range=0xA-0xB sum=S
 *       ready
 *     and then, each time it gets SIGUSR1, reads every byte again and
 *     prints "sum=S ok" when it matches (else "sum=S BAD"); exits on
 *     SIGTERM. The pages are only read after the fill: they stay cold.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile sig_atomic_t check;

static void on_usr1(int sig)
{
	(void)sig;
	check = 1;
}

static uint64_t sum_of(const uint64_t *w, size_t n)
{
	uint64_t s = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		s = (s ^ w[i]) * 1099511628211ull;
	return s;
}

int main(int argc, char **argv)
{
	size_t len, n, i;
	uint64_t *w, x = 88172645463325252ull, sum, now;
	sigset_t mask, old;

	if (argc != 2 || atol(argv[1]) <= 0) {
		fprintf(stderr, "usage: keeper MIB\n");
		return 2;
	}
	len = (size_t)atol(argv[1]) << 20;
	n = len / sizeof(*w);
	w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED) {
		perror("keeper: mmap");
		return 1;
	}
	madvise(w, len, MADV_NOHUGEPAGE);
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
	sum = sum_of(w, n);
	signal(SIGUSR1, on_usr1);
	printf("keeper pid=%d range=%p-%p sum=%016llx\nready\n", (int)getpid(), (void *)w,
	       (void *)((char *)w + len), (unsigned long long)sum);
	fflush(stdout);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	for (;;) {
		sigprocmask(SIG_BLOCK, &mask, &old);
		while (!check)
			sigsuspend(&old);
		check = 0;
		sigprocmask(SIG_SETMASK, &old, NULL);
		now = sum_of(w, n);
		printf("sum=%016llx %s\n", (unsigned long long)now, now == sum ? "ok" : "BAD");
		fflush(stdout);
	}
}
