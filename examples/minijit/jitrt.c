/* SPDX-License-Identifier: MIT */
#include "jitrt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <lttng-etw/lttng-etw.h>
#include <urcu/urcu-bp.h>

#include "x86emit.h"

#define CHUNK_SIZE (16u * 1024u)
#define MAX_FREE_CHUNKS 8u

static uint64_t module_id(uint32_t module)
{
	return (uint64_t)module + 1; /* 0 means "no module" in the API */
}

static void fn_name(const struct jit_fn *f, char *buf, size_t len)
{
	snprintf(buf, len, "fn_%" PRIu32, f->index);
}

static void module_name(uint32_t module, char *buf, size_t len)
{
	snprintf(buf, len, "minijit.Module%" PRIu32, module);
}

static const char *tier_str(enum codegen_tier t)
{
	return t == CODEGEN_QUICK ? "quick" : "optimized";
}

int jitrt_init(struct jitrt *rt, uint32_t nfns, uint32_t nhot, uint32_t nmodules)
{
	int ret;

	memset(rt, 0, sizeof(*rt));
	if (nfns == 0 || nmodules == 0)
		return -EINVAL;
	ret = codeheap_init(&rt->heap, CHUNK_SIZE, MAX_FREE_CHUNKS);
	if (ret)
		return ret;
	rt->fns = calloc(nfns, sizeof(*rt->fns));
	rt->stubs = calloc(JITRT_MAX_STUBS, sizeof(*rt->stubs));
	if (!rt->fns || !rt->stubs) {
		jitrt_destroy(rt);
		return -ENOMEM;
	}
	rt->nfns = nfns;
	rt->nhot = nhot < nfns ? nhot : nfns;
	rt->nmodules = nmodules;
	for (uint32_t i = 0; i < nfns; i++) {
		struct jit_fn *f = &rt->fns[i];

		f->index = i;
		f->method_id = (uint64_t)i + 1;
		f->module = i % nmodules;
		f->hot = i < rt->nhot;
		kernel_make(i, f->hot, &f->k);
		for (unsigned v = 0; v < JITRT_NARGS; v++) {
			f->arg[v] = kernel_arg(i, v);
			f->expect[v] = kernel_eval(&f->k, f->arg[v]);
		}
		atomic_init(&f->code, NULL);
	}
	return 0;
}

void jitrt_destroy(struct jitrt *rt)
{
	for (uint32_t i = 0; rt->fns && i < rt->nfns; i++)
		free(atomic_load(&rt->fns[i].code));
	for (struct jit_code *c = rt->retired, *n; c; c = n) {
		n = c->retire_next;
		free(c);
	}
	free(rt->fns);
	free(rt->stubs);
	if (rt->heap.chunk_size)
		codeheap_destroy(&rt->heap);
	memset(rt, 0, sizeof(*rt));
}

/* The code's line table: each mark of the code generator is a row in
 * the function's block of the source listing. */
static void code_lines(const struct jit_fn *f, const struct jit_code *c,
		       struct letw_line *rows)
{
	for (uint32_t j = 0; j < c->marks.n; j++)
		rows[j] = (struct letw_line){
			.native_offset = c->marks.off[j],
			.line = f->src_line + c->marks.rel[j],
		};
}

static int publish_code(const struct jitrt *rt, const struct jit_fn *f,
			const struct jit_code *c)
{
	struct letw_line rows[CODEGEN_MAX_MARKS];
	/* Our code was written just now and stays mapped: method_code_bytes
	 * at publish can read it in place. */
	struct letw_method_opts opts = {
		.size = sizeof(opts),
		.lines = rows,
		.nr_lines = rt->source ? c->marks.n : 0,
		.nr_files = rt->source ? 1 : 0,
		.files = &rt->source,
		.flags = LETW_METHOD_OPT_CODE_READABLE,
	};
	char ns[40], name[24];
	uint32_t tier = c->tier == CODEGEN_QUICK ? LETW_TIER_QUICK : LETW_TIER_OPTIMIZED_TIER1;
	struct letw_method m = {
		.method_id = f->method_id,
		.module_id = module_id(f->module),
		.code_start = (uint64_t)(uintptr_t)c->mem.addr,
		.code_size = (uint32_t)c->mem.size,
		.method_token = 0x06000000u | (f->index + 1), /* a MethodDef-like token */
		.method_flags = LETW_METHOD_JITTED | LETW_METHOD_TIER(tier),
		.version_id = c->version,
		.method_namespace = ns,
		.name = name,
		.signature = "(i64)->i64",
	};
	int ret;

	module_name(f->module, ns, sizeof(ns));
	fn_name(f, name, sizeof(name));
	if (rt->source)
		code_lines(f, c, rows);
	ret = letw_method_publish_opts(&m, &opts);
	if (ret)
		fprintf(stderr, "letw-minijit: letw_method_publish(%s v%" PRIu64 " at %p): %s\n",
			name, c->version, (void *)c->mem.addr, strerror(-ret));
	return ret;
}

