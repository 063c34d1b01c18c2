/* SPDX-License-Identifier: MIT */
/*
 * What the three sinks (perfmap, jitdump, report) share: one input port,
 * its message iterator, the consume loop, the decoding of lttng-etw
 * events, the trace's completeness (trace_facts.h) and its warning. Each
 * sink supplies callbacks for events, discarded events and the end of the
 * stream.
 */
#ifndef LETW_BT_SINK_COMMON_H
#define LETW_BT_SINK_COMMON_H

#include <stdint.h>
#include <babeltrace2/babeltrace.h>

#include "clock_id.h"
#include "codemap.h"
#include "event.h"
#include "made_dirs.h"
#include "names.h"
#include "passids.h"
#include "trace_facts.h"

/* Where the sink's thread is, for a supervisor that must tell a crash of
 * the CTF reader from one of ours. */
enum letw_sink_stage {
	LETW_STAGE_SETUP = 0,   /* building the graph, opening the traces */
	LETW_STAGE_READING,     /* inside the upstream iterator (the reader) */
	LETW_STAGE_ANALYSING,   /* our sink handling messages */
	LETW_STAGE_WRITING,     /* end of stream: our checks and output */
};

/* Progress and outcome shared with a caller that adds the sink with
 * initialize-method data (the lttng-etw CLI); NULL under babeltrace2.
 * Plain values only: the CLI keeps it in memory shared with the child
 * process that runs the graph and copies it back. */
struct letw_sink_result {
	uint64_t messages;      /* updated while consuming */
	uint64_t letw_events;
	int stage;              /* enum letw_sink_stage */
	int incomplete_passes;  /* report: passes not "complete"; perfmap,
				 * jitdump: truncated or lossy (passids.h) */
	int incomplete_streams; /* streams with a problem (trace_facts.h) */
	int processes;
	uint64_t map_lines;     /* perfmap sink */
	uint64_t jit_loads;     /* jitdump sink: LOAD records written, */
	uint64_t jit_code;      /* ... of which with the code's bytes, */
	uint64_t jit_lines;     /* ... and with a DEBUG_INFO record */
	int mixed_processes;    /* perfmap, jitdump: vpids that were several
				 * processes (passids.h), mixed in the output */
	int pid_namespaces;     /* seen in the pid_ns context; > 1: files went
				 * to DIR/pidns-INO/ (letw_sink_proc_dir) */
	int no_letw_events;     /* read whole, not one lttng-etw event: the
				 * sink's end then fails for that reason */
	int passless_processes; /* processes with events but no rundown pass
				 * in a trace that records passes and lost
				 * packets (letw_sink_passless_judged) */
	uint64_t pidns_only;    /* jitdump: the one pid namespace seen (0:
				 * none, or several), so that the CLI can
				 * tell whose dumps a flat chunk holds */
	/* The clock the sink's times are values of (its streams' default
	 * clock class, noted at each stream's beginning), so that the CLI
	 * merges only the jitdumps of chunks on one clock; clocks_mixed:
	 * streams on several. */
	struct letw_clock_id clock;
	int clock_known, clocks_mixed;
};

struct letw_sink;

struct letw_sink_ops {
	/* Return 0, or a negative errno to fail the graph (cause appended). */
	int (*event)(struct letw_sink *s, const struct letw_ev *ev);
	/* Optional: every other event message (schemas the shared decoder
	 * leaves to the sink that wants them). */
	int (*other)(struct letw_sink *s, const bt_message *msg);
	int (*discarded)(struct letw_sink *s, const bt_message *msg);
	int (*end)(struct letw_sink *s);
	/* Optional: a Complete event whose counter `bad` (a field name) is
	 * no count, already counted as an absurd record of its stream and
	 * never given to ->event: the pass it ends is damaged. */
	int (*damaged_complete)(struct letw_sink *s, const struct letw_ev *ev,
				const char *bad);
	/* Prefix of the sink's stderr lines ("perfmap"). */
	const char *name;
	/* Set by the report only, which prints the trace's completeness
	 * in the report itself: every other sink's output is built from
	 * the trace, so the shared end of stream warns on stderr (always,
	 * not gated by the log level) before ops->end, and no sink can
	 * forget to. */
	int quiet_incomplete;
	/* perfmap, jitdump: pair each process's Init and Complete events
	 * and count its rundown records (passids.h, letw_pass_acct), to say
	 * which passes are truncated or lossy; the report judges its passes
	 * itself. */
	int count_passes;
	/* jitdump: names code by time over the whole trace, not by what was
	 * live at the last pass, so runtime events lost after a process's
	 * first pass are what its output misses (runtime_gaps.c). */
	int dates_code;
};

