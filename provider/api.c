/* SPDX-License-Identifier: MIT */
/*
 * The embedding API (include/lttng-etw/lttng-etw.h).
 *
 * Hot paths (publish/unpublish): validate and build the record off any
 * lock, then inside one urcu_bp read-side section find the table, link or
 * unlink, and fire the load/unload tracepoint while the record is
 * guaranteed alive. Nothing here waits: no mutex, no grace period, no I/O.
 * (urcu-bp registers a thread on its first read lock, taking liburcu's
 * registry mutex once per thread; liburcu holds it only for bounded
 * registry updates, never while waiting on a reader, so it cannot make a
 * publisher wait for our walker.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include "abi.h"
#include "emit.h"
#include "icache.h"
#include "internal.h"
#include "jitdump_mark.h"
#include "log.h"
#include "record.h"
#include "statedump.h"

#ifdef LETW_PV_MAJOR /* the build's one version (CMakeLists.txt) */
_Static_assert(LETW_VERSION_MAJOR == LETW_PV_MAJOR && LETW_VERSION_MINOR == LETW_PV_MINOR,
	       "lttng-etw.h's LETW_VERSION_* and the project version differ");
#endif

struct letw_state letw_g = {
	.wake_fd = -1,
	.listen_fd = -1,
	.pass_lock = PTHREAD_MUTEX_INITIALIZER,
	.req_lock = PTHREAD_MUTEX_INITIALIZER,
	.req_cond = PTHREAD_COND_INITIALIZER,
};

/* Serialises letw_init, letw_shutdown, letw_capture_state's request and
 * the exit handler (bounded wait) against each other; never taken by the
 * control thread, the fork hooks or a publish path. Taken under it: hook_lock and
 * req_lock (starting and stopping the control thread, queueing a
 * capture-state) and the wait for the control thread's join; neither the
 * control thread nor any holder of those takes lifecycle_lock, so no
 * cycle. letw_capture_state waits for its pass after releasing it. */
static pthread_mutex_t lifecycle_lock = PTHREAD_MUTEX_INITIALIZER;

/* Fork child: the parent's holder of lifecycle_lock is gone. Most often
 * a letw_capture_state queueing its request (a few stores): the state it
 * guards is whole then. A fork in the middle of the parent's letw_init or
 * letw_shutdown is the caller's mistake (fork.c: the hooks assume neither
 * runs), but the child at least does not find the lock held forever. */
void letw_lifecycle_fork_child(void)
{
	pthread_mutex_init(&lifecycle_lock, NULL);
}

#define DEFAULT_POLL_MS 5u

/*
 * A process may exit() while the control thread is in a pass. exit() runs
 * atexit handlers first and ELF destructors after — among them our
 * tracepoint definitions' (tp.c), which unhook lttng-ust under a running
 * pass. So the first letw_init registers this handler: it stops the pass
 * (the walker checks `stopping`) and joins the thread, bounded, since a
 * pass may be stuck in a blocking channel nobody consumes any more.
 */
#define EXIT_JOIN_MS 2000

static void stop_at_exit(void)
{
	struct timespec until;
	int locked;

	/* Joining the parent's control thread from a child crashed the
	 * child's exit (glibc had reclaimed that thread's stack, lttng-ust's
	 * destructor then faulted in pthread_cancel), and the wake-up went
	 * into the parent's eventfd. Nothing of ours runs here to stop. */
	if (letw_forked_without_hooks())
		return;

	/* Under lifecycle_lock when it can be had soon: a runtime thread in
	 * letw_capture_state then never writes its wake-up into the eventfd
	 * this closes (the lock's other holders, init and shutdown, are done
	 * in well under the bound unless a pass is stuck, and the exit goes
	 * on without it then, as it did before). */
	letw_deadline_after(CLOCK_REALTIME, &until, EXIT_JOIN_MS);
	locked = !pthread_mutex_timedlock(&lifecycle_lock, &until);
	if (letw_control_stop_timed(EXIT_JOIN_MS) == -ETIMEDOUT)
		letw_warn("exit: the control thread is stuck in a pass; "
			  "tracing may fault during exit");
	if (locked)
		pthread_mutex_unlock(&lifecycle_lock);
}

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void register_exit_handler(void)
{
	(void)atexit(stop_at_exit);
}