static int unpublish_code(const struct jit_fn *f, const struct jit_code *c)
{
	int ret = letw_method_unpublish((uint64_t)(uintptr_t)c->mem.addr);

	if (ret)
		fprintf(stderr, "letw-minijit: letw_method_unpublish(fn_%" PRIu32 " v%" PRIu64
			" at %p): %s\n", f->index, c->version, (void *)c->mem.addr, strerror(-ret));
	return ret;
}

static void discard(struct jitrt *rt, struct jit_code **codes, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!codes[i])
			continue;
		codeheap_free(&rt->heap, &codes[i]->mem);
		free(codes[i]);
		codes[i] = NULL;
	}
}

static int check_code(const struct jit_fn *f, const struct jit_code *c)
{
	for (unsigned v = 0; v < JITRT_NARGS; v++) {
		int64_t got = jit_entry(c)(f->arg[v]);

		if (got != f->expect[v]) {
			fprintf(stderr, "letw-minijit: self-check failed: fn_%" PRIu32 " (%s, %zu bytes)"
				"(%" PRId64 ") = %" PRId64 ", reference says %" PRId64 "\n",
				f->index, tier_str(c->tier), c->mem.size, f->arg[v], got, f->expect[v]);
			return -EPROTO;
		}
	}
	return 0;
}

int jitrt_build(struct jitrt *rt, const uint32_t *idx, uint32_t n,
		const enum codegen_tier *tiers, struct jit_code **out)
{
	struct code_batch batch;
	struct x86_buf buf;
	int ret = 0;

	memset(out, 0, n * sizeof(*out));
	codeheap_batch_begin(&rt->heap, &batch);
	x86_init(&buf);
	for (uint32_t i = 0; i < n && !ret; i++) {
		struct jit_fn *f = &rt->fns[idx[i]];
		struct jit_code *c = calloc(1, sizeof(*c));

		if (!c) {
			ret = -ENOMEM;
			break;
		}
		buf.len = 0;
		codegen_kernel_marked(&buf, &f->k, tiers[i], &c->marks);
		ret = buf.oom ? -ENOMEM : codeheap_batch_put(&batch, buf.bytes, buf.len, &c->mem);
		if (ret) {
			free(c);
			break;
		}
		c->tier = tiers[i];
		c->version = ++f->last_version;
		out[i] = c;
	}
	x86_release(&buf);
	/* Seal even after a failure: what was put must become RX (or be
	 * released) before the batch is forgotten. */
	int sret = codeheap_batch_seal(&batch);

	if (!ret && sret)
		ret = sret;
	if (ret)
		fprintf(stderr, "letw-minijit: code generation failed: %s\n", strerror(-ret));
	for (uint32_t i = 0; i < n && !ret; i++)
		ret = check_code(&rt->fns[idx[i]], out[i]);
	if (ret) {
		discard(rt, out, n);
		return ret;
	}
	rt->n.compiled += n;
	return 0;
}

static void retire(struct jitrt *rt, struct jit_code *c)
{
	c->retire_next = rt->retired;
	rt->retired = c;
}

int jitrt_swap(struct jitrt *rt, const uint32_t *idx, uint32_t n, struct jit_code **fresh)
{
	for (uint32_t i = 0; i < n; i++) {
		struct jit_fn *f = &rt->fns[idx[i]];
		int ret = publish_code(rt, f, fresh[i]);

		if (ret) {
			discard(rt, fresh + i, n - i);
			return ret;
		}
		/* Published before it is reachable, unpublished after it is
		 * not: the trace names the code for as long as it can run. */
		struct jit_code *old = atomic_exchange_explicit(&f->code, fresh[i],
								memory_order_acq_rel);
		fresh[i] = NULL;
		if (!old) {
			if (f->last_version > 1)
				rt->n.regenerated++;
			continue;
		}
		retire(rt, old);
		rt->n.retiered++;
		ret = unpublish_code(f, old);
		if (ret) {
			discard(rt, fresh + i + 1, n - i - 1);
			return ret;
		}
	}
	return 0;
}

int jitrt_remove(struct jitrt *rt, uint32_t index)
{
	struct jit_fn *f = &rt->fns[index];
	struct jit_code *old = atomic_exchange_explicit(&f->code, NULL, memory_order_acq_rel);

	if (!old)
		return 0;
	retire(rt, old);
	rt->n.freed++;
	return unpublish_code(f, old);
}

void jitrt_reclaim(struct jitrt *rt)
{
	struct jit_code *c = rt->retired, *n;

	if (!c)
		return;
	/* Readers hold the urcu-bp read lock from loading fn->code until the
	 * call returns; after this no thread can be inside retired code. */
	urcu_bp_synchronize_rcu();
	rt->retired = NULL;
	for (; c; c = n) {
		n = c->retire_next;
		codeheap_free(&rt->heap, &c->mem);
		free(c);
	}
}
