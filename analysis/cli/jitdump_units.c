/* SPDX-License-Identifier: MIT */
/*
 * The records of the dumps being merged (jitdump_merge.c says how): read
 * into units, repeats across chunks found, put in time order, renumbered
 * and written. Pure data: no directory, no message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jitdump_units.h"

static int is_filler(const struct letw_jd_rec *r)
{
	uint8_t tail[12];
	uint32_t n = r->code_size < sizeof(tail) ? (uint32_t)r->code_size : (uint32_t)sizeof(tail);
	uint64_t body = r->code_size - n;

	for (uint64_t i = 0; i < body; i++)
		if (r->code[i] != 0xcc)
			return 0;
	letw_jd_filler(tail, n, r->code_index, r->pid);
	return memcmp(r->code + body, tail, n) == 0;
}

int letw_jdm_read_units(const uint8_t *buf, size_t len, uint32_t chunk, GArray *units,
			struct letw_jd_header *h, uint64_t *close_ts, const char **why)
{
	struct letw_jd_reader rd;
	struct letw_jd_rec rec;
	const uint8_t *pre = NULL;
	size_t pre_len = 0;
	uint32_t seq = 0;
	int r;

	if ((r = letw_jd_reader_init(&rd, buf, len, why)))
		return r;
	*h = rd.h;
	while ((r = letw_jd_reader_next(&rd, &rec, why)) == 1) {
		struct letw_jdm_unit u = { .rec = rec, .ts = rec.ts, .chunk = chunk };

		if (rec.id == LETW_JD_CODE_CLOSE) {
			if (rec.ts > *close_ts)
				*close_ts = rec.ts;
			continue;
		}
		if (rec.id == LETW_JD_CODE_DEBUG_INFO || rec.id == LETW_JD_CODE_UNWINDING_INFO) {
			if (!pre)
				pre = rec.p;
			pre_len += rec.size;
			continue;
		}
		if (pre && rec.id != LETW_JD_CODE_LOAD) {
			/* Line or unwinding records followed by no LOAD:
			 * kept in place, as records of their own. */
			struct letw_jdm_unit lone = { .pre = pre, .pre_len = pre_len, .ts = rec.ts,
					     .chunk = u.chunk };

			lone.seq = seq++;
			lone.rec.id = UINT32_MAX;
			g_array_append_val(units, lone);
			pre = NULL;
			pre_len = 0;
		}
		if (rec.id == LETW_JD_CODE_LOAD) {
			u.pre = pre;
			u.pre_len = pre_len;
			u.before = rec.ts < h->timestamp;
			u.filler = is_filler(&rec);
			pre = NULL;
			pre_len = 0;
		}
		u.seq = seq++;
		g_array_append_val(units, u);
	}
	return r;
}

#define U(i) (&g_array_index(units, struct letw_jdm_unit, (i)))

/* Same code at the same place: a region without its bytes (filler) is
 * taken to be the one with them. */
static int same_code(const struct letw_jdm_unit *a, const struct letw_jdm_unit *b)
{
	return a->rec.code_addr == b->rec.code_addr && a->rec.code_size == b->rec.code_size &&
	       strcmp(a->rec.name, b->rec.name) == 0 &&
	       (a->filler || b->filler ||
		memcmp(a->rec.code, b->rec.code, (size_t)a->rec.code_size) == 0);
}

static int overlaps(const struct letw_jdm_unit *a, const struct letw_jdm_unit *b)
{
	return a->rec.code_addr < b->rec.code_addr + b->rec.code_size &&
	       b->rec.code_addr < a->rec.code_addr + a->rec.code_size;
}

/* The sorts order indexes into units (g_qsort_with_data's data). */
static gint by_addr(gconstpointer a, gconstpointer b, gpointer data)
{
	GArray *units = data;
	const struct letw_jdm_unit *x = U(*(const guint *)a), *y = U(*(const guint *)b);

	if (x->rec.code_addr != y->rec.code_addr)
		return x->rec.code_addr < y->rec.code_addr ? -1 : 1;
	return *(const guint *)a < *(const guint *)b ? -1 : *(const guint *)a > *(const guint *)b;
}

/* (ts, chunk, seq): the merged order. */
static int later(const struct letw_jdm_unit *x, const struct letw_jdm_unit *y)
{
	if (x->ts != y->ts)
		return x->ts > y->ts;
	if (x->chunk != y->chunk)
		return x->chunk > y->chunk;
	return x->seq > y->seq;
}