struct letw_sink {
	bt_self_component *self;
	bt_self_component_sink *self_sink; /* the same, as a sink */
	bt_message_iterator *iter;
	const struct letw_sink_ops *ops;
	struct letw_sink_result *result; /* may be NULL */
	struct letw_ev_class_cache cache;
	struct letw_trace_facts facts;   /* judged before ops->end */
	struct letw_namebuf names;       /* letw_sink_region_name() */
	int warned_vpid;
	/* The pid namespaces seen in LTTng's pid_ns context, in order of
	 * first sight: the upper half of a process key indexes it. */
	uint64_t *pidns;
	uint32_t npidns, cappidns, last_pidns;
	/* Per process key, the pass ids of its Init events (passids.h):
	 * whether it was one process. Few processes: a short array. */
	struct letw_vpid_ids {
		int64_t vpid;
		struct letw_pass_ids ids;
		struct letw_pass_open open[2]; /* ops->count_passes */
		int64_t init_ns[2]; /* its latest Init per flavour (the sink's unit) */
		int64_t last_init_ts; /* its latest Init of either, ns from origin */
		int64_t first_init_ts; /* its earliest */
		int has_init;
		int64_t first_ns; /* ops->count_passes: its first event */
		int rundown_seen; /* ... and any rundown event (Init, Complete,
				   * record: one missing is a truncated pass) */
	} *vids;
	size_t nvids, capvids, last_vid;
	/* A stream class declares a rundown Init event: the session records
	 * passes (letw_sink_passless). */
	int rundown_declared;
	/* Processes with events but no pass that make the trace incomplete
	 * (letw_sink_say_passless). */
	int passless;
	/* ops->count_passes: passes not complete, and the first few. */
	struct letw_pass_acct acct;
	/* The directories letw_sink_output_dir() and letw_sink_proc_dir()
	 * made: letw_sink_fini() removes those still empty. */
	struct letw_made_dirs made;
};

/*
 * A process, in every sink's tables: its vpid, and in the upper half the
 * index of its pid namespace among those the trace showed (0: the first,
 * or a trace without the pid_ns context). Two processes with one vpid in
 * two pid namespaces (containers) are so two processes, and a trace with
 * one namespace keys, names and writes processes by vpid as before.
 */
static inline int64_t letw_proc_key(uint32_t nsidx, int64_t vpid)
{
	return (int64_t)(((uint64_t)nsidx << 32) | (uint32_t)vpid);
}

static inline int64_t letw_proc_vpid(int64_t key)
{
	return (int32_t)(uint32_t)key;
}

/* The key of an event's process (ev->proc is the same for the shared
 * decoder's events): 0, or -ENOMEM. Inline for the common trace, which
 * has no pid_ns context: it runs once per event. */
int letw_sink_proc_of_ns(struct letw_sink *s, int64_t vpid, uint64_t pid_ns, int64_t *key);
static inline int letw_sink_proc_of(struct letw_sink *s, int has_vpid, int64_t vpid,
				    int has_pid_ns, uint64_t pid_ns, int64_t *key)
{
	if (!has_vpid)
		vpid = 0;
	if (has_pid_ns)
		return letw_sink_proc_of_ns(s, vpid, pid_ns, key);
	*key = letw_proc_key(0, vpid);
	return 0;
}
/* More than one pid namespace seen: processes are then named and written
 * with theirs. */
static inline int letw_sink_many_pidns(const struct letw_sink *s)
{
	return s->npidns > 1;
}

/* LTTng declares in a trace's metadata the events enabled in its session
 * (and registered by a process): whether stream's class declares one
 * named PREFIX...SUFFIX (a rundown Init: the session records passes; a
 * letw_runtime event: the channel records runtime events). */
int letw_stream_declares(const bt_stream *stream, const char *prefix, const char *suffix);

/* After letw_facts_finish: note the streams whose lost first packets may
 * have held runtime events of a process after its latest pass
 * (runtime_gaps.c). A note, not a verdict: returns 0, or -ENOMEM. */
int letw_sink_runtime_gaps(struct letw_sink *s);

/* The pid_ns of a process key; 0 when the trace has no pid_ns context. */
uint64_t letw_sink_proc_pidns(const struct letw_sink *s, int64_t key);
/* How messages name a process: "VPID", or "VPID (pid_ns INO)" when the
 * trace showed several pid namespaces. Returns buf. */
#define LETW_PROC_LABEL_MAX 48
const char *letw_sink_proc_label(const struct letw_sink *s, int64_t key,
				 char buf[LETW_PROC_LABEL_MAX]);
/* The directory a process's output file goes to: dir itself, or
 * dir/pidns-INO (created) when the trace showed several pid namespaces, so
 * that two processes' perf-VPID.map never overwrite each other and each
 * namespace's files can go to its container's /tmp. *out is malloc()ed.
 * Returns 0 or a negative errno (cause appended). */
int letw_sink_proc_dir(struct letw_sink *s, int64_t key, const char *dir, char **out);

void letw_sink_init(struct letw_sink *s, bt_self_component_sink *self,
		    const struct letw_sink_ops *ops, void *init_data);

/* Shared component-class methods. Each sink's state struct starts with a
 * struct letw_sink, which is the component's user data. */
