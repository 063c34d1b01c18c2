/* SPDX-License-Identifier: MIT */
/*
 * lttng-etw — an ETW-style JIT code provider for LTTng-UST.
 *
 * A runtime (JIT, VM, interpreter with generated code) embeds this library
 * and reports the code it publishes and frees. The library keeps the live
 * set in an RCU-published table, emits LTTng-UST events for every change,
 * and answers LTTng session enablement and explicit capture-state requests
 * with ETW-style rundown passes (DCStart / DCEnd) enumerating every live
 * code region, so a trace that starts late can still name early code.
 *
 * Conventions (libbpf-style):
 *   - every public symbol carries the letw_ / LETW_ prefix;
 *   - functions return 0 (or a non-negative value where documented) on
 *     success and a negative errno on failure; no function aborts or prints
 *     on a caller mistake, and a failed call leaves the table unchanged;
 *   - diagnostics go to the log callback (letw_set_log_fn) or, when
 *     LETW_LOG=stderr is set in the environment, to stderr.
 *
 * Threading: every function may be called from any thread, including
 * threads the library has never seen (no registration is needed). The hot
 * paths — letw_method_publish(_opts)/unpublish, letw_stub_publish/unpublish,
 * letw_module_publish/unpublish — take no lock (libc's allocator's
 * included: they never call malloc or free), never wait for a rundown,
 * never wait for an RCU grace period, do no file I/O and never call back
 * into the runtime. Records live in a store the library maps ahead of
 * demand from its control thread; an unpublished record is reused after a
 * grace period. The one exception, counted in letw_store_stats.slow_grows:
 * a publisher that outruns the control thread commits store memory itself
 * (an mprotect system call). A thread's first call also registers it with
 * liburcu and lttng-ust (once: a short registry lock, and glibc's TLS
 * allocation when the library was dlopen()ed). What lttng-ust does with
 * the runtime events is the session's to configure: in a channel set to
 * block (--blocking-timeout) a publish waits for the consumer when the
 * channel is full, and without --read-timer a publish that switches a
 * sub-buffer wakes the consumer itself (a non-blocking write, signal-mask
 * calls). README: "Tracing a runtime with plain lttng".
 *
 * String ownership: the library copies every string it is given during the
 * call; the caller may free or reuse its buffers as soon as the call returns.
 * Strings must be valid UTF-8 of at most LETW_STRING_MAX bytes (excluding the
 * terminating NUL); NULL is accepted for optional strings and means "".
 */
#ifndef LTTNG_ETW_H
#define LTTNG_ETW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LETW_API __attribute__((visibility("default")))
#else
#define LETW_API
#endif

#define LETW_VERSION_MAJOR 0
#define LETW_VERSION_MINOR 2

/* Longest accepted string, in bytes, not counting the NUL. */
#define LETW_STRING_MAX 4096u

/* ---------------------------------------------------------------------- */
/* Providers, keywords, control codes (DESIGN.md §3–4).                   */
/* ---------------------------------------------------------------------- */

enum letw_provider {
	LETW_PROVIDER_RUNTIME = 0, /* LTTng provider "letw_runtime" */
	LETW_PROVIDER_RUNDOWN = 1, /* LTTng provider "letw_rundown" */
};

/* letw_runtime keywords (values match the CLR runtime provider). */
#define LETW_KW_LOADER            0x8ull
#define LETW_KW_JIT               0x10ull
#define LETW_KW_START_ENUMERATION 0x40ull
#define LETW_KW_END_ENUMERATION   0x80ull
#define LETW_KW_STUB              (1ull << 48) /* ours, above every CLR keyword */
#define LETW_KW_LINES             0x20000ull   /* CLR's JittedMethodILToNativeMap */
#define LETW_KW_CODE_BYTES        (1ull << 49) /* ours */

/* letw_rundown keywords (values match the CLR rundown provider). */
#define LETW_KW_LOADER_RUNDOWN 0x8ull
#define LETW_KW_JIT_RUNDOWN    0x10ull
#define LETW_KW_RUNDOWN_START  0x40ull
#define LETW_KW_RUNDOWN_END    0x100ull
#define LETW_KW_STUB_RUNDOWN   (1ull << 48) /* ours */
#define LETW_KW_LINES_RUNDOWN  0x20000ull   /* CLR's JittedMethodILToNativeMap */
#define LETW_KW_CODE_BYTES_RUNDOWN (1ull << 49) /* ours */

