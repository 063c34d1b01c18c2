/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <lttng-etw/lttng-etw.h>

#include "chunkname.h"
#include "tracemap.h"

struct lh_slot {
	uint64_t code_start; /* valid when live */
	int live;
};

struct lh_chunk {
	char *source;       /* chunk name as LuaJIT reports it */
	uint64_t module_id; /* published with letw_module_publish */
};

struct lh_tracemap {
	struct lh_slot *slots; /* indexed by trace number */
	size_t nslots;
	struct lh_chunk *chunks;
	size_t nchunks, capchunks;
	uint64_t next_method_id; /* never reused: a trace number is */
	uint64_t generation;     /* flushes so far: the record's version_id */
	struct lh_counters c;
	FILE *verbose;
	struct letw_line *rows;  /* LH_LINES_MAX, for the trace being published */
	char **names;            /* file names as published (chunk paths) */
	size_t nnames;
};

struct lh_tracemap *lh_tracemap_new(FILE *verbose)
{
	struct lh_tracemap *m = calloc(1, sizeof(*m));

	if (m)
		m->verbose = verbose;
	return m;
}

/* Chunks are few (one per loaded file or string), so a linear search on
 * the trace-stop path is cheaper than keeping a hash table up to date. */
static uint64_t chunk_module(struct lh_tracemap *m, const char *source)
{
	char name[LH_CHUNK_NAME_MAX];
	struct letw_module mod;
	struct lh_chunk *ch;
	size_t i;
	int err;

	for (i = 0; i < m->nchunks; i++)
		if (strcmp(m->chunks[i].source, source) == 0)
			return m->chunks[i].module_id;
	if (m->nchunks == m->capchunks) {
		size_t cap = m->capchunks ? 2 * m->capchunks : 8;
		struct lh_chunk *n = realloc(m->chunks, cap * sizeof(*n));

		if (!n)
			return 0;
		m->chunks = n;
		m->capchunks = cap;
	}
	ch = &m->chunks[m->nchunks];
	ch->source = strdup(source);
	if (!ch->source)
		return 0;
	ch->module_id = m->nchunks + 1; /* ids start at 1: 0 means "none" */
	memset(&mod, 0, sizeof(mod));
	mod.module_id = ch->module_id;
	mod.name = lh_chunk_name(source, 0, name, sizeof(name));
	err = letw_module_publish(&mod);
	if (err && err != -ESHUTDOWN) {
		m->c.errors++;
		if (m->verbose)
			fprintf(m->verbose, "letw-luajit: module %s: %s\n",
				mod.name, strerror(-err));
	}
	m->nchunks++;
	return ch->module_id;
}

static int ensure_slot(struct lh_tracemap *m, unsigned int traceno)
{
	size_t n;
	struct lh_slot *s;

	if (traceno < m->nslots)
		return 0;
	n = m->nslots ? m->nslots : 64;
	while (n <= traceno)
		n *= 2;
	s = realloc(m->slots, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s + m->nslots, 0, (n - m->nslots) * sizeof(*s));
	m->slots = s;
	m->nslots = n;
	return 0;
}

static void retire(struct lh_tracemap *m, unsigned int traceno)
{
	struct lh_slot *s = &m->slots[traceno];
	int err;

	s->live = 0;
	err = letw_method_unpublish(s->code_start);
	if (err && err != -ESHUTDOWN) {
		m->c.errors++;
		if (m->verbose)
			fprintf(m->verbose,
				"letw-luajit: unpublish trace %u at 0x%" PRIx64
				": %s\n", traceno, s->code_start,
				strerror(-err));
		return;
	}
	m->c.unpublished++;
	if (m->verbose)
		fprintf(m->verbose, "letw-luajit: unpublished trace %u at 0x%" PRIx64 "\n",
			traceno, s->code_start);
}

void lh_tracemap_start(struct lh_tracemap *m, unsigned int traceno)
{
	/* LuaJIT only hands out a number whose trace it has freed. */
	if (traceno < m->nslots && m->slots[traceno].live) {
		m->c.replaced++;
		retire(m, traceno);
	}
}

/* File names as the line table gives them: each chunk's name
 * (chunkname.h: clean UTF-8, bounded). */
static int set_names(struct lh_tracemap *m, const struct lh_trace_info *t)
{
	for (size_t i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->names);
	m->nnames = 0;
	m->names = calloc(t->nfiles, sizeof(*m->names));
	if (!m->names)
		return -1;
	for (uint32_t i = 0; i < t->nfiles; i++) {
		char buf[LH_CHUNK_NAME_MAX];
		char *p = strdup(lh_chunk_name(t->files[i], 0, buf, sizeof(buf)));

		if (!p)
			return -1;
		m->names[m->nnames++] = p;
	}
	return 0;
}

/* The trace's line table (tracelines.h), or 0 when there is none. */
static int trace_lines(struct lh_tracemap *m, const struct lh_trace_info *t,
		       struct letw_method_opts *o)
{
	uint32_t n;

