/* SPDX-License-Identifier: MIT */
/*
 * Merging the chunks' dumps of one process (jitdump_merge.h). Each chunk
 * was read on its own, so each dump dates the code it saw loaded at the
 * load, and the code its rundown (DCStart) re-enumerated without a load at
 * LETW_JD_BEFORE_TRACE_NS (jitdump_proc.h): "there before the chunk". The
 * merge keeps every LOAD at its time except:
 *  - a LOAD identical (address, size, name, code bytes) to the one that
 *    is the mapping there at its time in what came before (earlier chunks,
 *    and this chunk's earlier records): written once, not again (a region
 *    live across a rotation, re-enumerated by the next chunk's rundown;
 *    the same load in two overlapping snapshots);
 *  - a LOAD "there before the chunk" that differs from what the earlier
 *    chunks last mapped over its addresses: dated at this chunk's start
 *    (its dump's header), since the earlier code ended at some time before
 *    this chunk began (at 1 ns, it would sort before them and perf would
 *    name their samples after it).
 * Then every LOAD gets a new code_index, unique in the file (perf names
 * the ELF file it makes for a LOAD jitted-PID-INDEX.so), MOVE records the
 * index of the LOAD they name, and the dump ends with one CLOSE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "cli.h"
#include "jitdump_merge.h"
#include "jitdump_proc.h"
#include "jitdump_read.h"
#include "jitdump_units.h"
#include "jitdump_write.h"
#include "made_dirs.h"
#include "replace_file.h"

/* One chunk's dump of the process, mapped. */
struct dump {
	size_t chunk;
	char *path;
	const uint8_t *buf;
	size_t len;
	struct letw_jd_header h;
};

/* Everything of one process (pid namespace ino, vpid). */
struct proc {
	uint64_t ino;
	uint32_t pid;
	GArray *dumps; /* struct dump, in chunk order */
};

struct merge {
	const char *dir;
	const struct letw_jd_chunk_out *c;
	int many;          /* the output goes to DIR/pidns-INO/ */
	int merged;
	uint64_t loads, repeats;
	/* The pidns-INO directories out_dir() made: taken back at the end
	 * if the merged dump meant for one was not written (a full disk,
	 * an interrupt). */
	struct letw_made_dirs made;
};

static int stop_now(void *unused)
{
	(void)unused;
	return letw_interrupted != 0;
}

/* The times of every chunk with dumps are raw values of one clock (the
 * dumps hold CLOCK_MONOTONIC ns only if each chunk's clock class is
 * LTTng's `monotonic` of this boot): else nothing is merged, said. */
static int clocks_agree(const struct letw_jd_chunk_out *c, size_t n)
{
	const struct letw_jd_chunk_out *first = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!c[i].written || !c[i].clock_known)
			continue;
		if (c[i].clocks_mixed) {
			letw_note("jitdump: chunk %s dates its events with several clocks: the chunks' dumps are not merged (each is in DIR/<chunk>/)",
				  c[i].name);
			return 0;
		}
		if (!first) {
			first = &c[i];
		} else if (!letw_clock_id_same(&first->clock, &c[i].clock)) {
			letw_note("jitdump: chunk %s dates its events with clock `%s` and chunk %s with another (`%s`, or the same name of another boot): their times cannot be put in one order, so the chunks' dumps are not merged (each is in DIR/<chunk>/)",
				  first->name, first->clock.name, c[i].name, c[i].clock.name);
			return 0;
		}
	}
	return 1;
}

/* "jit-PID.dump" → PID; -1 for any other name. */
static long dump_pid(const char *name)
{
	char *end;
	long v;

	if (strncmp(name, "jit-", 4) != 0 || name[4] < '0' || name[4] > '9')
		return -1;
	v = strtol(name + 4, &end, 10);
	return strcmp(end, ".dump") == 0 && v >= 0 && v <= UINT32_MAX ? v : -1;
}

/* Written by this run: not older than its start, less 2 s for the
 * filesystems that keep times in whole seconds (or two), and not from the
 * future (a copied file or a clock set back: an audit merged a planted
 * dump of a process not in the trace). */
static int this_run(const struct timespec *t, const struct timespec *began)
{
	time_t s = began->tv_sec - 2;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (t->tv_sec > now.tv_sec + 2)
		return 0;
	return t->tv_sec > s || (t->tv_sec == s && t->tv_nsec >= began->tv_nsec);
}

static struct proc *proc_of(GHashTable *procs, uint64_t ino, uint32_t pid)
{
	char key[48];
	struct proc *p;

	snprintf(key, sizeof(key), "%llu/%u", (unsigned long long)ino, pid);
	p = g_hash_table_lookup(procs, key);
	if (!p) {
		p = g_new0(struct proc, 1);
		p->ino = ino;
		p->pid = pid;
		p->dumps = g_array_new(FALSE, TRUE, sizeof(struct dump));
		g_hash_table_insert(procs, g_strdup(key), p);
	}
	return p;
}

