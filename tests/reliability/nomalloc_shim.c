/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD shim: libc's allocator and every lock or blocking wait made
 * fatal for chosen threads. A thread that called letw_test_nomalloc(1)
 * aborts, with a message naming the function ("nomalloc: FN called from a
 * publishing thread after warm-up"), the moment it enters:
 *
 * - malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
 *   memalign, valloc or pvalloc: every entry into glibc's allocator and
 *   its arena locks;
 * - a lock or a blocking wait: pthread_mutex_{lock,timedlock,clocklock,
 *   trylock}, pthread_rwlock_{rd,wr}lock with their timed, clock and try
 *   forms, pthread_spin_{lock,trylock}, sem_{wait,timedwait,clockwait,
 *   trywait}, pthread_cond_{wait,timedwait,clockwait}, C11's mtx_{lock,
 *   timedlock,trylock} and cnd_{wait,timedwait};
 * - syscall(SYS_futex) with a waiting or locking op (FUTEX_WAIT,
 *   FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI, FUTEX_LOCK_PI, FUTEX_LOCK_PI2,
 *   FUTEX_TRYLOCK_PI) and syscall(SYS_futex_waitv): liburcu and lttng-ust
 *   make their futex calls through libc's syscall(), which a preload can
 *   interpose. FUTEX_WAKE and the other waking ops stay allowed: a
 *   publisher wakes liburcu's call_rcu thread that way (a non-blocking
 *   syscall, no lock).
 *
 * The publish, unpublish and stub paths promise no lock of any kind
 * (README, "How the store, the table and the walker stay out of the
 * runtime's way"): a publisher preempted while holding one stalls every
 * other publisher and the control thread, which is the #128401 deadlock
 * family this library exists to avoid. An audit showed a mutex taken only
 * between publishing threads went unnoticed by the malloc-only shim.
 *
 * The try forms are fatal too. A trylock never sleeps, but the contract is
 * "no lock of any kind", not "no sleeping": a publisher that wins a
 * trylock holds a lock that another thread's plain lock (the control
 * thread's, a non-publishing caller's) then sleeps on while the winner is
 * preempted, and a trylock retried until it succeeds is a spin lock.
 * Nothing in the publish path has a reason to call one.
 *
 * What this cannot see: glibc's own locks (stdio, the allocator's arenas,
 * the dynamic linker, an internal pthread_mutex_lock from inside libc)
 * take them through hidden internal aliases and inline futex syscalls
 * (INTERNAL_SYSCALL, no PLT), so a preload never gets the call; a
 * lock-free hand-rolled spin loop on an atomic is invisible too. The
 * allocator half covers the libc lock a publish is most likely to reach.
 * Unlocks are not trapped: an armed thread can only unlock what it locked,
 * which was trapped.
 *
 * Other threads run the real functions: the allocator through glibc's
 * __libc_* entry points, the rest through the next definition
 * (dlsym(RTLD_NEXT)), resolved before a thread is armed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static __thread int armed;

static void resolve_all(void);

__attribute__((visibility("default"))) void letw_test_nomalloc(int on)
{
	/* Resolve the real functions now, unarmed: dlsym on an armed
	 * thread would run the dynamic linker's lookup on the hot path. */
	if (on)
		resolve_all();
	armed = on;
}

static void trip(const char *fn)
{
	static const char pre[] = "nomalloc: ";
	static const char post[] = " called from a publishing thread after warm-up\n";

	armed = 0;
	(void)!write(2, pre, sizeof(pre) - 1);
	(void)!write(2, fn, strlen(fn));
	(void)!write(2, post, sizeof(post) - 1);
	abort();
}

#define GUARD(fn) do { if (__builtin_expect(armed, 0)) trip(fn); } while (0)

void *malloc(size_t n)
{
	GUARD("malloc");
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	GUARD("calloc");
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	GUARD("realloc");
	return __libc_realloc(p, n);
}

void free(void *p)
{
	GUARD("free");
	__libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	GUARD("posix_memalign");
	if (!(p = __libc_memalign(align, n)))
		return 12; /* ENOMEM */
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	GUARD("aligned_alloc");
	return __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n)
{
	GUARD("memalign");
	return __libc_memalign(align, n);
}

void *valloc(size_t n)
{
	GUARD("valloc");
	return __libc_valloc(n);
}

void *pvalloc(size_t n)
{
	GUARD("pvalloc");
	return __libc_pvalloc(n);
}

/*
 * Locks and waits. Each real function is looked up once with
 * dlsym(RTLD_NEXT) (a relaxed atomic pointer: threads racing to resolve
 * store the same value). pthread_cond_wait and _timedwait have two
 * versions in glibc and an unversioned dlsym may return the old
 * (GLIBC_2.2.5, pre-NPTL layout) one, which would corrupt the callers'
 * condition variables: they are looked up at the current version first.
 */
