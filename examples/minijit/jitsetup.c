/* SPDX-License-Identifier: MIT */
/*
 * The initial state the demo publishes, its stubs, and the list file a
 * test compares against the trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>

#include "jitrt.h"
#include "x86emit.h"

#define NJUMP_STUBS (JITRT_MAX_STUBS - 1u)
#define NBLOCK_SLOTS 32u

/* Which functions the setup phase frees again, to show unloads. */
static int freed_at_setup(const struct jitrt *rt, uint32_t i)
{
	return i >= rt->nhot && i % 250 == 200 && !rt->fns[i].pinned;
}

static int publish_modules(struct jitrt *rt)
{
	for (uint32_t k = 0; k < rt->nmodules; k++) {
		char name[40];
		struct letw_module m = {.module_id = (uint64_t)k + 1, .name = name};
		int ret;

		snprintf(name, sizeof(name), "minijit.Module%" PRIu32, k);
		ret = letw_module_publish(&m);
		if (ret) {
			fprintf(stderr, "letw-minijit: letw_module_publish(%s): %s\n", name,
				strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Builds and installs new versions of the listed functions at one tier. */
static int build_and_swap(struct jitrt *rt, uint32_t *idx, uint32_t n, enum codegen_tier tier)
{
	enum codegen_tier *tiers = malloc((n ? n : 1) * sizeof(*tiers));
	struct jit_code **fresh = malloc((n ? n : 1) * sizeof(*fresh));
	int ret = -ENOMEM;

	if (tiers && fresh) {
		for (uint32_t i = 0; i < n; i++)
			tiers[i] = tier;
		ret = jitrt_build(rt, idx, n, tiers, fresh);
		if (!ret)
			ret = jitrt_swap(rt, idx, n, fresh);
	}
	free(tiers);
	free(fresh);
	return ret;
}

/*
 * Stub targets are pinned (never re-tiered or freed), so a stub never
 * jumps into released code and needs no back-patching.
 */
static uint32_t jump_target(uint32_t j)
{
	return 3 * j + 1;
}

static uint32_t block_target(uint32_t j)
{
	return 3 * j + 2;
}

static void pick_stub_targets(struct jitrt *rt, uint32_t *njump, uint32_t *nslots)
{
	*njump = 0;
	*nslots = 0;
	while (*njump < NJUMP_STUBS && jump_target(*njump) < rt->nfns)
		rt->fns[jump_target((*njump)++)].pinned = 1;
	while (*nslots < NBLOCK_SLOTS && block_target(*nslots) < rt->nfns)
		rt->fns[block_target((*nslots)++)].pinned = 1;
}

static int check_stub(const struct jitrt *rt, const struct jit_stub *s)
{
	for (uint32_t j = 0; j < s->nslots; j++) {
		uint32_t t = s->kind == LETW_STUB_BLOCK ? block_target(j) : s->target;
		const struct jit_fn *f = &rt->fns[t];
		jit_entry_fn entry = (jit_entry_fn)(uintptr_t)(s->mem.addr + j * CODEGEN_STUB_SIZE);

		if (entry(f->arg[0]) != f->expect[0]) {
			fprintf(stderr, "letw-minijit: self-check failed: %s slot %" PRIu32
				" does not reach fn_%" PRIu32 "\n", s->name, j, t);
			return -EPROTO;
		}
	}
	return 0;
}

static int build_stubs(struct jitrt *rt, uint32_t njump, uint32_t nslots)
{
	struct code_batch batch;
	struct x86_buf buf;
	int ret = 0;

	codeheap_batch_begin(&rt->heap, &batch);
	x86_init(&buf);
	for (uint32_t j = 0; j <= njump && !ret; j++) {
		int block = j == njump;
		struct jit_stub *s = &rt->stubs[rt->nstubs];

		if (block && nslots == 0)
			break;
		buf.len = 0;
		s->nslots = block ? nslots : 1;
		s->kind = block ? LETW_STUB_BLOCK : LETW_STUB_JUMP;
		s->target = block ? block_target(0) : jump_target(j);
		s->owner = block ? 0 : rt->fns[s->target].method_id;
		for (uint32_t k = 0; k < s->nslots; k++) {
			uint32_t t = block ? block_target(k) : s->target;
			const struct jit_code *c = atomic_load(&rt->fns[t].code);

			codegen_jump_stub(&buf, (uint64_t)(uintptr_t)c->mem.addr);
		}
		if (block)
			snprintf(s->name, sizeof(s->name), "minijit_stub_block");
		else
			snprintf(s->name, sizeof(s->name), "jump_stub:fn_%" PRIu32, s->target);
		ret = buf.oom ? -ENOMEM : codeheap_batch_put(&batch, buf.bytes, buf.len, &s->mem);
		if (!ret)
			rt->nstubs++;
	}
	x86_release(&buf);
	int sret = codeheap_batch_seal(&batch);

	if (!ret)
		ret = sret;
	if (ret) {
		fprintf(stderr, "letw-minijit: stub generation failed: %s\n", strerror(-ret));
		return ret;
	}
	for (uint32_t i = 0; i < rt->nstubs && !ret; i++)
		ret = check_stub(rt, &rt->stubs[i]);
	for (uint32_t i = 0; i < rt->nstubs && !ret; i++) {
		const struct jit_stub *s = &rt->stubs[i];
		struct letw_stub st = {
			.start = (uint64_t)(uintptr_t)s->mem.addr,
			.size = (uint32_t)s->mem.size,
			.kind = s->kind,
			.owner = s->owner,
			.name = s->name,
		};

		ret = letw_stub_publish(&st);
		if (ret)
			fprintf(stderr, "letw-minijit: letw_stub_publish(%s): %s\n", s->name,
				strerror(-ret));
	}
	return ret;
}

int jitrt_setup(struct jitrt *rt)
{
	uint32_t *idx = malloc(rt->nfns * sizeof(*idx));
	uint32_t n = 0, njump, nslots;
	int ret;

	if (!idx)
		return -ENOMEM;
	pick_stub_targets(rt, &njump, &nslots);
	ret = publish_modules(rt);
	if (ret)
		goto out;

	for (uint32_t i = 0; i < rt->nfns; i++)
		idx[i] = i;
	ret = build_and_swap(rt, idx, rt->nfns, CODEGEN_QUICK);
	if (ret)
		goto out;

	/* Tier-up of every third function: the quick version is unpublished
	 * and freed once the optimized one is installed. */
	for (uint32_t i = 0; i < rt->nfns; i += 3)
		if (!rt->fns[i].pinned)
			idx[n++] = i;
	ret = build_and_swap(rt, idx, n, CODEGEN_OPTIMIZED);
	jitrt_reclaim(rt);
	if (ret)
		goto out;

	for (uint32_t i = 0; i < rt->nfns && !ret; i++)
		if (freed_at_setup(rt, i))
			ret = jitrt_remove(rt, i);
	jitrt_reclaim(rt);
	if (ret)
		goto out;

	ret = build_stubs(rt, njump, nslots);
out:
	free(idx);
	return ret;
}

struct list_rec {
	uint64_t start;
	const struct jit_fn *fn;     /* a method record, or */
	const struct jit_code *code;
	const struct jit_stub *stub; /* a stub record */
};

static int cmp_rec(const void *a, const void *b)
{
	const struct list_rec *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void jitrt_write_hex(FILE *out, const struct jit_code *c)
{
	for (size_t i = 0; i < c->mem.size; i++)
		fprintf(out, "%02x", c->mem.addr[i]);
}

static int write_records(struct jitrt *rt, FILE *out, int flags)
{
	struct list_rec *recs = calloc(rt->nfns + rt->nstubs + 1, sizeof(*recs));
	size_t n = 0;

	if (!recs)
		return -ENOMEM;
	for (uint32_t i = 0; i < rt->nfns; i++) {
		const struct jit_code *c = atomic_load(&rt->fns[i].code);

		if (c)
			recs[n++] = (struct list_rec){(uint64_t)(uintptr_t)c->mem.addr, &rt->fns[i], c, NULL};
	}
	for (uint32_t i = 0; i < rt->nstubs; i++)
		recs[n++] = (struct list_rec){(uint64_t)(uintptr_t)rt->stubs[i].mem.addr, NULL, NULL,
					      &rt->stubs[i]};
	qsort(recs, n, sizeof(*recs), cmp_rec);
	for (size_t i = 0; i < n; i++) {
		const struct list_rec *r = &recs[i];

		if (r->fn)
			fprintf(out, "method 0x%" PRIx64 " %zu minijit.Module%" PRIu32 " fn_%" PRIu32
				" %" PRIu64 "\n", r->start, r->code->mem.size, r->fn->module,
				r->fn->index, r->code->version);
		else
			fprintf(out, "stub 0x%" PRIx64 " %zu %" PRIu32 " 0x%" PRIx64 "\n", r->start,
				r->stub->mem.size, r->stub->kind, r->stub->owner);
	}
	for (uint32_t i = 0; (flags & JITRT_LIST_HOT) && i < rt->nhot; i++)
		fprintf(out, "hot fn_%" PRIu32 "\n", i);
	for (uint32_t i = 0; (flags & JITRT_LIST_CODE) && i < rt->nhot; i++) {
		const struct jit_code *c = atomic_load(&rt->fns[i].code);

		if (!c)
			continue;
		fprintf(out, "code fn_%" PRIu32 " ", i);
		jitrt_write_hex(out, c);
		fputc('\n', out);
	}
	free(recs);
	return 0;
}

int jitrt_unready_list(const char *path)
{
	size_t len = strlen(path) + 8;
	char *ready = malloc(len);
	int ret = 0;

	if (!ready)
		return -ENOMEM;
	snprintf(ready, len, "%s.ready", path);
	if (unlink(ready) && errno != ENOENT) {
		ret = -errno;
		fprintf(stderr, "letw-minijit: cannot remove the stale %s: %s\n", ready, strerror(errno));
	}
	free(ready);
	return ret;
}

int jitrt_write_list(struct jitrt *rt, const char *path, int flags)
{
	size_t len = strlen(path) + 8;
	char *tmp = malloc(len), *ready = malloc(len);
	FILE *out = NULL;
	int ret = -ENOMEM, fd;

	if (!tmp || !ready)
		goto out;
	snprintf(tmp, len, "%s.tmp", path);
	snprintf(ready, len, "%s.ready", path);
	out = fopen(tmp, "w");
	if (!out) {
		ret = -errno;
		goto out;
	}
	ret = write_records(rt, out, flags);
	if (!ret && (fflush(out) || fsync(fileno(out))))
		ret = -errno;
	if (fclose(out) && !ret)
		ret = -errno;
	/* The rename makes FILE appear complete; FILE.ready comes after it,
	 * so a test that waits for FILE.ready always reads the whole list. */
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		(void)unlink(tmp); /* a FILE that cannot be written leaves no FILE.tmp */
	if (!ret) {
		fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			ret = -errno;
		else
			close(fd);
	}
out:
	if (ret)
		fprintf(stderr, "letw-minijit: cannot write list file %s: %s\n", path, strerror(-ret));
	free(tmp);
	free(ready);
	return ret;
}
