/* SPDX-License-Identifier: MIT */
/*
 * letw_graph_run(): pre-check, then run the graph in a child process and
 * watch it. babeltrace2 2.0's CTF reader aborts, divides by zero or spins
 * forever on some damaged traces (DESIGN §6: no crash, no hang reaches
 * the user), and nothing inside the process can survive that; a parent
 * can:
 *  - a signal ending the child becomes "the CTF reader (libbabeltrace2)
 *    crashed on TRACE: SIGABRT" (or, when the child was in our own sink
 *    code, a crash of lttng-etw's analysis), with what the reader printed;
 *  - a child that burns stall_timeout seconds of CPU without progress is
 *    killed, naming the trace files it has open (or, in our own sink
 *    code, as a hang of lttng-etw's analysis). Progress is any change
 *    of: messages consumed, graph phase, bytes read (rchar), page faults
 *    (the reader maps stream files), and bytes written (wchar) while our
 *    sink writes its output after the last message. CPU time rather than wall-clock time,
 *    so a loaded machine or an idle live session is never taken for a
 *    hang;
 *  - a child asleep in an open() or read() of a trace file (readerproc.c)
 *    for stall_timeout seconds of wall time without progress is killed
 *    too, naming the file: a FIFO in place of a trace file waits forever
 *    and burns no CPU. Only for traces in files (a live reader waits for
 *    relayd), and never for a write (our output to a pager);
 *  - the child's heap is capped (memlimit.c): a reader that allocates
 *    past it for a damaged length is reported as out of memory;
 *  - the reader's error-level log lines (where 2.0 says which metadata
 *    line failed: that is not in its error causes) are captured from the
 *    child's stderr and the first one is printed as the reason.
 * A child ended by a signal leaves the output it was writing under its
 * temporary name, which carries its pid: removed (replace_file.h).
 * The sink result lives in a shared page; the child's other stderr lines
 * (our sinks' warnings) pass through as they come.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "allocwatch.h"
#include "fdlimit.h"
#include "graph.h"
#include "grow.h"
#include "hugeheap.h"
#include "json_out.h"
#include "made_dirs.h"
#include "memlimit.h"
#include "precheck.h"
#include "readerlog.h"
#include "readerproc.h"
#include "replace_file.h"
#include "traces.h"

#define STALL_DEFAULT_S 10.0
#define POLL_MS 100

static volatile sig_atomic_t got_signal;
volatile sig_atomic_t letw_graph_stopped;

static void on_parent_signal(int sig)
{
	got_signal = sig;
}

static double stall_limit(const struct letw_graph_opts *o)
{
	const char *env = getenv("LETW_STALL_TIMEOUT");
	char *end;
	double v;

	if (o->stall_timeout > 0)
		return o->stall_timeout;
	if (env && *env) {
		v = strtod(env, &end);
		if (!*end && v > 0)
			return v;
		letw_err("ignoring LETW_STALL_TIMEOUT=`%s` (not a positive number of seconds)", env);
	}
	return STALL_DEFAULT_S;
}

static void show_progress(const struct letw_graph_shared *sh, double t0, int final,
			  struct letw_reader_log *rl)
{
	fprintf(stderr, "\r%s: %llu messages, %llu lttng-etw events, %.1f s%s",
		letw_prog, (unsigned long long)sh->result.messages,
		(unsigned long long)sh->result.letw_events, letw_now_s() - t0,
		final ? "\n" : "");
	rl->progress_shown = !final;
}

/* The reason printed after "lttng-etw: <what>: ": the reader's first
 * error-level log line, else the root of the error chain (its first
 * cause: causes are appended as the error travels up). */
static const char *reason_of(const struct letw_graph_shared *sh,
			     const struct letw_reader_log *rl)
{
	static char buf[1024];
	const char *p = strchr(sh->err_causes, '\t');

	if (rl->root[0]) {
		if (rl->root_is_metadata && sh->current[0])
			snprintf(buf, sizeof(buf), "%.500s (metadata of `%.480s`)", rl->root,
				 sh->current);
		else
			snprintf(buf, sizeof(buf), "%s", rl->root);
		return buf;
	}
	if (!p)
		return NULL;
	snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
	return buf;
}

/* One cause, "WHO\tWHAT" in [p, end): as text (it may quote trace file
 * names). */
static void print_cause(const char *p, const char *tab, const char *end)
{
	char *line = NULL;

	if (asprintf(&line, "  %.*s: %.*s", (int)(tab - p), p, (int)(end - tab - 1),
		     tab + 1) < 0)
		return;
	letw_text_line(stderr, "", line);
	free(line);
}