static uint32_t poll_period(const struct letw_config *cfg)
{
	const char *env = getenv("LETW_POLL_MS");

	if (env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);

		if (!*end && v >= 1 && v <= 10000)
			return (uint32_t)v;
		/* Worded like LETW_STATEDUMP_WAIT_MS's (statedump.c): a bad
		 * value was ignored without a word. */
		letw_warn("LETW_POLL_MS=%s ignored (1..10000 ms)", env);
	}
	if (cfg && cfg->poll_period_ms)
		return cfg->poll_period_ms;
	return DEFAULT_POLL_MS;
}

LETW_API int letw_init(const struct letw_config *cfg)
{
	uint64_t expected = 0, max_records = 0;
	struct letw_table *t;
	int ret;

	/* From a control callback: a letw_shutdown holding lifecycle_lock
	 * would join this thread while it waits for the lock. From a log
	 * callback: init itself may be the caller, holding it. */
	if (letw_reentry_refused())
		return -EDEADLK;
	if (cfg && letw_abi_tail(cfg, sizeof(*cfg), cfg->size))
		return -E2BIG;
	if (cfg && (cfg->size < offsetof(struct letw_config, log_ctx) + sizeof(void *) ||
		    (cfg->poll_period_ms > 10000) ||
		    (cfg->flags & ~(LETW_CONFIG_NO_CONTROL_THREAD |
				    LETW_CONFIG_NO_CONTROL_SOCKET |
				    LETW_CONFIG_JITDUMP))))
		return -EINVAL;
	/* The inherited table is initialised, and lifecycle_lock may be
	 * held for ever (see letw_forked_without_hooks). With the parent's
	 * table shut down, a new one would run on the parent's liburcu
	 * call_rcu state, whose worker is not here: the child's
	 * letw_shutdown then waited for it for ever (an audit: 7 of 8). */
	if (letw_forked_without_hooks())
		return CMM_LOAD_SHARED(letw_g.table) ? -EALREADY : -ESRCH;
	pthread_mutex_lock(&lifecycle_lock);
	if (letw_g.table) {
		pthread_mutex_unlock(&lifecycle_lock);
		return -EALREADY;
	}
	/* A callback set with letw_set_log_fn before init stays, unless the
	 * config names one: init's own messages (LETW_DISABLE...) reach it. */
	if (cfg && cfg->log_fn)
		letw_log_init(cfg->log_fn, cfg->log_ctx);
	else
		letw_log_env();
	/* "Counters since letw_init": a second init starts them again (pass
	 * ids are not counters: they keep growing, the analysis wants them
	 * unique in a process). */
	uatomic_set(&letw_g.passes, 0);
	uatomic_set(&letw_g.passes_failed, 0);
	uatomic_set(&letw_g.rundown_emitted, 0);
	uatomic_set(&letw_g.last_pass_emitted, 0);
	uatomic_set(&letw_g.last_pass_bytes, 0);
	uatomic_set(&letw_g.rundown_skipped, 0);
	uatomic_set(&letw_g.last_pass_max_section_ns, 0);
	uatomic_set(&letw_g.max_section_ns, 0);
	uatomic_set(&letw_g.last_pass_sections, 0);
	uatomic_set(&letw_g.last_pass_max_section_start_ns, 0);
	letw_g.instance_id = cfg ? cfg->instance_id : 0;
	letw_g.flags = cfg ? cfg->flags : 0;
	letw_g.poll_ms = poll_period(cfg);
	if (cfg && cfg->size >= offsetof(struct letw_config, max_records) + sizeof(uint64_t)) {
		expected = cfg->expected_records;
		max_records = cfg->max_records;
	}
	t = letw_table_new(expected, max_records);
	if (!t) {
		pthread_mutex_unlock(&lifecycle_lock);
		return -ENOMEM;
	}
	/* Atomic: every hot path's table_enter reads it, outside init's
	 * lock, to finish a thread's setup (thread_ready). */
	__atomic_store_n(&letw_g.tracing, letw_probe_load(), __ATOMIC_RELAXED);
	if (letw_g.tracing)
		letw_tp_keep_at_exit();
	letw_copy_code_set_pid();
	letw_jitdump_mark_init(cfg);
	__atomic_store_n(&letw_g.owner_pid, getpid(), __ATOMIC_RELAXED);
	/* Publish the table last: a publisher that sees it sees it whole. */
	rcu_assign_pointer(letw_g.table, t);
	{
		pthread_once(&exit_once, register_exit_handler);
		ret = letw_control_start();
		if (ret) {
			/* The hook it connected first goes too: letw_shutdown,
			 * which would disconnect it, answers -ESHUTDOWN after a
			 * failed init, and left connected it queued requests
			 * nobody serves (and outlived an unloaded library). */
			letw_hook_stop();
			rcu_assign_pointer(letw_g.table, NULL);
			urcu_bp_synchronize_rcu();
			letw_table_destroy(t);
			pthread_mutex_unlock(&lifecycle_lock);
			return ret;
		}
	}
	pthread_mutex_unlock(&lifecycle_lock);
	return 0;
}