	if (!t->nrecs || !t->nfiles)
		return 0;
	if (!m->rows && !(m->rows = malloc(LH_LINES_MAX * sizeof(*m->rows))))
		return 0;
	n = lh_trace_lines(t->recs, t->nrecs, t->code_size, t->loop_offset, m->rows);
	if (!n || set_names(m, t))
		return 0;
	*o = (struct letw_method_opts){
		.size = sizeof(*o),
		.lines = m->rows,
		.nr_lines = n,
		.nr_files = (uint32_t)m->nnames,
		.files = (const char *const *)m->names,
	};
	return 1;
}

int lh_tracemap_stop(struct lh_tracemap *m, const struct lh_trace_info *t)
{
	const char *src = t->source && *t->source ? t->source : "=?";
	char name[256 + LH_CHUNK_NAME_MAX], sig[64], ns[LH_CHUNK_NAME_MAX];
	struct letw_method meth;
	struct letw_method_opts opts;
	int err;

	if (ensure_slot(m, t->traceno)) {
		m->c.errors++;
		return -ENOMEM;
	}
	/* A stop without a start for this number (we attached late) may
	 * still hide an older record under it. */
	lh_tracemap_start(m, t->traceno);

	lh_chunk_name(src, 1, ns, sizeof(ns));
	snprintf(name, sizeof(name), "trace#%u @%s:%u", t->traceno, ns, t->line);
	if (t->parent)
		snprintf(sig, sizeof(sig), "(side of #%u exit %u)", t->parent,
			 t->exitno);
	else
		snprintf(sig, sizeof(sig), "(root)");

	memset(&meth, 0, sizeof(meth));
	meth.method_id = ++m->next_method_id;
	meth.module_id = chunk_module(m, src);
	meth.code_start = t->code_start;
	meth.code_size = t->code_size;
	meth.method_token = t->line;
	meth.method_flags = LETW_METHOD_JITTED | LETW_METHOD_DYNAMIC;
	meth.version_id = m->generation;
	meth.method_namespace = ns;
	meth.name = name;
	meth.signature = sig;
	if (!trace_lines(m, t, &opts))
		opts = (struct letw_method_opts){ .size = sizeof(opts) };
	/* Called from the trace-stop hook: the machine code was just
	 * emitted and stays mapped until a flush, after this returns. */
	opts.flags = LETW_METHOD_OPT_CODE_READABLE;
	err = letw_method_publish_opts(&meth, &opts);
	if (opts.lines && (err == -E2BIG || err == -EINVAL || err == -ENAMETOOLONG)) {
		/* The line table broke one of lttng-etw's limits (16 KiB of
		 * file names: a trace inlining several big string chunks):
		 * the trace's name matters more than its lines. */
		if (m->verbose)
			fprintf(m->verbose, "letw-luajit: %s: line table refused (%s): published without it\n",
				name, strerror(-err));
		opts = (struct letw_method_opts){ .size = sizeof(opts),
						  .flags = LETW_METHOD_OPT_CODE_READABLE };
		err = letw_method_publish_opts(&meth, &opts);
	}
	if (err == -ESHUTDOWN)
		return 0; /* lttng-etw not initialised: run untraced */
	if (err) {
		m->c.errors++;
		if (m->verbose)
			fprintf(m->verbose,
				"letw-luajit: publish %s at 0x%" PRIx64 " (%u bytes): %s\n",
				name, t->code_start, t->code_size, strerror(-err));
		return err;
	}
	m->slots[t->traceno].code_start = t->code_start;
	m->slots[t->traceno].live = 1;
	m->c.published++;
	if (m->verbose)
		fprintf(m->verbose, "letw-luajit: published %s::%s%s at 0x%" PRIx64
			" size %u (%s)\n", meth.method_namespace, name, sig,
			t->code_start, t->code_size,
			t->linktype ? t->linktype : "?");
	return 0;
}

static void retire_all(struct lh_tracemap *m)
{
	size_t i;

	for (i = 0; i < m->nslots; i++)
		if (m->slots[i].live)
			retire(m, (unsigned int)i);
}

void lh_tracemap_flush(struct lh_tracemap *m)
{
	retire_all(m);
	m->generation++;
	m->c.flushes++;
}

void lh_tracemap_close(struct lh_tracemap *m, struct lh_counters *out)
{
	size_t i;

	if (!m)
		return;
	retire_all(m);
	for (i = 0; i < m->nchunks; i++) {
		int err = letw_module_unpublish(m->chunks[i].module_id);

		if (err && err != -ESHUTDOWN && err != -ENOENT)
			m->c.errors++;
		free(m->chunks[i].source);
	}
	if (out)
		*out = m->c;
	for (i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->names);
	free(m->rows);
	free(m->chunks);
	free(m->slots);
	free(m);
}