static void print_error(const struct letw_graph_shared *sh,
			const struct letw_reader_log *rl, int verbose)
{
	const char *reason = reason_of(sh, rl), *p;

	if (reason && *reason)
		letw_err("%s: %s", sh->err_what, reason);
	else
		letw_err("%s", sh->err_what);
	/* The rest of the chain, root first: component causes always; the
	 * library's own ("Component initialization method failed:
	 * status=ERROR, comp-addr=...") only with -v. */
	for (p = sh->err_causes; *p;) {
		size_t n = strcspn(p, "\n");
		const char *tab = memchr(p, '\t', n);

		if (tab && (verbose || *p == '[') &&
		    !(reason && strncmp(tab + 1, reason, (size_t)(p + n - tab - 1)) == 0 &&
		      strlen(reason) == (size_t)(p + n - tab - 1)))
			print_cause(p, tab, p + n);
		p += n;
		if (*p == '\n')
			p++;
	}
}

static const char *signame(int sig)
{
	const char *d = sigabbrev_np(sig);
	static char buf[32];

	if (!d)
		return "an unknown signal";
	snprintf(buf, sizeof(buf), "SIG%s", d);
	return buf;
}

/* The child is in our sink's code, not in the reader's: creating it
 * (report -o opens its file then), or handling and writing. */
static int in_our_code(const struct letw_graph_shared *sh)
{
	return sh->phase == LETW_PHASE_SINK ||
	       (sh->phase == LETW_PHASE_RUNNING &&
		(sh->result.stage == LETW_STAGE_ANALYSING || sh->result.stage == LETW_STAGE_WRITING));
}

/* Writing its output: its writes are progress then. Not before, when
 * they would be the child's stderr only (a reader looping over a warning
 * must still be stopped). */
static int writing(const struct letw_graph_shared *sh)
{
	return sh->phase == LETW_PHASE_RUNNING && sh->result.stage == LETW_STAGE_WRITING;
}

static void print_crash(const struct letw_graph_opts *o,
			const struct letw_graph_shared *sh,
			const struct letw_reader_log *rl, int sig)
{
	int i;

	if (in_our_code(sh)) {
		letw_err("lttng-etw's analysis crashed on `%s`: %s (a bug in lttng-etw: please report it with the trace)",
			 o->trace, signame(sig));
		return;
	}
	if (sh->phase == LETW_PHASE_OPENING)
		letw_err("the CTF reader (libbabeltrace2) crashed on `%s`: %s, while opening `%s`: the trace is damaged",
			 o->trace, signame(sig), sh->current);
	else
		letw_err("the CTF reader (libbabeltrace2) crashed on `%s`: %s, while reading it: the trace is damaged",
			 o->trace, signame(sig));
	for (i = 0; i < rl->nlast; i++)
		fprintf(stderr, "  libbabeltrace2: %s\n", rl->last[i]);
}

/* The sink's output directory (perfmap's and jitdump's "output-dir"), or
 * NULL. */
static const char *output_dir_of(const struct letw_graph_opts *o)
{
	const bt_value *dv = o->params && bt_value_is_map(o->params) ?
		bt_value_map_borrow_entry_value_const(o->params, "output-dir") : NULL;

	return dv && bt_value_is_string(dv) ? bt_value_string_get(dv) : NULL;
}

/* Before the child runs: the directories its sink may make, and take back
 * in its letw_sink_fini() when it writes nothing into them; should it die
 * by a signal, that never runs. Those missing now (its mkdir -p of the
 * output directory) into made, the pidns-* there now (it makes the others:
 * letw_sink_proc_dir()) into had. 0, or -1 (out of memory: none noted,
 * and none is to be taken back, a pidns-* that was there included). */
static int note_child_dirs(const struct letw_graph_opts *o, struct letw_made_dirs *made,
			   struct letw_made_dirs *had)
{
	const char *dir = output_dir_of(o);

	if (dir && (letw_made_dirs_note_missing(made, dir) || letw_made_dirs_subdirs(had, dir))) {
		letw_made_dirs_fini(made);
		letw_made_dirs_fini(had);
		return -1;
	}
	return 0;
}

/* The child died by a signal: what it made and left empty (its temporary
 * files removed first) is taken back as its letw_sink_fini() would have. */