/* The dumps this run wrote into sub (DIR/<chunk>, or a pidns-INO/ in it). */
static void collect_dir(GHashTable *procs, size_t chunk, const struct letw_jd_chunk_out *c,
			const char *sub, uint64_t ino)
{
	DIR *d = opendir(sub);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		long pid = dump_pid(de->d_name);
		struct dump dp = { .chunk = chunk };
		struct stat st;

		if (pid < 0 || asprintf(&dp.path, "%s/%s", sub, de->d_name) < 0)
			continue;
		/* A dump of an earlier run, of a process this chunk no longer
		 * holds, is not this chunk's. */
		if (lstat(dp.path, &st) != 0 || !S_ISREG(st.st_mode) ||
		    !this_run(&st.st_mtim, &c->began)) {
			free(dp.path);
			continue;
		}
		g_array_append_val(proc_of(procs, ino, (uint32_t)pid)->dumps, dp);
	}
	closedir(d);
}

static void collect(GHashTable *procs, const struct letw_jd_chunk_out *c, size_t chunk)
{
	DIR *d;
	struct dirent *de;

	if (!c->many_pidns) {
		collect_dir(procs, chunk, c, c->dir, c->pidns_only);
		return;
	}
	d = opendir(c->dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned long long ino;
		char *sub, tail;

		if (sscanf(de->d_name, "pidns-%llu%c", &ino, &tail) != 1 ||
		    asprintf(&sub, "%s/%s", c->dir, de->d_name) < 0)
			continue;
		collect_dir(procs, chunk, c, sub, ino);
		free(sub);
	}
	closedir(d);
}

