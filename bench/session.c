/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session.h"

extern char **environ;

int bench_run(char *const argv[], char **out)
{
	posix_spawn_file_actions_t fa;
	int pipefd[2] = { -1, -1 };
	size_t len = 0, cap = 0;
	char *buf = NULL;
	pid_t pid;
	int status, ret;

	posix_spawn_file_actions_init(&fa);
	if (out) {
		if (pipe(pipefd))
			return -1;
		posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
		posix_spawn_file_actions_addclose(&fa, pipefd[0]);
		posix_spawn_file_actions_addclose(&fa, pipefd[1]);
	} else {
		/* Our stdout is the CSV stream: keep lttng's chatter out. */
		posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
						 O_WRONLY, 0);
	}
	ret = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (out)
		close(pipefd[1]);
	if (ret) {
		if (out)
			close(pipefd[0]);
		fprintf(stderr, "bench: cannot run %s: %s\n", argv[0], strerror(ret));
		return -1;
	}
	if (out) {
		for (;;) {
			ssize_t n;

			if (cap - len < 4096) {
				char *nb = realloc(buf, cap + 65536);

				if (!nb)
					break;
				buf = nb;
				cap += 65536;
			}
			n = read(pipefd[0], buf + len, cap - len - 1);
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		close(pipefd[0]);
		if (buf)
			buf[len] = '\0';
		*out = buf;
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int lttng(const char *what, char *const argv[])
{
	int ret = bench_run(argv, NULL);

	if (ret != 0)
		fprintf(stderr, "bench: lttng %s failed (status %d)\n", what, ret);
	return ret == 0 ? 0 : -1;
}

int bench_session_create_channels(struct bench_session *s, const struct bench_opts *o,
				  const char *tag, const struct bench_channel *ch,
				  unsigned nch)
{
	char out_opt[600], filter[64], vpid_opt[32];

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s-%s-%d", o->prefix, tag, (int)getpid());
	snprintf(s->path, sizeof(s->path), "%s/%s", o->outdir, s->name);
	snprintf(out_opt, sizeof(out_opt), "--output=%s", s->path);
	snprintf(filter, sizeof(filter), "$ctx.vpid == %d", (int)getpid());

	char *create[] = { "lttng", "create", s->name, out_opt, NULL };
	if (lttng("create", create))
		return -1;
	s->created = 1;

	/* Track our vpid, rather than only filtering on it: sessiond then
	 * pushes the event rules to our process alone, so our sessions do not
	 * flip the letw tracepoints (and trigger rundown passes) in other
	 * processes, as a filter-only rule does. */
	snprintf(vpid_opt, sizeof(vpid_opt), "--vpid=%d", (int)getpid());
	char *track[] = { "lttng", "track", "-u", "-s", s->name, vpid_opt, NULL };
	if (lttng("track", track))
		return -1;

	for (unsigned c = 0; c < nch; c++) {
		char sub_opt[64], num_opt[64];

		snprintf(sub_opt, sizeof(sub_opt), "--subbuf-size=%s", ch[c].subbuf);
		snprintf(num_opt, sizeof(num_opt), "--num-subbuf=%u", ch[c].num_subbuf);
		char *chan_blocking[] = { "lttng", "enable-channel", "-u", "-s", s->name,
					  sub_opt, num_opt, "--blocking-timeout=inf",
					  (char *)ch[c].name, NULL };
		char *chan_discard[] = { "lttng", "enable-channel", "-u", "-s", s->name,
					 sub_opt, num_opt, (char *)ch[c].name, NULL };
		if (lttng("enable-channel", ch[c].blocking ? chan_blocking : chan_discard))
			return -1;
		for (const char *const *ev = ch[c].events; *ev; ev++) {
			char *enable[] = { "lttng", "enable-event", "-u", "-s", s->name,
					   "-c", (char *)ch[c].name, (char *)*ev,
					   "--filter", filter, NULL };
			if (lttng("enable-event", enable))
				return -1;
		}
	}
	return 0;
}

int bench_session_create(struct bench_session *s, const struct bench_opts *o,
			 const char *tag, const char *const *events)
{
	struct bench_channel ch = {
		.name = "bench", .subbuf = o->subbuf, .num_subbuf = o->num_subbuf,
		.blocking = o->blocking, .events = events,
	};

	return bench_session_create_channels(s, o, tag, &ch, 1);
}

int bench_session_start(struct bench_session *s, uint64_t *before_ns,
			uint64_t *after_ns)
{
	char *argv[] = { "lttng", "start", s->name, NULL };
	uint64_t t0, t1;
	int ret;

	t0 = bench_now_ns();
	ret = lttng("start", argv);
	t1 = bench_now_ns();
	if (before_ns)
		*before_ns = t0;
	if (after_ns)
		*after_ns = t1;
	return ret;
}

int bench_session_stop(struct bench_session *s)
{
	char *argv[] = { "lttng", "stop", s->name, NULL };

	return lttng("stop", argv);
}

static uint64_t sum_tag(const char *xml, const char *tag)
{
	size_t tl = strlen(tag);
	uint64_t sum = 0;

	for (const char *p = strstr(xml, tag); p; p = strstr(p + tl, tag))
		sum += strtoull(p + tl, NULL, 10);
	return sum;
}

static char *list_xml(struct bench_session *s)
{
	char *argv[] = { "lttng", "--mi", "xml", "list", s->name, NULL };
	char *xml = NULL;
	int ret = bench_run(argv, &xml);

	if (ret != 0 || !xml) {
		free(xml);
		fprintf(stderr, "bench: lttng list %s failed\n", s->name);
		return NULL;
	}
	return xml;
}

int bench_session_discarded(struct bench_session *s, uint64_t *discarded,
			    uint64_t *lost_packets)
{
	char *xml = list_xml(s);

	if (!xml)
		return -1;
	*discarded = sum_tag(xml, "<discarded_events>");
	*lost_packets = sum_tag(xml, "<lost_packets>");
	free(xml);
	return 0;
}

int bench_session_channel_discarded(struct bench_session *s, const char *channel,
				    uint64_t *discarded, uint64_t *lost_packets)
{
	char *xml = list_xml(s), want[160], *p, *end;

	if (!xml)
		return -1;
	/* <channel><name>NAME</name>...</channel>: sum inside that element. */
	snprintf(want, sizeof(want), "<channel>\n<name>%s</name>", channel);
	p = strstr(xml, want);
	if (!p) {
		snprintf(want, sizeof(want), "<channel><name>%s</name>", channel);
		p = strstr(xml, want);
	}
	if (!p || !(end = strstr(p, "</channel>"))) {
		free(xml);
		fprintf(stderr, "bench: no channel %s in session %s\n", channel, s->name);
		return -1;
	}
	*end = '\0';
	*discarded = sum_tag(p, "<discarded_events>");
	*lost_packets = sum_tag(p, "<lost_packets>");
	free(xml);
	return 0;
}

void bench_session_destroy(struct bench_session *s, int keep)
{
	char *argv[] = { "lttng", "destroy", s->name, NULL };
	char *rm[] = { "rm", "-rf", s->path, NULL };

	if (!s->created)
		return;
	(void)lttng("destroy", argv);
	s->created = 0;
	if (!keep)
		(void)bench_run(rm, NULL);
}

void bench_channel_desc_of(const struct bench_channel *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s, %u x %s sub-buffers per CPU, per-UID buffers",
		 c->blocking ? "blocking (--blocking-timeout=inf)" : "discard",
		 c->num_subbuf, c->subbuf);
}

void bench_channel_desc(const struct bench_opts *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s, %u x %s sub-buffers per CPU, per-UID buffers",
		 o->blocking ? "blocking (--blocking-timeout=inf)" : "discard",
		 o->num_subbuf, o->subbuf);
}