static void take_back_child_dirs(const struct letw_graph_opts *o, struct letw_made_dirs *made,
				 const struct letw_made_dirs *had)
{
	const char *dir = output_dir_of(o);

	if (dir)
		(void)letw_made_dirs_new_subdirs(made, dir, had);
	letw_made_dirs_take_back(made);
}

/* The child died by a signal (a crash, or killed as hung): the output it
 * was writing is left under its temporary name, which carries the
 * child's pid (replace_file.h). Removed as the child would have; what it
 * had put in place stays. */
static void remove_child_temps(const struct letw_graph_opts *o, pid_t pid)
{
	const bt_value *fv = NULL;
	char *copy = NULL;
	const char *dir = output_dir_of(o);
	int n;

	/* Where the sink writes: its output directory, or the directory of
	 * the file the report replaces: through a link of the caller's, the
	 * file it names (letw_output_target(), as report_file.c resolves it),
	 * in another directory than the link's. */
	if (!dir) {
		if (o->params && bt_value_is_map(o->params))
			fv = bt_value_map_borrow_entry_value_const(o->params, "output");
		if (!fv || !bt_value_is_string(fv))
			return;
		copy = letw_output_target(bt_value_string_get(fv));
		if (!copy)
			copy = strdup(bt_value_string_get(fv));
		if (!copy)
			return;
		dir = dirname(copy);
	}
	n = letw_remove_temps(dir, pid);
	if (n < 0)
		letw_note("warning: cannot remove the unfinished output the reader left in `%s`: %s",
			 dir, strerror(-n));
	free(copy);
}