static gint by_time(gconstpointer a, gconstpointer b, gpointer data)
{
	GArray *units = data;
	const struct letw_jdm_unit *x = U(*(const guint *)a), *y = U(*(const guint *)b);

	return later(x, y) ? 1 : later(y, x) ? -1 : 0;
}

/*
 * What the chunks before the one being deduplicated hold: their LOADs not
 * dropped, in runs sorted by (address, index). Each chunk's LOADs are
 * sorted once, as a run of their own, then kept as a run of the seen;
 * two runs merge when the newer is not smaller than the one under it, so
 * that there are O(log N) runs and a LOAD is merged O(log N) times: the
 * whole dedup is O(N log N). Sorting everything seen again for every
 * chunk made it O(K * N log N) (an audit: 640k LOADs in 256 chunks took
 * 10.9 s).
 */
struct run {
	guint *ix;       /* into units, by (address, index) */
	uint64_t *reach; /* reach[j]: the highest end of the regions at ix[0..j] */
	guint n;
};

static void run_reach(GArray *units, struct run *rn)
{
	for (guint j = 0; j < rn->n; j++) {
		const struct letw_jdm_unit *u = U(rn->ix[j]);
		uint64_t end = u->rec.code_addr + u->rec.code_size;

		rn->reach[j] = j && rn->reach[j - 1] > end ? rn->reach[j - 1] : end;
	}
}

static void run_alloc(struct run *rn, guint n)
{
	rn->n = n;
	rn->ix = g_new(guint, n ? n : 1);
	rn->reach = g_new(uint64_t, n ? n : 1);
}

static void run_free(struct run *rn)
{
	g_free(rn->ix);
	g_free(rn->reach);
}

/* The two runs as one; a and b freed. */
static struct run run_merge(GArray *units, struct run *a, struct run *b)
{
	struct run m;
	guint i = 0, j = 0, w = 0;

	run_alloc(&m, a->n + b->n);
	while (i < a->n && j < b->n)
		m.ix[w++] = by_addr(&a->ix[i], &b->ix[j], units) < 0 ? a->ix[i++] : b->ix[j++];
	while (i < a->n)
		m.ix[w++] = a->ix[i++];
	while (j < b->n)
		m.ix[w++] = b->ix[j++];
	run_reach(units, &m);
	run_free(a);
	run_free(b);
	return m;
}

/* Chunk k's LOADs kept (not dropped) pushed onto the seen runs; now freed. */
static void seen_add(GArray *units, GArray *seen, struct run *now)
{
	struct run kept;
	guint w = 0;

	run_alloc(&kept, now->n);
	for (guint j = 0; j < now->n; j++)
		if (!U(now->ix[j])->dropped)
			kept.ix[w++] = now->ix[j];
	kept.n = w;
	run_free(now);
	if (!w) {
		run_free(&kept);
		return;
	}
	run_reach(units, &kept);
	g_array_append_val(seen, kept);
	while (seen->len > 1) {
		struct run *top = &g_array_index(seen, struct run, seen->len - 1);
		struct run *under = top - 1;

		if (top->n < under->n)
			break;
		*under = run_merge(units, under, top);
		g_array_set_size(seen, seen->len - 1);
	}
}

/* What r meets in rn: the latest overlapping LOAD of its time (eff) or
 * earlier, before r in its chunk (into *last), and the latest time of
 * those of earlier chunks (*prev_end). */
static void run_scan(GArray *units, const struct run *rn, const struct letw_jdm_unit *r,
		     uint32_t k, uint64_t eff, const struct letw_jdm_unit **last,
		     uint64_t *prev_end, int *prev)
{
	guint a = 0, b = rn->n;

	/* The regions meeting r are among those starting below r's end,
	 * and the walk down from there stops where nothing below reaches
	 * r: the regions overlapping r and those between them, not every
	 * region within the largest one's size below r (an audit: one 16 MB
	 * region made a merge of 2 * 80k LOADs take 22 s). */
	while (a < b) { /* the first starting at or past r's end */
		guint m = a + (b - a) / 2;

		if (U(rn->ix[m])->rec.code_addr < r->rec.code_addr + r->rec.code_size)
			a = m + 1;
		else
			b = m;
	}
	for (guint j = a; j-- > 0 && rn->reach[j] > r->rec.code_addr;) {
		const struct letw_jdm_unit *u = U(rn->ix[j]);

		if (u == r || !overlaps(u, r) || u->ts > eff || (u->chunk == k && u->seq > r->seq))
			continue;
		if (!*last || later(u, *last))
			*last = u;
		if (u->chunk < k && (!*prev || u->ts > *prev_end)) {
			*prev_end = u->ts;
			*prev = 1;
		}
	}
}