static int map_dump(struct dump *dp)
{
	struct stat st;
	void *m;
	int fd = open(dp->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -EINVAL;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	dp->buf = m;
	dp->len = (size_t)st.st_size;
	return 0;
}

/* DIR or DIR/pidns-INO (created, and refused when a link or another
 * user's, as the sink does: letw_sink_proc_dir). malloc()ed, NULL after
 * saying why. */
static char *out_dir(struct merge *m, uint64_t ino)
{
	char why[PATH_MAX + 128];
	char *d;

	if (!m->many)
		return strdup(m->dir);
	if (asprintf(&d, "%s/pidns-%llu", m->dir, (unsigned long long)ino) < 0)
		return NULL;
	/* The sink's rule for the pidns-INO directories it writes into. */
	if (mkdir(d, 0755) == 0) {
		if (letw_made_dirs_add(&m->made, d)) {
			(void)rmdir(d);
			letw_err("out of memory");
			free(d);
			return NULL;
		}
	} else if (errno != EEXIST) {
		letw_err("jitdump: cannot create `%s` for the merged dumps: %s", d, strerror(errno));
		free(d);
		return NULL;
	}
	if (letw_own_dir_check(d, why, sizeof(why))) {
		letw_err("jitdump: %s (for the merged dumps)", why);
		free(d);
		return NULL;
	}
	return d;
}

/* What a merged dump is written from (write_merged's fill). */
struct merged_fill {
	GArray *units, *order;
	const struct letw_jd_header *h;
	uint64_t header_ts, close_ts;
};

static int fill_merged(struct letw_jd_out *o, void *data)
{
	const struct merged_fill *f = data;

	return letw_jdm_write(o, f->units, f->order, f->h, f->header_ts, f->close_ts);
}

/* Write path from units as the sink writes its dumps (letw_jd_write_file). */
static int write_merged(const char *path, struct merged_fill *f)
{
	struct letw_jd_file_err e;
	int err = letw_jd_write_file(path, fill_merged, stop_now, f, &e);

	if (err == -ENOMEM && !strcmp(e.step, "name"))
		letw_err("out of memory");
	else if (err && !strcmp(e.step, "create"))
		letw_err("jitdump: cannot create `%s`: %s", e.tmp, strerror(-err));
	else if (err && err != -EINTR)
		letw_err("jitdump: cannot write the merged dump `%s`: %s", path,
			 !strcmp(e.step, "name") ? letw_temp_path_why(err) : strerror(-err));
	else if (e.kept)
		letw_note("jitdump: %s is in place, but the file it replaced (now `%s`) cannot be removed: %s",
			  path, e.tmp, strerror(e.kept));
	free(e.tmp);
	return err == -EINTR ? -EINTR : err ? -EIO : 0;
}

static int merge_proc(struct merge *m, struct proc *p)
{
	GArray *units = g_array_new(FALSE, TRUE, sizeof(struct letw_jdm_unit));
	GArray *order = NULL;
	struct dump *first = NULL;
	struct letw_jdm_part *part;
	struct merged_fill f;
	uint64_t start = UINT64_MAX, close_ts = 0, since;
	char *dir = NULL, *path = NULL;
	int ret = 0;

	for (guint i = 0; i < p->dumps->len; i++) {
		struct dump *dp = &g_array_index(p->dumps, struct dump, i);
		const char *why = NULL;
		int e = map_dump(dp);

		if (e) {
			why = strerror(-e);
		} else if (letw_jdm_read_units(dp->buf, dp->len, (uint32_t)dp->chunk, units, &dp->h,
					       &close_ts, &why) == 0) {
			if (!first)
				first = dp;
			else if (dp->h.elf_mach != first->h.elf_mach)
				why = "its ELF machine differs from the earlier chunks'";
			else if (dp->h.pid != first->h.pid || dp->h.flags != first->h.flags)
				why = "its header's pid or flags differ from the earlier chunks'";
		}
		if (why) {
			letw_note("jitdump: process %u (pid_ns %llu): chunk %s's dump `%s` cannot be merged (%s): the process's dumps are left in DIR/<chunk>/ only",
				  p->pid, (unsigned long long)p->ino, m->c[dp->chunk].name, dp->path, why);
			goto out;
		}
		if (dp->h.timestamp < start)
			start = dp->h.timestamp;
	}
	if (!first)
		goto out;
	dir = out_dir(m, p->ino);
	if (!dir || asprintf(&path, "%s/jit-%u.dump", dir, p->pid) < 0) {
		path = NULL;
		ret = -EIO;
		goto out;
	}
	/* Code there before the first chunk: from the process's start, as
	 * one dump of the whole trace dates it (jitdump.c). */
	since = letw_jd_process_since(path, p->pid, start);
	part = g_new(struct letw_jdm_part, p->dumps->len);
	for (guint i = 0; i < p->dumps->len; i++) {
		const struct dump *dp = &g_array_index(p->dumps, struct dump, i);

		part[i].chunk = (uint32_t)dp->chunk;
		part[i].start = dp->h.timestamp;
	}
	letw_jdm_dedup(units, part, p->dumps->len, &m->repeats);
	g_free(part);
	order = letw_jdm_order(units, since, &close_ts);
	f = (struct merged_fill){ units, order, &first->h, since ? since : start, close_ts };
	ret = write_merged(path, &f);
	if (!ret) {
		m->merged++;
		for (guint k = 0; k < order->len; k++)
			m->loads += g_array_index(units, struct letw_jdm_unit,
						   g_array_index(order, guint, k)).rec.id == LETW_JD_CODE_LOAD;
	}
out:
	for (guint i = 0; i < p->dumps->len; i++) {
		struct dump *dp = &g_array_index(p->dumps, struct dump, i);

		if (dp->buf)
			munmap((void *)dp->buf, dp->len);
		dp->buf = NULL;
	}
	free(dir);
	free(path);
	g_array_free(units, TRUE);
	if (order)
		g_array_free(order, TRUE);
	return ret;
}

static void proc_free(gpointer data)
{
	struct proc *p = data;

	for (guint i = 0; i < p->dumps->len; i++)
		free(g_array_index(p->dumps, struct dump, i).path);
	g_array_free(p->dumps, TRUE);
	g_free(p);
}

static gint by_proc(gconstpointer a, gconstpointer b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int letw_jd_merge_chunks(const char *dir, const struct letw_jd_chunk_out *c, size_t n,
			 int *merged)
{
	GHashTable *procs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, proc_free);
	GHashTable *inos = g_hash_table_new(g_int64_hash, g_int64_equal);
	struct merge m = { .dir = dir, .c = c };
	GPtrArray *list;
	GHashTableIter it;
	gpointer v;
	int ret = 0;

	*merged = 0;
	if (!clocks_agree(c, n))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (c[i].written)
			collect(procs, &c[i], i);
	list = g_ptr_array_new();
	g_hash_table_iter_init(&it, procs);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		g_ptr_array_add(list, v);
		g_hash_table_add(inos, &((struct proc *)v)->ino);
	}
	/* Laid out as one run over the whole trace would: pidns-INO/ when
	 * the chunks hold several pid namespaces. */
	m.many = g_hash_table_size(inos) > 1;
	g_ptr_array_sort(list, by_proc);
	/* A process that cannot be written does not cost the others theirs
	 * (a pidns-INO that is a file stopped every later one: an audit);
	 * an interrupt stops all. */
	for (guint i = 0; i < list->len && ret != -EINTR; i++) {
		int r = merge_proc(&m, g_ptr_array_index(list, i));

		if (r && (!ret || r == -EINTR))
			ret = r;
	}
	g_ptr_array_free(list, TRUE);
	letw_made_dirs_take_back(&m.made);
	*merged = m.merged;
	if (m.merged)
		letw_note("jitdump: merged the chunks' dumps into %s/%sjit-PID.dump (%d process(es), %llu LOAD record(s), %llu repeated across chunks written once): what perf inject --jit reads",
			  dir, m.many ? "pidns-INO/" : "", m.merged, (unsigned long long)m.loads,
			  (unsigned long long)m.repeats);
out:
	g_hash_table_destroy(inos);
	g_hash_table_destroy(procs);
	return ret;
}