LETW_API int letw_shutdown(void)
{
	struct letw_table *t;

	/* From a control callback on the control thread: it would join
	 * itself, then free the table under its own feet. From a log callback
	 * on any thread: init or shutdown may be the caller, holding
	 * lifecycle_lock. */
	if (letw_reentry_refused())
		return -EDEADLK;
	/* A child forked without letw_fork_child: liburcu's call_rcu state
	 * and our control thread are the parent's, and tearing the table
	 * down would wait on them for ever; so may the lifecycle lock, held
	 * by a parent thread at the fork. Checked before it. */
	if (letw_forked_without_hooks())
		return -ESRCH;
	pthread_mutex_lock(&lifecycle_lock);
	t = letw_g.table;
	if (!t) {
		pthread_mutex_unlock(&lifecycle_lock);
		return -ESHUTDOWN;
	}
	letw_control_stop();
	rcu_assign_pointer(letw_g.table, NULL);
	/* Publishers still inside their read-side section finish with the
	 * old table; later ones see NULL and get -ESHUTDOWN. */
	urcu_bp_synchronize_rcu();
	letw_table_destroy(t);
	pthread_mutex_unlock(&lifecycle_lock);
	return 0;
}

LETW_API int letw_set_log_fn(letw_log_fn fn, void *ctx)
{
	letw_log_set(fn, ctx);
	return 0;
}

LETW_API int letw_set_control_fn(letw_control_fn fn, void *ctx)
{
	/* From the control callback, on the control thread, which holds
	 * pass_lock for the dispatch: taking it again would hang. */
	if (letw_on_control_thread())
		return -EDEADLK;
	/* No control thread runs in such a child to dispatch to the pair,
	 * and a pass running in the parent at the fork left pass_lock held
	 * here for ever. */
	if (letw_forked_without_hooks()) {
		letw_g.control_fn = fn;
		letw_g.control_ctx = ctx;
		return 0;
	}
	/* Taken so the pair never changes in the middle of a dispatch. */
	pthread_mutex_lock(&letw_g.pass_lock);
	letw_g.control_fn = fn;
	letw_g.control_ctx = ctx;
	pthread_mutex_unlock(&letw_g.pass_lock);
	return 0;
}

LETW_API int letw_tracing_available(void)
{
	/* The probe stays loaded after letw_shutdown; events do not. */
	return rcu_dereference(letw_g.table) && __atomic_load_n(&letw_g.tracing, __ATOMIC_RELAXED);
}

/*
 * Enter the read-side section every hot path runs in and return the live
 * table, or leave it again and return NULL outside init..shutdown.
 * letw_shutdown unpublishes the table and then waits for a grace period,
 * so the table returned stays valid until table_exit.
 */