#define REAL_LOOKUP(name, lookup)                                                  \
	static __typeof__(&name) real_##name(void)                                 \
	{                                                                          \
		static __typeof__(&name) p;                                        \
		__typeof__(&name) r = __atomic_load_n(&p, __ATOMIC_RELAXED);       \
                                                                                   \
		if (!r) {                                                          \
			*(void **)&r = lookup;                                     \
			if (!r)                                                    \
				*(void **)&r = dlsym(RTLD_NEXT, #name);            \
			if (!r)                                                    \
				trip("(unresolved) " #name);                       \
			__atomic_store_n(&p, r, __ATOMIC_RELAXED);                 \
		}                                                                  \
		return r;                                                          \
	}
#define REAL(name) REAL_LOOKUP(name, NULL)
#define REAL_VER(name, ver) REAL_LOOKUP(name, dlvsym(RTLD_NEXT, #name, ver))

/* The current pthread_cond_* version on the ports where an older one
 * exists (x86_64, i386, ppc, s390, ...); elsewhere only one exists and
 * dlsym finds it. */
#define COND_VER "GLIBC_2.3.2"

REAL(pthread_mutex_lock)
REAL(pthread_mutex_timedlock)
REAL(pthread_mutex_clocklock)
REAL(pthread_mutex_trylock)
REAL(pthread_rwlock_rdlock)
REAL(pthread_rwlock_wrlock)
REAL(pthread_rwlock_timedrdlock)
REAL(pthread_rwlock_timedwrlock)
REAL(pthread_rwlock_clockrdlock)
REAL(pthread_rwlock_clockwrlock)
REAL(pthread_rwlock_tryrdlock)
REAL(pthread_rwlock_trywrlock)
REAL(pthread_spin_lock)
REAL(pthread_spin_trylock)
REAL(sem_wait)
REAL(sem_timedwait)
REAL(sem_clockwait)
REAL(sem_trywait)
REAL_VER(pthread_cond_wait, COND_VER)
REAL_VER(pthread_cond_timedwait, COND_VER)
REAL(pthread_cond_clockwait)
REAL(mtx_lock)
REAL(mtx_timedlock)
REAL(mtx_trylock)
REAL(cnd_wait)
REAL(cnd_timedwait)
REAL(syscall)

static void resolve_all(void)
{
	(void)real_pthread_mutex_lock();
	(void)real_pthread_mutex_timedlock();
	(void)real_pthread_mutex_clocklock();
	(void)real_pthread_mutex_trylock();
	(void)real_pthread_rwlock_rdlock();
	(void)real_pthread_rwlock_wrlock();
	(void)real_pthread_rwlock_timedrdlock();
	(void)real_pthread_rwlock_timedwrlock();
	(void)real_pthread_rwlock_clockrdlock();
	(void)real_pthread_rwlock_clockwrlock();
	(void)real_pthread_rwlock_tryrdlock();
	(void)real_pthread_rwlock_trywrlock();
	(void)real_pthread_spin_lock();
	(void)real_pthread_spin_trylock();
	(void)real_sem_wait();
	(void)real_sem_timedwait();
	(void)real_sem_clockwait();
	(void)real_sem_trywait();
	(void)real_pthread_cond_wait();
	(void)real_pthread_cond_timedwait();
	(void)real_pthread_cond_clockwait();
	(void)real_mtx_lock();
	(void)real_mtx_timedlock();
	(void)real_mtx_trylock();
	(void)real_cnd_wait();
	(void)real_cnd_timedwait();
	(void)real_syscall();
}

__attribute__((constructor)) static void resolve_at_load(void)
{
	resolve_all();
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	GUARD("pthread_mutex_lock");
	return real_pthread_mutex_lock()(m);
}

int pthread_mutex_timedlock(pthread_mutex_t *restrict m, const struct timespec *restrict t)
{
	GUARD("pthread_mutex_timedlock");
	return real_pthread_mutex_timedlock()(m, t);
}

int pthread_mutex_clocklock(pthread_mutex_t *restrict m, clockid_t c,
			    const struct timespec *restrict t)
{
	GUARD("pthread_mutex_clocklock");
	return real_pthread_mutex_clocklock()(m, c, t);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	GUARD("pthread_mutex_trylock");
	return real_pthread_mutex_trylock()(m);
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	GUARD("pthread_rwlock_rdlock");
	return real_pthread_rwlock_rdlock()(l);
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	GUARD("pthread_rwlock_wrlock");
	return real_pthread_rwlock_wrlock()(l);
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *restrict l, const struct timespec *restrict t)
{
	GUARD("pthread_rwlock_timedrdlock");
	return real_pthread_rwlock_timedrdlock()(l, t);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *restrict l, const struct timespec *restrict t)
{
	GUARD("pthread_rwlock_timedwrlock");
	return real_pthread_rwlock_timedwrlock()(l, t);
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t *restrict l, clockid_t c,
			       const struct timespec *restrict t)
{
	GUARD("pthread_rwlock_clockrdlock");
	return real_pthread_rwlock_clockrdlock()(l, c, t);
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *restrict l, clockid_t c,
			       const struct timespec *restrict t)
{
	GUARD("pthread_rwlock_clockwrlock");
	return real_pthread_rwlock_clockwrlock()(l, c, t);
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	GUARD("pthread_rwlock_tryrdlock");
	return real_pthread_rwlock_tryrdlock()(l);
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	GUARD("pthread_rwlock_trywrlock");
	return real_pthread_rwlock_trywrlock()(l);
}

int pthread_spin_lock(pthread_spinlock_t *l)
{
	GUARD("pthread_spin_lock");
	return real_pthread_spin_lock()(l);
}

int pthread_spin_trylock(pthread_spinlock_t *l)
{
	GUARD("pthread_spin_trylock");
	return real_pthread_spin_trylock()(l);
}

int sem_wait(sem_t *s)
{
	GUARD("sem_wait");
	return real_sem_wait()(s);
}

int sem_timedwait(sem_t *restrict s, const struct timespec *restrict t)
{
	GUARD("sem_timedwait");
	return real_sem_timedwait()(s, t);
}

int sem_clockwait(sem_t *restrict s, clockid_t c, const struct timespec *restrict t)
{
	GUARD("sem_clockwait");
	return real_sem_clockwait()(s, c, t);
}

int sem_trywait(sem_t *s)
{
	GUARD("sem_trywait");
	return real_sem_trywait()(s);
}

int pthread_cond_wait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m)
{
	GUARD("pthread_cond_wait");
	return real_pthread_cond_wait()(c, m);
}

int pthread_cond_timedwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
			   const struct timespec *restrict t)
{
	GUARD("pthread_cond_timedwait");
	return real_pthread_cond_timedwait()(c, m, t);
}