/* ETW control codes, same numeric values as EVENT_CONTROL_CODE_*. */
enum letw_control_code {
	LETW_CONTROL_DISABLE_PROVIDER = 0,
	LETW_CONTROL_ENABLE_PROVIDER = 1,
	LETW_CONTROL_CAPTURE_STATE = 2,
};

/* ETW levels; LTTng-UST has no session level we can observe, so the
 * control thread always reports LETW_LEVEL_VERBOSE. */
#define LETW_LEVEL_VERBOSE 5

/* Rundown passes (bit set returned by letw_rundown_pass). */
#define LETW_PASS_NONE    0x0
#define LETW_PASS_DCSTART 0x1
#define LETW_PASS_DCEND   0x2

/*
 * The one decision function: which rundown passes a control request runs.
 * Pure: no state, no side effect, callable from any context.
 *
 * Only the rundown provider and only ENABLE_PROVIDER / CAPTURE_STATE run
 * passes. RUNDOWN_START → DCStart, RUNDOWN_END → DCEnd, both → one walk
 * emitting both flavours. 0x80 is the runtime provider's END_ENUMERATION and
 * never triggers anything; DISABLE_PROVIDER runs nothing.
 *
 * Returns a LETW_PASS_* bit set (>= 0), or -EINVAL for an unknown control
 * code or provider.
 */
LETW_API int letw_rundown_pass(int control_code, uint64_t match_any_keyword,
			       int provider);

/* ---------------------------------------------------------------------- */
/* Records the runtime publishes.                                         */
/* ---------------------------------------------------------------------- */

/* method_flags (CLR's MethodFlags map). */
#define LETW_METHOD_DYNAMIC        0x1u
#define LETW_METHOD_GENERIC        0x2u
#define LETW_METHOD_SHARED_GENERIC 0x4u
#define LETW_METHOD_JITTED         0x8u
#define LETW_METHOD_JIT_HELPER     0x10u
#define LETW_METHOD_TIER_SHIFT     7
#define LETW_METHOD_TIER_MASK      (0x7u << LETW_METHOD_TIER_SHIFT)
#define LETW_METHOD_TIER(t)        (((uint32_t)(t) & 0x7u) << LETW_METHOD_TIER_SHIFT)

/* Tier values for LETW_METHOD_TIER() (CLR's OptimizationTier, abridged). */
enum letw_tier {
	LETW_TIER_UNKNOWN = 0,
	LETW_TIER_MIN_OPT = 1,
	LETW_TIER_OPTIMIZED = 2,
	LETW_TIER_QUICK = 3,
	LETW_TIER_OPTIMIZED_TIER1 = 4,
	LETW_TIER_READY_TO_RUN = 5,
	LETW_TIER_INSTRUMENTED = 6,
	LETW_TIER_OSR = 7,
};

/*
 * One native code version of a method. A new tier or ReJIT version is a
 * new record (its own code_start); records are immutable once published.
 */
struct letw_method {
	uint64_t method_id;    /* runtime's identity of the method */
	uint64_t module_id;    /* 0, or a module published with letw_module_publish
				* (not checked: the analysis names what it finds) */
	uint64_t code_start;   /* first byte of the code; the table key */
	uint32_t code_size;    /* bytes, > 0 */
	uint32_t method_token; /* runtime-specific token (metadata token, line...) */
	uint32_t method_flags; /* LETW_METHOD_* */
	uint64_t version_id;   /* tier / ReJIT version */
	const char *method_namespace; /* optional */
	const char *name;             /* required, non-empty */
	const char *signature;        /* optional */
};

/* Stub kinds; any other value is accepted and reported as is. */
enum letw_stub_kind {
	LETW_STUB_UNKNOWN = 0,
	LETW_STUB_PRECODE = 1,
	LETW_STUB_JUMP = 2,
	LETW_STUB_DISPATCH = 3,
	LETW_STUB_RESOLVE = 4,
	LETW_STUB_THUNK = 5,
	LETW_STUB_BLOCK = 6, /* a block of stubs allocated together */
};

