/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/uatomic.h>

#include "hash.h"
#include "icache.h"
#include "record.h"

/*
 * Validate and measure (this runs on the publish path): the length first,
 * bounded at LETW_STRING_MAX + 1 bytes so a megabyte name costs no more
 * than a 4 KiB one (strnlen: libc's word-at-a-time scan, no allocation, no
 * locale), then one pass eight bytes at a time that both checks for ASCII
 * — names are almost always ASCII — and computes the intern hash
 * (hash.h), so a namespace or signature is read twice (strnlen, this
 * pass) rather than three times (strnlen, the ASCII check, the intern
 * hash). Only when some byte is >= 0x80 is UTF-8 well-formedness checked
 * per RFC 3629 (no overlongs, no surrogates, at most U+10FFFF) byte by
 * byte. Every read stays inside [s, s + len]: a truncated sequence stops
 * at the NUL, whose top bits are not 10.
 * Returns the length, or -ENAMETOOLONG / -EILSEQ.
 */
static int utf8_valid(const unsigned char *p, const unsigned char *end)
{
	while (p < end) {
		unsigned char c = *p;
		int n;
		uint32_t cp;

		if (c < 0x80) {
			p++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1, cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2, cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3, cp = c & 0x07;
		} else {
			return 0;
		}
		for (int i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return 0;
		p += n + 1;
	}
	return 1;
}

/*
 * The hash is over the string's words in order; a partial last word is
 * read as the eight bytes ending at the string's end (bytes already
 * folded fold again: deterministic, and no read past the NUL), a string
 * shorter than eight bytes as one word assembled byte by byte. The empty
 * string hashes to 0 (intern.c passes 0 for a NULL one).
 */
static inline __attribute__((always_inline)) long
utf8_len(const unsigned char *s, uint64_t *hash)
{
	size_t len = strnlen((const char *)s, LETW_STRING_MAX + 1), i;
	uint64_t w = 0, any = 0, h = 0;

	if (len > LETW_STRING_MAX)
		return -ENAMETOOLONG;
	if (len < 8) {
		for (i = 0; i < len; i++)
			w |= (uint64_t)s[i] << (8 * i);
		any = w;
		h = letw_str_hash_step(h, w);
	} else {
		for (i = 0; i + 8 <= len; i += 8) {
			memcpy(&w, s + i, sizeof(w)); /* unaligned load, no aliasing */
			any |= w;
			h = letw_str_hash_step(h, w);
		}
		if (i < len) {
			memcpy(&w, s + len - 8, sizeof(w));
			any |= w;
			h = letw_str_hash_step(h, w);
		}
	}
	if (hash)
		*hash = h;
	if ((any & 0x8080808080808080ull) && !utf8_valid(s, s + len))
		return -EILSEQ;
	return (long)len;
}

long letw_scan_string(const char *s, int required, uint64_t *hash)
{
	long len;

	if (hash)
		*hash = 0;
	if (!s)
		return required ? -EINVAL : 0;
	len = hash ? utf8_len((const unsigned char *)s, hash) :
		     utf8_len((const unsigned char *)s, NULL);
	if (len == 0 && required)
		return -EINVAL;
	return len;
}

long letw_validate_string(const char *s, int required)
{
	return letw_scan_string(s, required, NULL);
}

static int check_range(uint64_t start, uint32_t size)
{
	if (size == 0 || start + size < start)
		return -EINVAL;
	return 0;
}

/*
 * A fresh PENDING slot of this kind, or NULL: max_records live already, or
 * the store exhausted. The bound is read, not reserved: the counters sit
 * on the line the insert's count() writes anyway, where an add_return
 * ticket would be one more locked instruction per publish on a line every
 * publisher shares. So publishers racing at the bound may each get in, up
 * to one record over it per such thread; the slot region's room
 * (store.c) absorbs that.
 */
static struct letw_slot *slot_new(struct letw_table *t, uint32_t kind, uint64_t start,
				   uint32_t size)
{
	struct letw_slot *s;
	uint32_t st;

	if ((uint64_t)(uatomic_read(&t->live_methods) + uatomic_read(&t->live_stubs) +
		       uatomic_read(&t->live_modules)) >= t->store.records_max)
		return NULL;
	if (!(s = letw_store_slot_get(&t->store)))
		return NULL;
	st = letw_slot_state(s) & LETW_ST_GEN_MASK; /* FREE, keeps its generation */
	s->ctx = s->name = 0;
	/* The range before PENDING (release): a big publish's scan
	 * (overlap.c letw_overlaps_any) reads the range of every PENDING or
	 * LIVE slot it meets, after an acquire of its state; written after,
	 * it raced the scan (TSan), which could read the previous
	 * occupant's range and refuse the big publish for nothing. */
	s->start = start;
	s->size = size;
	/* Not yet reachable through the table: letw_table_insert links it. */
	letw_slot_set_state(s, st | (kind << LETW_ST_KIND_SHIFT) |
			    ((uint32_t)LETW_LIFE_PENDING << LETW_ST_LIFE_SHIFT));
	return s;
}

/* Keep a method's own name: inline when it fits in the 4-byte field with
 * its NUL, byte-exact without it up to LETW_NAMES_MAX (names.h), in a
 * chunk with it beyond. */
static int name_put(struct letw_table *t, struct letw_slot *s, const char *name, long len)
{
	uint32_t h;

	_Static_assert(sizeof(s->name) == LETW_NAMES_MIN, "inline names end where names.h starts");

	if (len < (long)sizeof(s->name)) {
		memset(&s->name, 0, sizeof(s->name));
		memcpy(&s->name, name, (size_t)len);
		letw_slot_set_state(s, letw_slot_state(s) | LETW_ST_NAME_INLINE);
		return 0;
	}
	if (len <= (long)LETW_NAMES_MAX) {
		s->name = letw_names_get(&t->store.names, name, (size_t)len);
		return s->name ? 0 : -ENOMEM;
	}
	/* The bytes before the handle: a fork child backs out a PENDING
	 * record whose publisher a fork cut anywhere (table_fork.c), and
	 * releasing it sizes this chunk by strlen (reclaim.c): a handle to
	 * bytes not yet copied would put it back in the wrong class. */
	h = letw_store_chunk_get(&t->store, (size_t)len + 1);
	if (!h)
		return -ENOMEM;
	memcpy(letw_store_chunk_ptr(&t->store, h), name, (size_t)len + 1);
	s->name = h;
	return 0;
}

static int ctx_put(struct letw_table *t, struct letw_slot *s, uint64_t a,
		   const char *s1, long l1, uint64_t h1, const char *s2, long l2, uint64_t h2)
{
	long h = letw_icache_get(&t->intern, a, s1, (size_t)l1, h1, s2, (size_t)l2, h2);

	if (h < 0)
		return (int)h;
	s->ctx = (uint32_t)h;
	return 0;
}

int letw_rec_method(struct letw_table *t, const struct letw_method *m,
		    const struct letw_method_opts *opts, struct letw_slot **out,
		    struct letw_ext **ext_out)
{
	struct letw_slot *s;
	struct letw_ext *ext = NULL;
	long ln, lns, lsig, llines;
	uint64_t hns, hsig;
	int ret;

	if (!m || !out || !ext_out)
		return -EINVAL;
	/* The cold lines this publish will write, fetched while the strings
	 * are scanned (store.h, names.h). */
	letw_store_slot_prefetch(&t->store);
	if ((ret = check_range(m->code_start, m->code_size)))
		return ret;
	if ((ln = letw_validate_string(m->name, 1)) < 0)
		return (int)ln;
	letw_names_prefetch(&t->store.names, (size_t)ln);
	if ((lns = letw_scan_string(m->method_namespace, 0, &hns)) < 0)
		return (int)lns;
	if ((lsig = letw_scan_string(m->signature, 0, &hsig)) < 0)
		return (int)lsig;
	if ((llines = letw_lines_size(m, opts)) < 0)
		return (int)llines;
	if (llines && (size_t)llines + sizeof(*ext) > LETW_STORE_CHUNK_MAX)
		return -E2BIG;
	if (!(s = slot_new(t, LETW_SLOT_METHOD, m->code_start, m->code_size)))
		return -ENOMEM;
	s->id = m->method_id;
	s->version = m->version_id;
	s->token = m->method_token;
	s->flags = m->method_flags;
	if ((ret = name_put(t, s, m->name, ln)) ||
	    (ret = ctx_put(t, s, m->module_id, m->method_namespace, lns, hns,
			   m->signature, lsig, hsig)))
		goto fail;
	if (llines) {
		uint32_t h = letw_store_chunk_get(&t->store, sizeof(*ext) + (size_t)llines);

		if (!h) {
			ret = -ENOMEM;
			goto fail;
		}
		ext = letw_store_chunk_ptr(&t->store, h);
		ext->slot = letw_store_slot_index(&t->store, s);
		ext->rc.size = (uint32_t)(sizeof(*ext) + (size_t)llines);
		ext->lines = *letw_lines_build(ext + 1, opts);
	}
	*out = s;
	*ext_out = ext;
	return 0;
fail:
	/* Never linked, but popped inside this read-side section: back
	 * through a grace period (store.h), names and context with it. */
	letw_slot_set_state(s, letw_st_with_life(letw_slot_state(s), LETW_LIFE_DEAD));
	letw_retire_slot(&t->reclaim, s);
	return ret;
}

int letw_rec_stub(struct letw_table *t, const struct letw_stub *st,
		  struct letw_slot **out)
{
	struct letw_slot *s;
	uint64_t hash;
	long len;
	int ret;

	if (!st || !out)
		return -EINVAL;
	if ((ret = check_range(st->start, st->size)))
		return ret;
	if ((len = letw_scan_string(st->name, 0, &hash)) < 0)
		return (int)len;
	if (!(s = slot_new(t, LETW_SLOT_STUB, st->start, st->size)))
		return -ENOMEM;
	s->id = st->owner;
	s->version = 0;
	s->token = st->kind;
	s->flags = 0;
	if ((ret = ctx_put(t, s, 0, st->name, len, hash, NULL, 0, 0))) {
		letw_slot_set_state(s, letw_st_with_life(letw_slot_state(s), LETW_LIFE_DEAD));
		letw_retire_slot(&t->reclaim, s);
		return ret;
	}
	*out = s;
	return 0;
}

int letw_rec_module(struct letw_table *t, const struct letw_module *m,
		    struct letw_slot **out)
{
	struct letw_slot *s;
	uint64_t hash;
	long len;
	int ret;

	if (!m || !out || m->module_id == 0)
		return -EINVAL;
	if ((len = letw_scan_string(m->name, 1, &hash)) < 0)
		return (int)len;
	if (!(s = slot_new(t, LETW_SLOT_MODULE, m->module_id, m->module_flags)))
		return -ENOMEM;
	s->id = s->version = 0;
	s->token = s->flags = 0;
	if ((ret = ctx_put(t, s, 0, m->name, len, hash, NULL, 0, 0))) {
		letw_slot_set_state(s, letw_st_with_life(letw_slot_state(s), LETW_LIFE_DEAD));
		letw_retire_slot(&t->reclaim, s);
		return ret;
	}
	*out = s;
	return 0;
}

static const struct letw_ictx *ictx(const struct letw_table *t, uint32_t h)
{
	return h ? letw_store_chunk_ptr(&t->store, h) : NULL;
}

const char *letw_rec_name(const struct letw_table *t, const struct letw_slot *s, uint32_t st,
			  char buf[LETW_REC_NAME_BUF])
{
	if (st & LETW_ST_NAME_INLINE)
		return (const char *)&s->name;
	if (letw_names_handle_is(s->name)) {
		size_t len;
		const char *p = letw_names_bytes(&t->store.names, s->name, &len);

		/* Stored without its NUL: the copy gets one. The bytes were
		 * written before the slot's state was published (release)
		 * and our caller loaded `st` with acquire; they are freed
		 * only after a grace period, and our caller is inside a
		 * read-side section. */
		memcpy(buf, p, len);
		buf[len] = '\0';
		return buf;
	}
	return s->name ? letw_store_chunk_ptr(&t->store, s->name) : "";
}

void letw_rec_ctx_strings(const struct letw_table *t, uint32_t ctx,
			  const char **s1, const char **s2)
{
	const struct letw_ictx *e = ictx(t, ctx);

	*s1 = e ? e->bytes : "";
	*s2 = e ? e->bytes + strlen(e->bytes) + 1 : "";
}

void letw_rec_tp_method(const struct letw_table *t, const struct letw_slot *s,
			uint32_t st, uint16_t instance_id, char namebuf[LETW_REC_NAME_BUF],
			struct letw_tp_method *out)
{
	const struct letw_ictx *e = ictx(t, s->ctx);

	*out = (struct letw_tp_method){
		.method_id = s->id,
		.module_id = e ? e->a : 0,
		.code_start = s->start,
		.version_id = s->version,
		.code_size = s->size,
		.method_token = s->token,
		.method_flags = s->flags,
		.instance_id = instance_id,
		.name = letw_rec_name(t, s, st, namebuf),
	};
	letw_rec_ctx_strings(t, s->ctx, &out->method_namespace, &out->signature);
}

void letw_rec_tp_stub(const struct letw_table *t, const struct letw_slot *s,
		      uint16_t instance_id, struct letw_tp_stub *out)
{
	const char *unused;

	*out = (struct letw_tp_stub){
		.start = s->start,
		.owner = s->id,
		.size = s->size,
		.kind = s->token,
		.instance_id = instance_id,
	};
	letw_rec_ctx_strings(t, s->ctx, &out->name, &unused);
}

void letw_rec_tp_module(const struct letw_table *t, const struct letw_slot *s,
			uint16_t instance_id, struct letw_tp_module *out)
{
	const char *unused;

	*out = (struct letw_tp_module){
		.module_id = s->start,
		.module_flags = s->size,
		.instance_id = instance_id,
	};
	letw_rec_ctx_strings(t, s->ctx, &out->name, &unused);
}