/*
 * A thread's first call: its TLS (ours — global-dynamic, allocated by glibc
 * on first access when this library was dlopen()ed, e.g. as a JVM agent —
 * and lttng-ust's, see emit.c) is allocated here, once, rather than on
 * some later publish when a session starts. The same first call registers
 * the thread with liburcu (urcu-bp) and sets its intern cache's pthread
 * key (no allocation while the process has fewer than 32 keys: glibc's
 * first-level array is in the thread descriptor).
 */
/* 0: nothing done; 1: done with tracing off; 2: done with tracing on. A
 * thread whose first call came while tracing was off (before letw_init:
 * answered -ESHUTDOWN) gets its lttng-ust part at its first call with
 * tracing on: thread_ready <= letw_g.tracing (0 or 1) says one is due.
 * Done only once, the first event of a session that starts later would
 * allocate lttng-ust's TLS on the publish path. */
static __thread int thread_ready;

static void thread_init(void)
{
	if (!thread_ready) {
		/* Its intern cache's references go back at thread exit.
		 * Failing (no key left), they go back when the table is
		 * destroyed. */
		(void)letw_icache_thread_init();
		thread_ready = 1;
	}
	if (__atomic_load_n(&letw_g.tracing, __ATOMIC_RELAXED)) {
		letw_emit_thread_init(letw_ust_init_thread);
		thread_ready = 2;
	}
}

static struct letw_table *table_enter(void)
{
	struct letw_table *t;

	if (__builtin_expect(thread_ready <= __atomic_load_n(&letw_g.tracing, __ATOMIC_RELAXED), 0))
		thread_init();
	urcu_bp_read_lock();
	t = rcu_dereference(letw_g.table);
	if (!t)
		urcu_bp_read_unlock();
	return t;
}

static void table_exit(void)
{
	urcu_bp_read_unlock();
}

/*
 * Build the tracepoint payload from the slot (the record as published) and
 * fire the load or unload event. Still inside the read-side section: the
 * slot, its name and its context cannot be freed under us.
 */
static void emit_slot(struct letw_table *t, int unload, const struct letw_slot *s,
		      uint32_t st, const struct letw_ext *ext, int code_readable)
{
	uint16_t inst = letw_g.instance_id;

	if (!letw_emit_wanted(unload, letw_st_kind(st), ext != NULL, code_readable))
		return;
	switch (letw_st_kind(st)) {
	case LETW_SLOT_METHOD: {
		struct letw_tp_method m;
		char name[LETW_REC_NAME_BUF]; /* the name, terminated (names.h) */

		letw_rec_tp_method(t, s, st, inst, name, &m);
		letw_emit_method(unload, &m);
		if (!unload)
			letw_emit_method_extras_load(&m, ext ? &ext->lines : NULL,
						     code_readable);
		break;
	}
	case LETW_SLOT_STUB: {
		struct letw_tp_stub sb;

		letw_rec_tp_stub(t, s, inst, &sb);
		letw_emit_stub(unload, &sb);
		break;
	}
	default: {
		struct letw_tp_module md;

		letw_rec_tp_module(t, s, inst, &md);
		letw_emit_module(unload, &md);
		break;
	}
	}
}

/* code_readable: the caller vouched (LETW_METHOD_OPT_CODE_READABLE) that
 * the method's code is mapped and readable for the whole call. */
static int publish_slot(struct letw_table *t, struct letw_slot *s, struct letw_ext *ext,
			int code_readable)
{
	int ret = letw_slot_kind_is_module(s) ? letw_table_module_insert(t, s) :
						letw_table_insert(t, s, ext);

	if (!ret)
		emit_slot(t, 0, s, letw_slot_state(s), ext, code_readable);
	return ret;
}

