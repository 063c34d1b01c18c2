/* SPDX-License-Identifier: MIT */
/*
 * Agent lifecycle: Agent_OnLoad (-agentpath at startup), Agent_OnAttach
 * (jcmd PID JVMTI.agent_load), capabilities, events, lttng-etw init, the
 * attach replay and VM death.
 *
 * Never blocking the JVM on lttng-etw: the callbacks only call its
 * lock-free publish paths. letw_shutdown is never called: it joins the
 * control thread, which may sit in a rundown pass stuck on a blocking
 * channel, and would hold the VM's exit (VMDeath / Agent_OnUnload run on
 * the thread ending the VM). lttng-etw's own exit handler stops its
 * thread when the process exits, bounded; a pass cut short by the exit
 * emits no Complete, so the trace shows it truncated.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <lttng-etw/lttng-etw.h>

#include "agent.h"
#include "diag.h"
#include "options.h"
#include "replayset.h"
#include "scratch.h"
#include "stats.h"

struct jvm_agent jvm_g;

/* Agent_OnLoad and Agent_OnAttach run on one thread at a time (HotSpot
 * loads agents serially), but a second jcmd may load us again. */
static atomic_int started;

JNIEnv *jvm_jni(void)
{
	JNIEnv *env = NULL;

	if (!jvm_g.vm || (*jvm_g.vm)->GetEnv(jvm_g.vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
		return NULL;
	return env;
}

int jvm_in_replay(void)
{
	return atomic_load_explicit(&jvm_g.replaying, memory_order_acquire) &&
	       pthread_equal(pthread_self(), jvm_g.replay_thread);
}

static void log_stats(const char *when)
{
	char buf[900];

	if (!jvm_diag_enabled(JVM_LOG_INFO))
		return;
	jvm_stats_format(buf, sizeof(buf));
	jvm_diag(JVM_LOG_INFO, "%s: %s log_dropped=%lu", when, buf, jvm_diag_dropped());
}

static void replay_begin(void)
{
	jvm_g.replay_thread = pthread_self();
	atomic_store_explicit(&jvm_g.replaying, 1, memory_order_release);
}

static void replay_end(void)
{
	atomic_store_explicit(&jvm_g.replaying, 0, memory_order_release);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	jvmtiError e;

	if (jvm_g.can_modules && jvm_g.opts.modules)
		(void)jvm_modules_live_init(jvmti, jni);
	/* Blobs HotSpot made without a DynamicCodeGenerated event (stubs.c). */
	if (jvm_g.opts.stubs) {
		replay_begin();
		e = (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
		replay_end();
		if (e != JVMTI_ERROR_NONE)
			jvm_diag(JVM_LOG_WARN, "VMInit: GenerateEvents failed (JVMTI error %d)", e);
	}
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	/* Callbacks still running on other threads finish normally (their
	 * JVMTI calls may return WRONG_PHASE from now on); later ones return
	 * at once. The table stays: exit is near, and a rundown running now
	 * still reads valid records. */
	atomic_store(&jvm_g.dead, 1);
	log_stats("vm death");
}

static int add_capabilities(jvmtiEnv *jvmti)
{
	jvmtiCapabilities pot, want;

	memset(&pot, 0, sizeof(pot));
	memset(&want, 0, sizeof(want));
	if ((*jvmti)->GetPotentialCapabilities(jvmti, &pot) != JVMTI_ERROR_NONE ||
	    !pot.can_generate_compiled_method_load_events)
		return -ENOTSUP;
	want.can_generate_compiled_method_load_events = 1;
	if (pot.can_get_line_numbers && pot.can_get_source_file_name) {
		want.can_get_line_numbers = 1;
		want.can_get_source_file_name = 1;
	}
	if (jvm_g.opts.modules && pot.can_tag_objects && pot.can_generate_object_free_events) {
		want.can_tag_objects = 1;
		want.can_generate_object_free_events = 1;
	}
	if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE) {
		/* Keep the one we cannot do without. */
		memset(&want, 0, sizeof(want));
		want.can_generate_compiled_method_load_events = 1;
		if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE)
			return -ENOTSUP;
	}
	jvm_g.can_lines = want.can_get_line_numbers;
	jvm_g.can_modules = want.can_tag_objects;
	if (jvm_g.opts.lines && !jvm_g.can_lines)
		jvm_diag(JVM_LOG_WARN, "no line-number capability: publishing without line tables");
	if (jvm_g.opts.modules && !jvm_g.can_modules)
		jvm_diag(JVM_LOG_WARN, "no object-tagging capability: publishing without modules");
	return 0;
}

static int enable_events(jvmtiEnv *jvmti, int late)
{
	jvmtiEventCallbacks cb;
	jvmtiEvent ev[6];
	int n = 0, i;

	memset(&cb, 0, sizeof(cb));
	cb.CompiledMethodLoad = jvm_on_compiled_method_load;
	cb.CompiledMethodUnload = jvm_on_compiled_method_unload;
	cb.DynamicCodeGenerated = jvm_on_dynamic_code;
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.ObjectFree = jvm_on_object_free;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof(cb)) != JVMTI_ERROR_NONE)
		return -EINVAL;
	ev[n++] = JVMTI_EVENT_COMPILED_METHOD_LOAD;
	ev[n++] = JVMTI_EVENT_COMPILED_METHOD_UNLOAD;
	ev[n++] = JVMTI_EVENT_DYNAMIC_CODE_GENERATED;
	ev[n++] = JVMTI_EVENT_VM_DEATH;
	if (!late)
		ev[n++] = JVMTI_EVENT_VM_INIT;
	if (jvm_g.can_modules && jvm_g.opts.modules)
		ev[n++] = JVMTI_EVENT_OBJECT_FREE;
	for (i = 0; i < n; i++)
		if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, ev[i], NULL) !=
		    JVMTI_ERROR_NONE)
			return -EINVAL;
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Late attach: code compiled before we came is reported again by
 * GenerateEvents, on this (the attach listener's) thread, while the
 * ServiceThread goes on posting new events: events are enabled first so
 * nothing falls between, and what both report is refused once as a
 * duplicate. A session that was already running started its DCStart pass
 * when lttng-etw's control thread came up, before the replay: ask for
 * another now that the table is whole.
 */
static void replay(jvmtiEnv *jvmti)
{
	jvmtiError e1 = JVMTI_ERROR_NONE, e2;
	double t0 = now_ms();
	int passes;

	/* Before the replay: its callbacks must not allocate. Without the
	 * memory, duplicates the queue posts second count as overlaps. */
	if (jvm_replayset_init())
		jvm_diag(JVM_LOG_DEBUG, "attach: no memory for the replay set");
	replay_begin();
	if (jvm_g.opts.stubs)
		e1 = (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
	e2 = (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	replay_end();
	if (e1 != JVMTI_ERROR_NONE || e2 != JVMTI_ERROR_NONE)
		jvm_diag(JVM_LOG_WARN, "attach: GenerateEvents failed (JVMTI errors %d, %d)", e1, e2);
	/* Without waiting, 0 means queued: the control thread then runs a
	 * pass for every session recording the rundown events, if any. */
	passes = letw_tracing_available() ? letw_capture_state(0, 0) : 1;
	jvm_diag(JVM_LOG_INFO, "attach: replayed live code in %.1f ms%s%s", now_ms() - t0,
		 passes == 0 ? "; capture-state requested (a pass for each session recording rundown events)" :
		 passes < 0 ? "; capture-state not requested: " : "",
		 passes < 0 ? strerror(-passes) : "");
	log_stats("attach");
}

/* Not loaded, nothing started: a later jcmd may try again (and opens the
 * log again, so the one opened for this attempt is closed, not leaked). */
static jint refuse(void)
{
	jvm_diag_close();
	atomic_store(&started, 0);
	return JNI_ERR;
}

static jint start(JavaVM *vm, const char *options, int late)
{
	/* Static: the log path makes it 4 KiB, a lot for the Attach
	 * Listener's stack (a Java thread: -Xss applies). Never shared by two
	 * calls: HotSpot runs the startup Agent_OnLoads one by one, and every
	 * jcmd load on its one Attach Listener thread. */
	static struct jvm_opts opts;
	struct letw_config cfg;
	char err[256];
	jvmtiEnv *jvmti = NULL;
	JNIEnv *jni;
	int ret;

	/* Bad options are the user's to fix: say why and refuse to load,
	 * whether or not an earlier load is running (a second load's options
	 * are checked, then ignored; jcmd must not answer 0 to a typo). */
	jvm_opts_defaults(&opts);
	if (jvm_opts_parse(options, &opts, err, sizeof(err))) {
		fprintf(stderr, "lttng-etw-jvmti: bad options: %s\n", err);
		return JNI_ERR;
	}
	if (opts.help) {
		fputs(jvm_opts_help_text, stderr);
		return JNI_ERR;
	}
	if (atomic_exchange(&started, 1)) {
		jvm_diag(JVM_LOG_WARN, "already loaded in this JVM; options '%s' ignored",
			 options ? options : "");
		return JNI_OK;
	}
	jvm_g.opts = opts;
	ret = jvm_diag_open(jvm_g.opts.log, jvm_g.opts.log_level);
	if (ret) {
		fprintf(stderr, "lttng-etw-jvmti: cannot open log '%s': %s%s\n", jvm_g.opts.log,
			strerror(-ret),
			ret == -ENXIO ? " (a FIFO nobody reads: the agent will not wait for one)" : "");
		return refuse();
	}
	jvm_g.vm = vm;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti) {
		jvm_diag(JVM_LOG_ERROR, "no JVMTI environment: not loaded");
		return refuse();
	}
	if (add_capabilities(jvmti)) {
		jvm_diag(JVM_LOG_ERROR, "this JVM cannot report compiled methods: not loaded");
		return refuse();
	}
	/* The callbacks never allocate: their line-table memory is taken now. */
	if (jvm_g.opts.lines && jvm_g.can_lines && jvm_scratch_init()) {
		jvm_diag(JVM_LOG_ERROR, "no memory for the line-table scratch: not loaded");
		return refuse();
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.instance_id = jvm_g.opts.instance_id;
	cfg.poll_period_ms = jvm_g.opts.poll_ms;
	cfg.log_fn = jvm_diag_letw;
	ret = letw_init(&cfg);
	if (ret == -EALREADY) {
		/* The application embeds lttng-etw itself: share its table. */
		(void)letw_set_log_fn(jvm_diag_letw, NULL);
	} else if (ret) {
		/* Tracing is not worth failing the user's JVM for. */
		jvm_diag(JVM_LOG_ERROR, "letw_init: %s; running without the agent", strerror(-ret));
		return JNI_OK;
	}
	if (late) {
		jni = jvm_jni();
		if (jvm_g.can_modules && jvm_g.opts.modules)
			(void)jvm_modules_live_init(jvmti, jni);
	}
	if (enable_events(jvmti, late)) {
		jvm_diag(JVM_LOG_ERROR, "cannot enable JVMTI events; running without the agent");
		return JNI_OK;
	}
	jvm_diag(JVM_LOG_INFO, "loaded (%s): tracing %s, line tables %s, modules %s",
		 late ? "attach" : "startup",
		 letw_tracing_available() ? "on" : "off (LETW_DISABLE or no lttng-ust)",
		 jvm_g.opts.lines && jvm_g.can_lines ? "on" : "off",
		 jvm_g.opts.modules && jvm_g.can_modules ? "per class loader" : "off");
	if (late)
		replay(jvmti);
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	return start(vm, options, 0);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	return start(vm, options, 1);
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	static atomic_int once;

	/* HotSpot calls this once per load of the library (a second jcmd
	 * load too): the counters are said once. See the top of the file:
	 * lttng-etw is left to the process exit. */
	if (!atomic_exchange(&once, 1))
		log_stats("unload");
}