bt_component_class_sink_graph_is_configured_method_status
letw_sink_graph_is_configured(bt_self_component_sink *self);
/*
 * Whether the graph was interrupted (SIGINT/SIGTERM in the lttng-etw CLI
 * and in babeltrace2's): the sinks write their outputs in their last
 * consume, after the reader's end, where nothing else would stop them.
 * A writer that sees it stops, removes its temporary file (the previous
 * output stays as it was) and fails with letw_sink_say_interrupted().
 */
int letw_sink_interrupted(const struct letw_sink *s);
/* The cause of that failure: `path` not written. */
void letw_sink_say_interrupted(struct letw_sink *s, const char *path);
bt_component_class_sink_consume_method_status
letw_sink_consume(bt_self_component_sink *self);
/* Adds the "in" port; returns 0 or -1 (cause appended). */
int letw_sink_add_port(bt_self_component_sink *self);
/* The output directory of perfmap and jitdump, made (mkdir -p) and checked
 * at init rather than after reading a whole (or a live) trace: writable
 * (a file made in it: access(2) lets root write to /proc),
 * and not a trace's own directory (one holding `metadata`: its files would
 * be read as damaged streams ever after). 0, or -1 with an error cause.
 * The directories it made are removed again by letw_sink_fini() if the run
 * wrote nothing into them. */
int letw_sink_output_dir(struct letw_sink *s, const char *dir);
void letw_sink_fini(struct letw_sink *s);

/* The pass ids seen for a process key (passids.h), or NULL when it had no
 * rundown event (none counted: no Init). */
const struct letw_pass_ids *letw_sink_pass_ids(const struct letw_sink *s, int64_t key);
/* When the process key's latest rundown pass of flavour fl began (its
 * Init's time, in the unit the sink decodes: ts_ns, or raw_ns for a
 * raw_ns cache), or 0 before any. */
int64_t letw_sink_pass_begin(const struct letw_sink *s, int64_t key, enum letw_flavour fl);
/* ops->count_passes, at the end: the passes still open are truncated;
 * returns how many passes are not complete (s->acct), having warned of
 * them on stderr ("NAME: ..."). */
int letw_sink_say_passes(struct letw_sink *s);
/* Whether a process whose events are in the trace has no rundown pass in
 * it while the trace records passes (rundown_declared). has_init: it has
 * an Init of either flavour. If it ran before the session, the code it
 * loaded before its first event here is in no output: its pass was
 * overwritten or lost, is in another chunk, or an event rule's --filter
 * dropped it. One that started during the session may have run none: a
 * process polling for its passes (LETW_STATEDUMP=0) that exits within
 * ~10 ms of letw_init, before its first poll (a nopass audit). So it is a
 * verdict (incomplete) only when the trace lost packets that may have held
 * the pass (letw_sink_passless_judged), else a note. */
static inline int letw_sink_passless(const struct letw_sink *s, int has_init)
{
	return s->rundown_declared && !has_init;
}

static inline int letw_sink_passless_judged(const struct letw_sink *s)
{
	return letw_facts_lost_packets(&s->facts);
}
/* ops->count_passes, at the end: the processes letw_sink_passless names,
 * said on stderr ("NAME: ..."); returns how many count against the
 * trace's completeness (s->passless: all of them when judged, else 0). */
int letw_sink_say_passless(struct letw_sink *s);
/* perfmap and jitdump at the end: warn of every process key that was
 * several processes, whose `what` (map, dump) mixes them; returns how
 * many. */
int letw_sink_say_mixed(struct letw_sink *s, const char *what);

/* The perf map name of a method or stub record (names.h), in a buffer of
 * the sink's valid until the next call; NULL when out of memory. */
const char *letw_sink_region_name(struct letw_sink *s, const struct letw_ev *ev);

/* The same name as a struct letw_name_src (codemap.h) over ev, compared
 * by its parts (names.h) and built only when asked; ev and s must outlive
 * the use of src. */
struct letw_sink_name {
	struct letw_sink *s;
	const struct letw_ev *ev;
};
void letw_sink_name_src(struct letw_sink_name *n, struct letw_name_src *src,
			struct letw_sink *s, const struct letw_ev *ev);

/* Parameter helpers: return 0 on success (missing optional parameter
 * leaves *out unchanged), -1 with an error cause on a bad type/value. */
int letw_param_string(bt_self_component *self, const bt_value *params,
		      const char *key, const char **out);
/* The same for a path: an empty string is refused, naming key. */
int letw_param_path(bt_self_component *self, const bt_value *params,
		    const char *key, const char **out);
int letw_param_bool(bt_self_component *self, const bt_value *params,
		    const char *key, int *out);
/* Fails with a cause naming the first key of params not in allowed. */
int letw_params_check(bt_self_component *self, const bt_value *params,
		      const char *const *allowed);

#endif /* LETW_BT_SINK_COMMON_H */