static int unpublish(uint64_t key, int kind)
{
	struct letw_table *t = table_enter();
	struct letw_slot *s;
	int ret;

	if (!t)
		return -ESHUTDOWN;
	ret = kind == LETW_SLOT_MODULE ? letw_table_module_remove(t, key, &s) :
					 letw_table_remove(t, key, kind, &s);
	if (!ret) {
		/* The unload carries the record's fields as they were: emit
		 * before retiring, which reuses `version` as the link. */
		emit_slot(t, 1, s, letw_slot_state(s), NULL, 0);
		letw_table_retire(t, s);
	}
	table_exit();
	return ret;
}

LETW_API int letw_method_publish(const struct letw_method *method)
{
	return letw_method_publish_opts(method, NULL);
}

LETW_API int letw_method_publish_opts(const struct letw_method *method,
				      const struct letw_method_opts *opts)
{
	struct letw_table *t = table_enter();
	struct letw_slot *s;
	struct letw_ext *ext;
	int ret;

	if (!t)
		return -ESHUTDOWN;
	ret = letw_rec_method(t, method, opts, &s, &ext);
	if (!ret)
		ret = publish_slot(t, s, ext,
				   !!(letw_method_opts_flags(opts) &
				      LETW_METHOD_OPT_CODE_READABLE));
	/* For this thread's next publish, while the runtime does other
	 * work: the slot the free list now offers (a hint, store.h; rec_method
	 * issues it again, in case the head moved meanwhile). */
	letw_store_slot_prefetch(&t->store);
	table_exit();
	return ret;
}

LETW_API int letw_method_unpublish(uint64_t code_start)
{
	return unpublish(code_start, LETW_SLOT_METHOD);
}

LETW_API int letw_stub_publish(const struct letw_stub *stub)
{
	struct letw_table *t = table_enter();
	struct letw_slot *s;
	int ret;

	if (!t)
		return -ESHUTDOWN;
	ret = letw_rec_stub(t, stub, &s);
	if (!ret)
		ret = publish_slot(t, s, NULL, 0);
	table_exit();
	return ret;
}

LETW_API int letw_stub_unpublish(uint64_t start)
{
	return unpublish(start, LETW_SLOT_STUB);
}

LETW_API int letw_module_publish(const struct letw_module *module)
{
	struct letw_table *t = table_enter();
	struct letw_slot *s;
	int ret;

	if (!t)
		return -ESHUTDOWN;
	ret = letw_rec_module(t, module, &s);
	if (!ret)
		ret = publish_slot(t, s, NULL, 0);
	table_exit();
	return ret;
}

LETW_API int letw_module_unpublish(uint64_t module_id)
{
	return unpublish(module_id, LETW_SLOT_MODULE);
}