struct letw_stub {
	uint64_t start; /* table key; shares the address space with methods */
	uint32_t size;  /* bytes, > 0 */
	uint32_t kind;  /* enum letw_stub_kind or runtime-defined */
	uint64_t owner; /* runtime-defined: owning method id, heap id, ... */
	const char *name; /* optional, e.g. "VSD_ResolveStub" */
};

struct letw_module {
	uint64_t module_id; /* non-zero, unique among live modules */
	uint32_t module_flags;
	const char *name; /* required: path or logical name (chunk, assembly) */
};

/*
 * Publish / unpublish. Errors (table unchanged on every error):
 *   -EINVAL        NULL record, zero size, start+size overflows, empty or
 *                  missing name, zero module id
 *   -ENAMETOOLONG  a string longer than LETW_STRING_MAX
 *   -EILSEQ        a string that is not valid UTF-8
 *   -EEXIST        the range overlaps a live method or stub (or the module
 *                  id is live); two racing overlapping publishes may both
 *                  fail, never both succeed
 *   -ENOENT        unpublish of an address / id that is not live (this
 *                  includes a second unpublish of the same record)
 *   -ENOMEM        allocation failed
 *   -ESHUTDOWN     called before letw_init or after letw_shutdown
 * letw_method_unpublish only matches a method and letw_stub_unpublish only
 * a stub: the kinds share one address space but are removed by their own
 * call (-ENOENT otherwise).
 */
LETW_API int letw_method_publish(const struct letw_method *method);
LETW_API int letw_method_unpublish(uint64_t code_start);
LETW_API int letw_stub_publish(const struct letw_stub *stub);
LETW_API int letw_stub_unpublish(uint64_t start);
LETW_API int letw_module_publish(const struct letw_module *module);

/*
 * Optional per-code-version data (DESIGN §3, §6), published with the
 * method: a line table mapping native offsets to source positions, kept
 * with the record so that rundowns can emit it too.
 *
 * Rows are sorted by native_offset (non-decreasing); a row covers the
 * bytes from its offset to the next row's. Several rows at one offset
 * describe an inlining stack, outermost first (inline_depth 0 is the
 * method itself, depth n a frame inlined n levels deep, its file and line
 * being the inlinee's). Events: letw_runtime:method_lines at publish,
 * letw_rundown:method_lines_start / method_lines_end in DCStart / DCEnd
 * passes, each under the LINES keyword and off unless a session enables
 * them.
 *
 * The code bytes of a method, at most LETW_CODE_BYTES_MAX per code version,
 * when a session enables them (CODE_BYTES keyword):
 *  - letw_rundown:method_code_bytes_start / _end in rundowns, copied
 *    fault-safely from [code_start, code_start + code_size) on the
 *    library's control thread;
 *  - letw_runtime:method_code_bytes at publish only when the runtime sets
 *    LETW_METHOD_OPT_CODE_READABLE: the bytes are then read in place, on
 *    the publishing thread. Without that promise the publish path has no
 *    way to read memory that may be unmapped except a system call, which
 *    it never makes: the publish emits no code bytes.
 */
struct letw_line {
	uint32_t native_offset; /* from code_start; < code_size */
	uint32_t line;          /* 1-based source line; 0: unknown */
	uint32_t file;          /* index into letw_method_opts.files */
	uint32_t inline_depth;  /* 0: the method itself; n: inlined n deep */
};

#define LETW_LINES_MAX       65535u  /* rows per code version */
#define LETW_FILES_MAX       1024u   /* file names per code version */
#define LETW_FILES_BYTES_MAX 16384u  /* their bytes, NULs included */
#define LETW_CODE_BYTES_MAX  (256u * 1024u)

struct letw_method_opts {
	size_t size;                  /* sizeof(struct letw_method_opts): ABI guard */
	const struct letw_line *lines;
	uint32_t nr_lines;
	uint32_t nr_files;
	const char *const *files;     /* UTF-8, no newline; "" allowed */
	uint32_t flags;               /* LETW_METHOD_OPT_*; absent in older callers: 0 */
};

