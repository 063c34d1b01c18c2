/* SPDX-License-Identifier: MIT */
/*
 * letw-minijit: a small x86-64 JIT that generates, runs, re-tiers and
 * frees real machine code and reports all of it through lttng-etw. It
 * never writes a perf map itself: names for its code must come from the
 * trace.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lttng-etw/lttng-etw.h>

#include "churn.h"
#include "hotloop.h"
#include "jitrt.h"
#include "reuse.h"
#include "source.h"

struct options {
	uint32_t functions, modules, hot;
	double seconds;
	const char *list, *source, *reuse;
	int list_hot, list_code, churn, verbose;
	uint32_t churn_batch, churn_pause_us;
};

static volatile sig_atomic_t stop_requested, reuse_requested;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		reuse_requested = 1;
	else
		stop_requested = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: letw-minijit [OPTION]...\n"
		"Generate, run, re-tier and free x86-64 code, published through lttng-etw.\n"
		"\n"
		"  -n, --functions N       functions to generate (default 2000)\n"
		"  -m, --modules K         modules minijit.Module0..K-1 (default 4)\n"
		"      --hot N             functions fn_0..fn_N-1 that dominate run time (default 5)\n"
		"  -s, --seconds S         run phase length, fractional allowed; 0 skips it (default 10)\n"
		"  -l, --list FILE         after setup write the live set to FILE, then FILE.ready\n"
		"      --list-hot          also write 'hot fn_<i>' lines to FILE (alias --hot-only)\n"
		"      --list-code         also write 'code fn_<i> HEX' lines (hot functions' bytes)\n"
		"      --source FILE       write the functions' source listing to FILE and publish\n"
		"                          line tables pointing into it (letw_method_publish_opts)\n"
		"      --reuse FILE        on SIGUSR1, free fn_0 and compile fn_3 at its address\n"
		"                          (needs --hot 4 or more, no --churn); what happened goes\n"
		"                          to FILE\n"
		"  -c, --churn             keep re-tiering/freeing/regenerating code in a second\n"
		"                          thread during the run (FILE is then the initial state)\n"
		"      --churn-batch N     functions changed per churn step (default 16, max 256)\n"
		"      --churn-pause-us U  sleep between churn steps (default 1000)\n"
		"  -v, --verbose           print library log messages and control requests\n"
		"  -h, --help              this text\n"
		"\n"
		"Exit status: 0 ok, 1 runtime or self-check failure, 2 usage error.\n"
		"LETW_DISABLE=1 runs the same program with the library emitting nothing.\n");
}

static int parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "letw-minijit: --%s: expected an integer in [%" PRIu32 ", %" PRIu32
			"], got '%s'\n", opt, min, max, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_HOT = 256, OPT_LIST_HOT, OPT_LIST_CODE, OPT_SOURCE, OPT_REUSE, OPT_BATCH,
	       OPT_PAUSE };
	static const struct option longopts[] = {
		{"functions", required_argument, NULL, 'n'},
		{"modules", required_argument, NULL, 'm'},
		{"hot", required_argument, NULL, OPT_HOT},
		{"seconds", required_argument, NULL, 's'},
		{"list", required_argument, NULL, 'l'},
		{"list-hot", no_argument, NULL, OPT_LIST_HOT},
		{"hot-only", no_argument, NULL, OPT_LIST_HOT},
		{"list-code", no_argument, NULL, OPT_LIST_CODE},
		{"source", required_argument, NULL, OPT_SOURCE},
		{"reuse", required_argument, NULL, OPT_REUSE},
		{"churn", no_argument, NULL, 'c'},
		{"churn-batch", required_argument, NULL, OPT_BATCH},
		{"churn-pause-us", required_argument, NULL, OPT_PAUSE},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	*o = (struct options){
		.functions = 2000, .modules = 4, .hot = 5, .seconds = 10,
		.churn_batch = 16, .churn_pause_us = 1000,
	};
	while ((c = getopt_long(argc, argv, "n:m:s:l:cvh", longopts, NULL)) != -1) {
		int bad = 0;
		char *end;

		switch (c) {
		case 'n': bad = parse_u32("functions", optarg, 1, 200000, &o->functions); break;
		case 'm': bad = parse_u32("modules", optarg, 1, 1000, &o->modules); break;
		case OPT_HOT: bad = parse_u32("hot", optarg, 0, 1000000, &o->hot); break;
		case 's':
			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->seconds >= 0) || o->seconds > 1e7) {
				fprintf(stderr, "letw-minijit: --seconds: expected a number >= 0, "
					"got '%s'\n", optarg);
				bad = 1;
			}
			break;
		case 'l': o->list = optarg; break;
		case OPT_LIST_HOT: o->list_hot = 1; break;
		case OPT_LIST_CODE: o->list_code = 1; break;
		case OPT_SOURCE: o->source = optarg; break;
		case OPT_REUSE: o->reuse = optarg; break;
		case 'c': o->churn = 1; break;
		case OPT_BATCH: bad = parse_u32("churn-batch", optarg, 1, 256, &o->churn_batch); break;
		case OPT_PAUSE:
			bad = parse_u32("churn-pause-us", optarg, 0, 10000000, &o->churn_pause_us);
			break;
		case 'v': o->verbose = 1; break;
		case 'h': usage(stdout); exit(0);
		default: bad = 1; break;
		}
		if (bad) {
			fprintf(stderr, "Try 'letw-minijit --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "letw-minijit: unexpected argument '%s'\nTry 'letw-minijit --help'.\n",
			argv[optind]);
		return -1;
	}
	if ((o->list_hot || o->list_code) && !o->list) {
		fprintf(stderr, "letw-minijit: --list-hot and --list-code need --list FILE\n");
		return -1;
	}
	if (o->reuse && o->churn) {
		fprintf(stderr, "letw-minijit: --reuse and --churn exclude each other\n");
		return -1;
	}
	/* A usage error (exit 2) here, not a runtime one after setup:
	 * jitrt_init caps the hot set at the function count. */
	if (o->reuse && (o->hot <= REUSE_NEW || o->functions <= REUSE_NEW)) {
		fprintf(stderr, "letw-minijit: --reuse needs --hot %u or more (and as many functions)\n",
			REUSE_NEW + 1);
		return -1;
	}
	return 0;
}