int pthread_cond_clockwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
			   clockid_t k, const struct timespec *restrict t)
{
	GUARD("pthread_cond_clockwait");
	return real_pthread_cond_clockwait()(c, m, k, t);
}

int mtx_lock(mtx_t *m)
{
	GUARD("mtx_lock");
	return real_mtx_lock()(m);
}

int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict t)
{
	GUARD("mtx_timedlock");
	return real_mtx_timedlock()(m, t);
}

int mtx_trylock(mtx_t *m)
{
	GUARD("mtx_trylock");
	return real_mtx_trylock()(m);
}

int cnd_wait(cnd_t *c, mtx_t *m)
{
	GUARD("cnd_wait");
	return real_cnd_wait()(c, m);
}

int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict t)
{
	GUARD("cnd_timedwait");
	return real_cnd_timedwait()(c, m, t);
}

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#ifndef FUTEX_CMD_MASK
#define FUTEX_CMD_MASK ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)
#endif

/* Which futex ops sleep or take a lock; NULL for the waking ones. */
static const char *futex_blocking_op(long op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT: return "syscall(SYS_futex, FUTEX_WAIT)";
	case FUTEX_WAIT_BITSET: return "syscall(SYS_futex, FUTEX_WAIT_BITSET)";
	case FUTEX_WAIT_REQUEUE_PI: return "syscall(SYS_futex, FUTEX_WAIT_REQUEUE_PI)";
	case FUTEX_LOCK_PI: return "syscall(SYS_futex, FUTEX_LOCK_PI)";
	case FUTEX_LOCK_PI2: return "syscall(SYS_futex, FUTEX_LOCK_PI2)";
	case FUTEX_TRYLOCK_PI: return "syscall(SYS_futex, FUTEX_TRYLOCK_PI)";
	default: return NULL;
	}
}

/*
 * syscall() is variadic: the six argument registers are passed on
 * unchanged (reading unpassed ones as long is what every syscall()
 * wrapper does; on the supported ABIs they are just registers).
 */
long syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (__builtin_expect(armed, 0)) {
		const char *what = NULL;

		if (nr == SYS_futex)
			what = futex_blocking_op(a[1]);
#ifdef SYS_futex_waitv
		else if (nr == SYS_futex_waitv)
			what = "syscall(SYS_futex_waitv)";
#endif
		if (what)
			trip(what);
	}
	return real_syscall()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