/* The caller promises that [code_start, code_start + code_size) is mapped
 * and readable until letw_method_publish_opts returns (a JIT publishing code
 * it has just written): method_code_bytes at publish reads it in place. A
 * false promise faults in the caller's thread. */
#define LETW_METHOD_OPT_CODE_READABLE (1u << 0)

/*
 * letw_method_publish with options (opts may be NULL: same as
 * letw_method_publish). Strings and rows are copied during the call.
 * Errors, besides letw_method_publish's (table unchanged on every error):
 *   -EINVAL  opts->size too small, an unknown flag, lines or files NULL
 *            with a non-zero count, a row's file index >= nr_files,
 *            native_offset >= code_size, rows out of order, a file name
 *            with a newline
 *   -E2BIG   more than LETW_LINES_MAX rows, LETW_FILES_MAX files or
 *            LETW_FILES_BYTES_MAX bytes of file names; or opts->size larger
 *            than this library's struct with a non-zero byte past it (a
 *            newer caller's field this library cannot honour), or > 4096
 */
LETW_API int letw_method_publish_opts(const struct letw_method *method,
				      const struct letw_method_opts *opts);
LETW_API int letw_module_unpublish(uint64_t module_id);

/* ---------------------------------------------------------------------- */
/* Lifetime and configuration.                                            */
/* ---------------------------------------------------------------------- */

enum letw_log_level {
	LETW_LOG_DEBUG = 0,
	LETW_LOG_INFO = 1,
	LETW_LOG_WARN = 2,
	LETW_LOG_ERROR = 3,
};

/* Called from whichever library thread noticed something, the caller's
 * own thread included (letw_init logs on it), never from a
 * publish/unpublish path. Must not call back into the library:
 * letw_init, letw_shutdown and letw_capture_state return -EDEADLK from
 * it and change nothing. */
typedef void (*letw_log_fn)(enum letw_log_level level, const char *msg,
			    void *ctx);

/*
 * Called on the library's control thread for every synthesised ETW control
 * request, before the rundown pass it may cause. The runtime must not
 * block for long in it (no pass runs meanwhile) and must not call
 * letw_shutdown, letw_set_control_fn, letw_capture_state or the fork hooks
 * from it; publishing and unpublishing from it is fine.
 */
typedef void (*letw_control_fn)(int control_code, int level,
				uint64_t match_any_keyword, int provider,
				void *ctx);

/* No polling, no socket, no rundown: the library's thread only maintains
 * the record store (growth ahead of demand, reuse of unpublished records). */
#define LETW_CONFIG_NO_CONTROL_THREAD 0x1u
#define LETW_CONFIG_NO_CONTROL_SOCKET 0x2u /* polling only */
/*
 * Map a perf jitdump placeholder, DIR/jit-<pid>.dump, executable for the
 * life of the process, so that `perf record` notes the mapping and `perf
 * inject --jit` later reads the jitdump `lttng-etw jitdump TRACE -o DIR`
 * writes there from the trace (DESIGN §6). DIR is $LETW_JITDUMP_DIR, else
 * jitdump_dir, else /tmp. Setting LETW_JITDUMP_DIR turns this on without
 * the flag. The file is made during letw_init (and letw_fork_child, for the
 * child's own pid); no publish path does any I/O. A failure is logged and
 * does not fail letw_init.
 */
#define LETW_CONFIG_JITDUMP 0x4u

struct letw_config {
	size_t size;              /* sizeof(struct letw_config): ABI guard */
	uint16_t instance_id;     /* reported in every event (ClrInstanceID) */
	uint32_t poll_period_ms;  /* 0: default (5 ms; env LETW_POLL_MS); at most
				   * 10000 (-EINVAL beyond) */
	uint32_t flags;           /* LETW_CONFIG_* */
	letw_log_fn log_fn;       /* optional; see letw_set_log_fn */
	void *log_ctx;
	/* Since 0.2. The record store (DESIGN §5): records it commits room
	 * for at init (0: 16384; it grows ahead of demand from then on; at
	 * most max_records; more than the machine's memory holds fails
	 * letw_init with -ENOMEM), and
	 * the most it will ever hold live (0: 2^24; a larger value is taken as 2^30; publishes
	 * beyond fail with -ENOMEM; threads publishing at once at the bound
	 * may each get one record past it). Unpublished records waiting for
	 * their grace period do not count. Address space is reserved for the
	 * maximum and a quarter more for those up front (64 bytes per record,
	 * not backed until used). */
	uint64_t expected_records;
	uint64_t max_records;
	/* Since 0.2, read only when size covers it. */
	const char *jitdump_dir;  /* LETW_CONFIG_JITDUMP directory (NULL: /tmp) */
};