/* Chunk k's LOADs, units[at..end) (now: sorted), against the seen runs
 * and the chunk's own earlier LOADs. */
static void dedup_chunk(GArray *units, GArray *seen, const struct run *now, guint at,
			guint end, uint32_t k, uint64_t start, uint64_t *repeats)
{
	for (guint i = at; i < end; i++) {
		struct letw_jdm_unit *r = U(i);
		/* What r is compared with, as of when it was the mapping:
		 * its time; or the chunk's start, for code there before it. */
		uint64_t eff = r->before ? start : r->ts;
		const struct letw_jdm_unit *last = NULL;
		uint64_t prev_end = 0;
		int prev = 0;

		if (r->rec.id != LETW_JD_CODE_LOAD)
			continue;
		/* The latest and the largest of what each run holds: the
		 * same whichever order the runs are read in. */
		for (guint s = 0; s < seen->len; s++)
			run_scan(units, &g_array_index(seen, struct run, s), r, k, eff, &last,
				 &prev_end, &prev);
		run_scan(units, now, r, k, eff, &last, &prev_end, &prev);
		if (last && same_code(last, r)) {
			r->dropped = 1;
			r->dup_of = (guint)(last - U(0));
			while (U(r->dup_of)->dropped) /* a chain within chunk k */
				r->dup_of = U(r->dup_of)->dup_of;
			(*repeats)++;
		} else if (r->before && prev && prev_end >= r->ts) {
			/* Code this chunk's rundown found where earlier chunks
			 * mapped other code: it replaced that code at some time
			 * between that code's load and this chunk's start, which
			 * is the latest, hence the only safe, date: dated at the
			 * earlier load + 1, it took every sample of the earlier
			 * code after its load (an audit: 0 right of 1458). */
			r->ts = prev_end + 1 > start ? prev_end + 1 : start;
		}
	}
}

void letw_jdm_dedup(GArray *units, const struct letw_jdm_part *part, size_t n,
		    uint64_t *repeats)
{
	GArray *seen = g_array_new(FALSE, FALSE, sizeof(struct run));
	guint at = 0;

	for (size_t p = 0; p < n; p++) {
		guint end = at, w = 0;
		struct run now;

		while (end < units->len && U(end)->chunk == part[p].chunk)
			end++;
		run_alloc(&now, end - at);
		for (guint i = at; i < end; i++)
			if (U(i)->rec.id == LETW_JD_CODE_LOAD)
				now.ix[w++] = i;
		now.n = w;
		g_qsort_with_data(now.ix, (gint)now.n, sizeof(guint), by_addr, units);
		run_reach(units, &now);
		/* The first chunk has nothing before it. */
		if (p)
			dedup_chunk(units, seen, &now, at, end, part[p].chunk, part[p].start,
				    repeats);
		seen_add(units, seen, &now);
		at = end;
	}
	for (guint s = 0; s < seen->len; s++)
		run_free(&g_array_index(seen, struct run, s));
	g_array_free(seen, TRUE);
}

/* The line and unwinding records before a LOAD, dated as the LOAD is: one
 * the dedup moved to its chunk's start (code known only from the chunk's
 * rundown) would otherwise keep its old time, the placeholder's, and break
 * the merged dump's time order. perf attaches them to the next LOAD
 * whatever their time; our readers and a jitdump's contract want order. */
static int write_pre(struct letw_jd_out *o, const struct letw_jdm_unit *u)
{
	size_t at = 0;
	int err = 0;

	if (u->rec.id != LETW_JD_CODE_LOAD || u->ts == u->rec.ts)
		return letw_jd_write_raw(o, u->pre, u->pre_len);
	/* The reader checked each record's size (letw_jd_reader_next). */
	while (!err && at + 16 <= u->pre_len) {
		uint8_t head[16];
		uint32_t size;

		memcpy(head, u->pre + at, sizeof(head));
		memcpy(&size, head + 4, 4);
		memcpy(head + 8, &u->ts, 8);
		err = letw_jd_write_raw(o, head, sizeof(head));
		if (!err)
			err = letw_jd_write_raw(o, u->pre + at + 16, size - 16);
		at += size;
	}
	return err;
}