static void log_to_stderr(enum letw_log_level level, const char *msg, void *ctx)
{
	static const char *names[] = {"debug", "info", "warning", "error"};
	const struct options *o = ctx;

	if (o->verbose || level >= LETW_LOG_WARN)
		fprintf(stderr, "letw-minijit: lttng-etw %s: %s\n",
			level <= LETW_LOG_ERROR ? names[level] : "?", msg);
}

static void on_control(int code, int level, uint64_t match_any, int provider, void *ctx)
{
	fprintf(stderr, "letw-minijit: control request code=%d level=%d keywords=0x%" PRIx64
		" provider=%d\n", code, level, match_any, provider);
}

static int install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGUSR1, &sa, NULL)) {
		fprintf(stderr, "letw-minijit: sigaction: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int letw_start(struct options *o)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.log_fn = log_to_stderr,
		.log_ctx = o,
	};
	int ret = letw_init(&cfg);

	if (ret) {
		fprintf(stderr, "letw-minijit: letw_init: %s\n", strerror(-ret));
		return ret;
	}
	if (o->verbose) {
		ret = letw_set_control_fn(on_control, NULL);
		if (ret)
			fprintf(stderr, "letw-minijit: letw_set_control_fn: %s\n", strerror(-ret));
	}
	return ret;
}

static void summary(const struct options *o, const struct jitrt *rt, const struct hotloop_stats *st,
		    const struct churn *ch)
{
	printf("letw-minijit: %" PRIu32 " functions in %" PRIu32 " modules, %" PRIu64 " compiled, %"
	       PRIu64 " re-tiered, %" PRIu64 " freed, %" PRIu64 " regenerated, %" PRIu32 " stubs; ran %.2f s, %"
	       PRIu64 " calls, %" PRIu64 " wrong results",
	       rt->nfns, rt->nmodules, rt->n.compiled, rt->n.retiered, rt->n.freed, rt->n.regenerated,
	       rt->nstubs, st->seconds, st->calls, st->mismatches);
	if (o->churn)
		printf(", %" PRIu64 " churn ops", ch->ops);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct options o;
	struct jitrt rt;
	struct churn ch;
	struct hotloop_stats st;
	struct reuse reuse;
	struct hotloop_hook hook = { &reuse_requested, reuse_swap, &reuse };
	int ret, status = 1, churning = 0;

	if (parse_args(argc, argv, &o))
		return 2;
	/* FILE.ready of an earlier run would say "ready" before this run's
	 * list exists (LuaJIT/minijit audit: a reader saw the old run's 10
	 * methods). */
	if (o.list && jitrt_unready_list(o.list))
		return 1;
	if (install_signals() || letw_start(&o))
		return 1;
	memset(&st, 0, sizeof(st));
	memset(&ch, 0, sizeof(ch));
	ret = jitrt_init(&rt, o.functions, o.hot, o.modules);
	if (ret) {
		fprintf(stderr, "letw-minijit: cannot set up the runtime: %s\n", strerror(-ret));
		goto shutdown;
	}
	rt.source = o.source;
	source_assign_lines(&rt);
	if (o.source && source_write(&rt, o.source))
		goto shutdown;
	if (jitrt_setup(&rt))
		goto shutdown;
	if (o.reuse && reuse_prepare(&reuse, &rt, o.reuse))
		goto shutdown;
	if (o.list && jitrt_write_list(&rt, o.list, (o.list_hot ? JITRT_LIST_HOT : 0) |
					       (o.list_code ? JITRT_LIST_CODE : 0)))
		goto shutdown;
	if (o.churn) {
		ret = churn_start(&ch, &rt, o.churn_batch, o.churn_pause_us);
		if (ret) {
			fprintf(stderr, "letw-minijit: cannot start the churn thread: %s\n",
				strerror(-ret));
			goto shutdown;
		}
		churning = 1;
	}
	hotloop_run(&rt, o.seconds, &stop_requested, o.reuse ? &hook : NULL, &st);
	status = st.mismatches || st.hook_error ? 1 : 0;
shutdown:
	/* The churn thread publishes: stop it before the library goes. */
	if (churning && churn_stop(&ch))
		status = 1;
	ret = letw_shutdown();
	if (ret) {
		fprintf(stderr, "letw-minijit: letw_shutdown: %s\n", strerror(-ret));
		status = 1;
	}
	if (status == 0)
		summary(&o, &rt, &st, &ch);
	/* Code is unmapped only after the library dropped every record. */
	jitrt_destroy(&rt);
	return status;
}