/*
 * Initialise the provider: load the tracepoint probe object
 * (liblttng-etw-tp.so, next to this library or $LETW_PROBE_PATH), create
 * the table, start the control thread and the control socket
 * (abstract AF_UNIX "@lttng-etw/<pid_ns>/<vpid>", the pid namespace's
 * inode number and the pid as the process sees it).
 *
 * cfg may be NULL for defaults. With LETW_DISABLE=1 in the environment, or
 * when the probe object or lttng-ust cannot be loaded, the library still
 * initialises and keeps its table (so a later fork or inspection works)
 * but emits nothing; letw_init returns 0 and logs why.
 * A log callback set with letw_set_log_fn before is kept unless cfg names
 * one. Counters (letw_get_stats, letw_get_store_stats) start from zero.
 * Returns -EALREADY if already initialised, -EINVAL for a bad config,
 * -E2BIG when cfg->size is larger than this library's struct with a
 * non-zero byte past it (a newer caller's field it cannot honour), or
 * > 4096, -ENOMEM, or -EDEADLK (nothing done) from a control or log
 * callback (a letw_shutdown running meanwhile would wait for that
 * callback's thread while holding what init needs).
 */
LETW_API int letw_init(const struct letw_config *cfg);

/* Stop the control thread, unpublish everything (no unload events), wait
 * for deferred frees. Returns 0, or -ESHUTDOWN before letw_init (or a
 * second time). Must not be called from a control or log callback:
 * from either it returns -EDEADLK and changes nothing. In a
 * child forked without the fork hooks it returns -ESRCH and changes
 * nothing (the parent's threads, which the teardown would wait for, are
 * not there); there letw_init returns -EALREADY (-ESRCH once the parent
 * had shut down: liburcu's state is the parent's), letw_capture_state
 * -ESRCH, the fork hooks do nothing, and the child's exit leaves the
 * parent's control thread alone. Publishing there works, but nothing
 * unpublished is ever reclaimed (no control or call_rcu thread): memory
 * grows with every unpublish. And lttng-ust itself needs its fork hooks
 * (which letw_fork_* call): if a parent thread was inside a tracepoint at
 * the fork, the child's exit() can wait for good in lttng-ust's probe
 * unregister. Use the fork hooks. */
LETW_API int letw_shutdown(void);

LETW_API int letw_set_log_fn(letw_log_fn fn, void *ctx);
/* Returns 0, or -EDEADLK (nothing changed) when called from the control
 * callback itself. */
LETW_API int letw_set_control_fn(letw_control_fn fn, void *ctx);

/* 1 when events are being emitted (between letw_init and letw_shutdown,
 * probe loaded, not disabled), else 0. */
LETW_API int letw_tracing_available(void);

/*
 * Ask the control thread for a CAPTURE_STATE with the rundown provider's
 * live keyword mask (or match_any_keyword if non-zero), as the control
 * socket does. Waits for the pass's Complete event when wait is non-zero.
 * Returns the LETW_PASS_* bits run (0: nothing enabled, nothing run), or a
 * negative errno: -EDEADLK from a control or log callback, -ESRCH in a child
 * forked without letw_fork_child (no control thread runs there), -ENOTSUP
 * with LETW_CONFIG_NO_CONTROL_THREAD, -ESHUTDOWN before letw_init or after
 * letw_shutdown, -ENOMEM (with wait) when the pass could not begin for
 * want of memory (nothing written; letw_store_stats.passes_failed). While
 * letw_init or letw_shutdown runs on another thread
 * it waits for that call to return, then answers as after it.
 */