LETW_API int letw_capture_state(uint64_t match_any_keyword, int wait)
{
	uint64_t seq, one = 1;
	int ret;

	/* Before lifecycle_lock: a control callback's letw_shutdown holds it
	 * while it joins this very thread; a log callback's caller may hold
	 * it. */
	if (letw_reentry_refused())
		return -EDEADLK;
	/* Nobody would answer, and lifecycle_lock may be held for ever
	 * (a parent thread in this very call at the fork). */
	if (letw_forked_without_hooks())
		return CMM_LOAD_SHARED(letw_g.table) ? -ESRCH : -ESHUTDOWN;
	/* Against letw_init and letw_shutdown: between init's publishing the
	 * table and starting the control thread, and between shutdown's
	 * joining it and withdrawing the table, control_running alone would
	 * say "no control thread" (-ENOTSUP) where the caller only raced a
	 * lifecycle call; and shutdown closes wake_fd, which a caller that
	 * read control_running before could still write its wake-up into
	 * once the descriptor number was reused. So the check, the request
	 * and the wake-up run under the lock (order: lifecycle_lock ->
	 * req_lock, as in init/shutdown; the wait below runs after it). */
	pthread_mutex_lock(&lifecycle_lock);
	if (!__atomic_load_n(&letw_g.control_running, __ATOMIC_RELAXED)) {
		/* Stopped by the exit handler (the table stays for the
		 * exit's last publishers): shut down, not unsupported. */
		ret = letw_g.table && !__atomic_load_n(&letw_g.stopping, __ATOMIC_ACQUIRE) ?
			-ENOTSUP : -ESHUTDOWN;
		goto out_unlock;
	}
	ret = -ENOTSUP;
	if (letw_g.flags & LETW_CONFIG_NO_CONTROL_THREAD)
		goto out_unlock;
	/* A child forked without letw_fork_child inherited control_running
	 * but not the thread: nobody would ever answer. getpid() is a
	 * system call, but this is not a publish path. */
	ret = -ESRCH;
	if (getpid() != letw_g.control_pid)
		goto out_unlock;
	pthread_mutex_lock(&letw_g.req_lock);
	seq = ++letw_g.req_seq;
	/* Requests arriving before the control thread wakes share one pass
	 * covering every keyword asked for. */
	letw_g.req_mask |= match_any_keyword;
	pthread_mutex_unlock(&letw_g.req_lock);
	(void)!write(letw_g.wake_fd, &one, sizeof(one));
	pthread_mutex_unlock(&lifecycle_lock);
	if (!wait)
		return 0;
	pthread_mutex_lock(&letw_g.req_lock);
	while (letw_g.req_done_seq < seq && !__atomic_load_n(&letw_g.stopping, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&letw_g.req_cond, &letw_g.req_lock);
	ret = letw_g.req_done_seq >= seq ? letw_g.req_result.passes : -ESHUTDOWN;
	pthread_mutex_unlock(&letw_g.req_lock);
	return ret;

out_unlock:
	pthread_mutex_unlock(&lifecycle_lock);
	return ret;
}

LETW_API int letw_get_stats(struct letw_stats *out)
{
	struct letw_table *t;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if ((t = table_enter())) {
		out->live_methods = (uint64_t)uatomic_read(&t->live_methods);
		out->live_stubs = (uint64_t)uatomic_read(&t->live_stubs);
		out->live_modules = (uint64_t)uatomic_read(&t->live_modules);
		out->deferred_frees_pending = (uint64_t)uatomic_read(&t->reclaim.pending);
		table_exit();
	}
	out->passes = uatomic_read(&letw_g.passes);
	out->rundown_emitted = uatomic_read(&letw_g.rundown_emitted);
	out->rundown_skipped_raced = uatomic_read(&letw_g.rundown_skipped);
	return t ? 0 : -ESHUTDOWN;
}

LETW_API int letw_get_store_stats(struct letw_store_stats *out)
{
	struct letw_store_stats st = { .size = sizeof(st) };
	struct letw_store_usage u;
	struct letw_table *t;

	if (!out || out->size < offsetof(struct letw_store_stats, bytes_committed))
		return -EINVAL;
	if (!(t = table_enter()))
		return -ESHUTDOWN;
	letw_store_usage(&t->store, &u);
	st.bytes_committed = u.slots_committed * sizeof(struct letw_slot) +
			     u.chunk_bytes_committed + u.name_bytes_committed;
	st.bytes_in_use = (u.slots_committed - u.slots_free) * sizeof(struct letw_slot) +
			  u.chunk_bytes_in_use + u.name_bytes_in_use;
	st.slots_committed = u.slots_committed;
	st.slots_free = u.slots_free;
	st.slow_grows = u.slow_grows;
	st.pending_free = (uint64_t)uatomic_read(&t->reclaim.pending);
	table_exit();
	st.last_pass_max_section_ns = uatomic_read(&letw_g.last_pass_max_section_ns);
	st.max_section_ns = uatomic_read(&letw_g.max_section_ns);
	st.last_pass_sections = uatomic_read(&letw_g.last_pass_sections);
	st.last_pass_max_section_start_ns = uatomic_read(&letw_g.last_pass_max_section_start_ns);
	letw_hook_counts(&st.statedumps_coalesced, &st.statedumps_overflowed);
	st.passes_failed = uatomic_read(&letw_g.passes_failed);
	/* The caller's size, read once: st.size is what lands in out->size,
	 * so a struct reused for the next call keeps the caller's size. */
	st.size = out->size < sizeof(st) ? out->size : sizeof(st);
	memcpy(out, &st, st.size);
	return 0;
}