int letw_jdm_write(struct letw_jd_out *o, GArray *units, GArray *order,
		   const struct letw_jd_header *h, uint64_t ts, uint64_t close_ts)
{
	int err = letw_jd_write_header(o, h->elf_mach, h->pid, ts);

	for (guint k = 0; !err && k < order->len; k++) {
		const struct letw_jdm_unit *u = U(g_array_index(order, guint, k));

		if (u->pre_len)
			err = write_pre(o, u);
		if (err || u->rec.id == UINT32_MAX)
			continue;
		if (u->rec.id == LETW_JD_CODE_LOAD) {
			err = letw_jd_write_load(o, u->ts, u->rec.pid, u->rec.tid, u->rec.code_addr,
						 (uint32_t)u->rec.code_size, u->new_index, u->rec.name,
						 u->filler ? NULL : u->rec.code);
		} else if (u->rec.id == LETW_JD_CODE_MOVE) {
			uint8_t fixed[LETW_JD_MOVE_FIXED];

			memcpy(fixed, u->rec.p, sizeof(fixed));
			memcpy(fixed + 56, &u->new_index, 8);
			err = letw_jd_write_raw(o, fixed, sizeof(fixed));
			if (!err)
				err = letw_jd_write_raw(o, u->rec.p + sizeof(fixed),
							u->rec.size - sizeof(fixed));
		} else {
			err = letw_jd_write_raw(o, u->rec.p, u->rec.size);
		}
	}
	return err ? err : letw_jd_write_close(o, close_ts);
}

/* The MOVEs' new code_index: that of the LOAD of their chunk they name
 * (or of the LOAD that one repeats); a MOVE naming none is left out. */
/* A LOAD by (chunk, code_index), the key a MOVE of that chunk names it
 * by: the units themselves are the keys (the array does not move here). */
static guint old_index_hash(gconstpointer k)
{
	const struct letw_jdm_unit *u = k;

	return g_int64_hash(&u->rec.code_index) ^ (u->chunk * 0x9e3779b9u);
}

static gboolean old_index_equal(gconstpointer a, gconstpointer b)
{
	const struct letw_jdm_unit *x = a, *y = b;

	return x->chunk == y->chunk && x->rec.code_index == y->rec.code_index;
}

static void renumber(GArray *units, GArray *order)
{
	GHashTable *by_old = g_hash_table_new(old_index_hash, old_index_equal);
	uint64_t next = 1;
	guint w = 0;

	for (guint i = 0; i < units->len; i++) {
		const struct letw_jdm_unit *u = U(i);

		if (u->rec.id == LETW_JD_CODE_LOAD)
			g_hash_table_insert(by_old, (gpointer)u, GUINT_TO_POINTER(i + 1));
	}
	for (guint k = 0; k < order->len; k++) {
		struct letw_jdm_unit *u = U(g_array_index(order, guint, k));

		if (u->rec.id == LETW_JD_CODE_LOAD)
			u->new_index = next++;
	}
	for (guint k = 0; k < order->len; k++) {
		guint i = g_array_index(order, guint, k);
		struct letw_jdm_unit *u = U(i);

		if (u->rec.id == LETW_JD_CODE_MOVE) {
			/* The MOVE's own chunk and code_index are the key. */
			guint l = GPOINTER_TO_UINT(g_hash_table_lookup(by_old, u));

			if (!l)
				continue;
			l--;
			u->new_index = U(U(l)->dropped ? U(l)->dup_of : l)->new_index;
		}
		g_array_index(order, guint, w++) = i;
	}
	g_array_set_size(order, w);
	g_hash_table_destroy(by_old);
}

GArray *letw_jdm_order(GArray *units, uint64_t since, uint64_t *close_ts)
{
	GArray *order = g_array_new(FALSE, FALSE, sizeof(guint));

	for (guint i = 0; i < units->len; i++) {
		struct letw_jdm_unit *u = U(i);

		if (since && u->ts <= since)
			u->ts = since + 1;
		if (u->ts > *close_ts)
			*close_ts = u->ts;
		if (!u->dropped)
			g_array_append_val(order, i);
	}
	g_qsort_with_data(order->data, (gint)order->len, sizeof(guint), by_time, units);
	renumber(units, order);
	return order;
}