LETW_API int letw_capture_state(uint64_t match_any_keyword, int wait);

/* Counters since letw_init (for tests, benchmarks and the runtime's own
 * diagnostics). */
struct letw_stats {
	uint64_t live_methods, live_stubs, live_modules;
	uint64_t passes;          /* rundown walks completed */
	uint64_t rundown_emitted; /* records emitted by all passes */
	uint64_t rundown_skipped_raced;
	/* Items unpublished, waiting for a grace period: records, and what
	 * they hold apart (a big range's page entries, line tables, interned
	 * strings); letw_store_stats.pending_free. Not a record count. */
	uint64_t deferred_frees_pending;
};
/* 0, -EINVAL for NULL, -ESHUTDOWN before letw_init or after letw_shutdown. */
LETW_API int letw_get_stats(struct letw_stats *out);

/*
 * The record store and the walker (since 0.2; set `size` before the call,
 * fields past it are not written).
 */
struct letw_store_stats {
	size_t size;                 /* sizeof(struct letw_store_stats): ABI guard */
	uint64_t bytes_committed;    /* slots and chunks made usable */
	uint64_t bytes_in_use;       /* held by live and not-yet-freed records */
	uint64_t slots_committed, slots_free;
	uint64_t slow_grows;         /* times a publisher had to commit memory itself */
	uint64_t pending_free;       /* unpublished items waiting for a grace period */
	uint64_t last_pass_max_section_ns; /* longest read-side section of the last pass */
	uint64_t max_section_ns;     /* ... of any pass */
	uint64_t last_pass_sections;
	/* CLOCK_MONOTONIC start of the last pass's longest section, to find
	 * it in a scheduler trace (`perf record -k mono`); consistent with
	 * last_pass_max_section_ns once the pass has returned (read after
	 * letw_capture_state() with wait, as bench/stall.c does). */
	uint64_t last_pass_max_section_start_ns;
	/* Session statedumps (`lttng start`, `lttng regenerate statedump`)
	 * answered by the pass already queued for their session rather than
	 * a pass of their own. */
	uint64_t statedumps_coalesced;
	/* ... and answered by a capture-state into every session (one for
	 * all those that arrive while it waits), because 64 other sessions
	 * were each waiting for a pass. Until 2026-12-07 such statedumps were
	 * dropped, unanswered, and counted here as statedumps_dropped: that
	 * name stays, for the same field. */
	union {
		uint64_t statedumps_overflowed;
		uint64_t statedumps_dropped;
	};
	/* Rundown passes that could not begin: the walker's copy buffer
	 * (8 MiB, mapped at the first pass and kept) could not be mapped.
	 * Such a pass writes no event (no Init, no Complete), counts in no
	 * other counter, and is logged as an error; the next pass tries
	 * the mapping again. One that answered a session's statedump (its
	 * `lttng start`, a regenerate, or adoption) is owed to the session:
	 * the control thread tries it again about once a second until it
	 * runs, each try that fails counted here too (logged once, when the
	 * first fails). */
	uint64_t passes_failed;
};
/* 0, -EINVAL for NULL or a `size` that holds no field past itself,
 * -ESHUTDOWN before letw_init or after letw_shutdown. */
LETW_API int letw_get_store_stats(struct letw_store_stats *out);

/*
 * Fork hooks. The library installs no pthread_atfork handlers: a runtime
 * that forks calls letw_fork_prepare() before fork(), then
 * letw_fork_parent() in the parent and letw_fork_child() in the child.
 * The child keeps the inherited table (its code is mapped there too), gets
 * a fresh control thread and its own control socket name, and emits events
 * under its own vpid from then on. Out of that order (a second prepare, a
 * parent or child without one) a hook does nothing; so does
 * letw_fork_prepare from a control callback (forking there is not
 * supported: the control thread holds what the prepare hook takes) and
 * in a child forked without the hooks (whatever it forks in turn stays
 * without lttng-etw's threads).
 */
LETW_API void letw_fork_prepare(void);
LETW_API void letw_fork_parent(void);
LETW_API void letw_fork_child(void);

#ifdef __cplusplus
}
#endif

#endif /* LTTNG_ETW_H */