static int wait_child(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

static int supervise(const struct letw_graph_opts *o, char **dirs, size_t ndirs,
		     struct letw_graph_shared *sh, struct letw_sink_result *r)
{
	int progress = o->progress < 0 ? isatty(STDERR_FILENO) : o->progress;
	double limit = stall_limit(o), t0 = letw_now_s(), last_show = t0;
	struct sigaction sa = { .sa_handler = on_parent_signal }, old_int, old_term, old_hup;
	struct letw_reader_log rl = { .verbose = o->verbose };
	struct letw_child_stat cs = { 0 }, prev = { 0 };
	uint64_t prev_msgs = 0;
	int prev_phase = -1, status = 0, pfd[2], eof = 0, stalled = 0, interrupted = 0;
	unsigned long long still_ticks = 0; /* CPU ticks since progress */
	double waiting_since = 0;           /* asleep on trace input since */
	char waited[PATH_MAX];
	uint64_t mem_mib = letw_memory_limit_mib(o->memory_limit_mib);
	long hz = sysconf(_SC_CLK_TCK);
	struct letw_made_dirs made = { 0 }, had = { 0 };
	int noted;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) != 0) {
		letw_err("pipe: %s", strerror(errno));
		return -1;
	}
	noted = note_child_dirs(o, &made, &had) == 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		letw_err("fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		letw_made_dirs_fini(&made);
		letw_made_dirs_fini(&had);
		return -1;
	}
	if (pid == 0) {
		/* Never outlive the supervisor. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], STDERR_FILENO);
		int err = letw_memory_limit_apply(mem_mib);

		if (err == -ENOMEM) {
			/* Worded like g_malloc's message (on_line()): the
			 * parent reports it as the limit reached. */
			fprintf(stderr, "lttng-etw: failed to allocate: the reader holds more than its %llu MiB memory limit before it starts\n",
				(unsigned long long)mem_mib);
			_exit(1);
		}
		if (err)
			fprintf(stderr, "lttng-etw: warning: cannot limit the reader's memory to %llu MiB: %s\n",
				(unsigned long long)mem_mib, strerror(-err));
		/* Every stream file stays open while the graph runs: the
		 * parent checked that the hard limit holds them. */
		err = letw_fd_limit_raise();
		if (err)
			fprintf(stderr, "lttng-etw: warning: cannot raise the reader's open-file limit (ulimit -n) to its hard limit: %s\n",
				strerror(-err));
		letw_allocwatch_arm(&sh->alloc_failed);
		/* Not an error when it cannot: the heap stays in 4 KiB pages.
		 * The sinks' large arrays (grow.h) follow the heap. */
		letw_grow_huge_pages(letw_hugeheap_prepare(o->trace, mem_mib << 20) == 1);
		status = letw_graph_run_here(o, dirs, ndirs, sh) ? 1 : 0;
		/* _exit: the parent's atexit handlers are not the child's. */
		fflush(NULL);
		_exit(status);
	}
	close(pfd[1]);
	got_signal = 0;
	/* SIGHUP too: a closed terminal or ssh session is an interrupt,
	 * not a reason to leave a half-written temporary file behind. */
	letw_catch_unless_ignored(SIGINT, &sa, &old_int);
	letw_catch_unless_ignored(SIGTERM, &sa, &old_term);
	letw_catch_unless_ignored(SIGHUP, &sa, &old_hup);
	while (!eof) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		char buf[4096];
		ssize_t n;

		if (poll(&p, 1, POLL_MS) > 0) {
			n = read(pfd[0], buf, sizeof(buf));
			if (n > 0)
				letw_rlog_output(&rl, buf, (size_t)n);
			else if (n == 0 || errno != EINTR)
				eof = 1;
		}
		if (got_signal) {
			/* Ctrl-C reaches the child too; kill(1) may not. */
			kill(pid, got_signal);
			interrupted = got_signal;
			got_signal = 0;
		}
		if (eof || letw_child_stat(pid, &cs) != 0)
			continue;
		if (sh->result.messages != prev_msgs || sh->phase != prev_phase ||
		    cs.rchar != prev.rchar || cs.faults != prev.faults ||
		    (cs.wchar != prev.wchar && writing(sh))) {
			still_ticks = 0;
			waiting_since = 0;
		} else if (cs.cpu_ticks > prev.cpu_ticks) {
			still_ticks += cs.cpu_ticks - prev.cpu_ticks;
			waiting_since = 0;
		} else if (ndirs && !waiting_since &&
			   letw_child_waits_on_input(pid, dirs, ndirs, waited, sizeof(waited))) {
			/* Asleep, not spinning: the CPU-time watch never fires.
			 * On a trace in files (not live: there the reader waits
			 * for relayd) an open or a read of a trace file that
			 * sleeps through the limit in wall time is a hang (a
			 * FIFO in place of a trace file waits forever). */
			waiting_since = letw_now_s();
		}
		if (waiting_since && letw_now_s() - waiting_since >= limit &&
		    letw_child_waits_on_input(pid, dirs, ndirs, waited, sizeof(waited))) {
			kill(pid, SIGKILL);
			stalled = 1;
			letw_rlog_clear_progress(&rl);
			letw_err("the CTF reader (libbabeltrace2) waited %.3g s on `%s` without progress on `%s` (not a regular file?): stopped, the trace is damaged (LETW_STALL_TIMEOUT or --stall-timeout sets the limit)",
				 limit, waited, o->trace);
			break;
		}
		prev = cs;
		prev_msgs = sh->result.messages;
		prev_phase = sh->phase;
		if ((double)still_ticks >= limit * (double)hz) {
			char files[2048];

			letw_child_open_files(pid, dirs, ndirs, files, sizeof(files));
			kill(pid, SIGKILL);
			stalled = 1;
			letw_rlog_clear_progress(&rl);
			/* Not the reader's, nor the trace's doing. */
			if (in_our_code(sh))
				letw_err("lttng-etw's analysis of `%s` made no progress for %.3g s of CPU time while %s: stopped (a bug in lttng-etw: please report it with the trace; LETW_STALL_TIMEOUT or --stall-timeout sets the limit)",
					 o->trace, limit,
					 sh->phase == LETW_PHASE_SINK ? "opening its output" :
					 sh->result.stage == LETW_STAGE_WRITING ? "writing its output" :
					 "handling the trace's events");
			else
				letw_err("the CTF reader (libbabeltrace2) made no progress on `%s` for %.3g s of CPU time%s%s: stopped, the trace is damaged (LETW_STALL_TIMEOUT or --stall-timeout sets the limit)",
					 o->trace, limit, files[0] ? " while reading " : "", files);
			break;
		}
		if (progress && letw_now_s() - last_show >= 0.5) {
			last_show = letw_now_s();
			show_progress(sh, t0, 0, &rl);
		}
	}
	if (rl.plen)
		letw_rlog_output(&rl, "\n", 1);
	close(pfd[0]);
	wait_child(pid, &status);
	if (WIFSIGNALED(status)) {
		remove_child_temps(o, pid);
		if (noted)
			take_back_child_dirs(o, &made, &had);
	}
	letw_made_dirs_fini(&made);
	letw_made_dirs_fini(&had);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	/* Asked to stop (Ctrl-C reaches the child alone when the parent's
	 * handler has not run yet), or our output is gone: a caller with
	 * more runs to do (the chunks of a session) does not start them. */
	if (!interrupted && sh->interrupted)
		interrupted = sh->interrupted;
	if (!interrupted && WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT ||
						    WTERMSIG(status) == SIGTERM ||
						    WTERMSIG(status) == SIGHUP))
		interrupted = WTERMSIG(status);
	/* An interrupt is the command's exit status 130, as for the session
	 * commands and any other command a shell user stops (exit 1 read as
	 * a failed analysis: a script could not tell Ctrl-C from a damaged
	 * trace). The outputs are as the sinks left them: each put in place
	 * whole, or not at all. */
	if (interrupted)
		letw_interrupted = interrupted;
	if (interrupted || (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE))
		letw_graph_stopped = 1;
	*r = sh->result;
	if (stalled)
		return -1;
	if ((rl.oom || sh->alloc_failed) && !interrupted &&
	    (WIFSIGNALED(status) || WEXITSTATUS(status) != 0)) {
		letw_rlog_clear_progress(&rl);
		/* Whose allocation crossed the limit (the reader's or a sink's,
		 * even glib's message does not tell: the sinks use g_malloc too)
		 * and what for is unknown: both reasons stay possible. */
		letw_err("analysing `%s` ran out of memory (limit %llu MiB): stopped; the trace needs more (LETW_MEMORY_LIMIT or --memory-limit MIB sets the limit), or is damaged (a length field read as huge)",
			 o->trace, (unsigned long long)mem_mib);
		return -1;
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		letw_rlog_clear_progress(&rl);
		if (sig == SIGPIPE)
			return -1; /* our output was closed (`| head`): nothing to say */
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || interrupted)
			letw_err("interrupted");
		else if (sig == SIGKILL)
			letw_err("the process reading `%s` was killed (SIGKILL: out of memory?)", o->trace);
		else
			print_crash(o, sh, &rl, sig);
		return -1;
	}
	if (interrupted && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		/* The signal came after the child's last check (its outputs
		 * are complete and in place): the command was still asked to
		 * stop, and it stops as at any other moment. */
		letw_rlog_clear_progress(&rl);
		letw_err("interrupted");
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		letw_rlog_clear_progress(&rl);
		if (sh->has_error)
			print_error(sh, &rl, o->verbose);
		else
			letw_err("cannot process the trace `%s` (reader exit status %d)", o->trace,
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	if (progress && last_show != t0)
		show_progress(sh, t0, 1, &rl);
	else
		letw_rlog_clear_progress(&rl);
	return 0;
}

int letw_graph_run(const struct letw_graph_opts *o, struct letw_sink_result *r)
{
	struct letw_traces t = { 0 };
	struct letw_graph_shared *sh;
	int live = letw_trace_is_live(o->trace);
	const char *no_pre = getenv("LETW_NO_PRECHECK");
	size_t i;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (!live) {
		if (letw_traces_find(o->trace, &t))
			return -1;
		/* LETW_NO_PRECHECK=1 hands damaged traces to the reader as
		 * they are (to see what it does; the tests use it to check
		 * the supervisor). */
		for (i = 0; i < t.n && !(no_pre && *no_pre == '1');) {
			int pre = letw_precheck_trace(t.dir[i], o->verbose);

			if (pre < 0)
				goto out;
			if (pre == 0) {
				i++;
				continue;
			}
			letw_note("left out `%s`: a process that exited before LTTng described its channel (its metadata declares no stream; its stream files hold no event)",
				  t.dir[i]);
			free(t.dir[i]);
			memmove(&t.dir[i], &t.dir[i + 1], (t.n - i - 1) * sizeof(*t.dir));
			t.n--;
		}
		/* Nothing left to read (no source at all would read as a live
		 * session: see letw_graph_run_here()). */
		if (!t.n) {
			letw_err("cannot process the trace `%s`: no lttng-etw events in the trace (every trace under it left out, above)",
				 o->trace);
			/* As a trace without lttng-etw events: a chunk of a
			 * rotated session is then skipped (graph_cmd.c). */
			r->no_letw_events = 1;
			goto out;
		}
		if (o->verbose)
			letw_note("%zu CTF trace(s) under %s", t.n, o->trace);
		/* Refused before reading rather than failing half-way on
		 * whichever stream file came last. */
		if (letw_fd_limit_check(t.dir, t.n))
			goto out;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		letw_err("mmap: %s", strerror(errno));
		goto out;
	}
	memset(sh, 0, sizeof(*sh));
	ret = supervise(o, t.dir, t.n, sh, r);
	munmap(sh, sizeof(*sh));
out:
	letw_traces_fini(&t);
	return ret;
}
