/* SPDX-License-Identifier: MIT */
/* The sinks' growable arrays (analysis/plugin/grow.c): contents kept
 * across the heap-to-mapping switch, every mremap and a refused mremap's
 * move back to the heap, and a refused growth leaves the array as it was. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <criterion/criterion.h>

#include "grow.h"

struct elem {
	uint64_t a, b, c; /* 24 bytes, like no power of two */
};

static void fill_and_check(size_t n)
{
	struct letw_grow g = { 0 };
	struct elem *e = NULL;
	int mapped_seen = 0;

	for (size_t i = 0; i < n; i++) {
		if (i == g.cap) {
			size_t before = g.cap;

			cr_assert_eq(letw_grow(&g, sizeof(*e), i + 1), 0, "grow to %zu", i + 1);
			cr_assert_geq(g.cap, i + 1);
			cr_assert_gt(g.cap, before);
			e = g.p;
			/* What was there before the move is still there. */
			for (size_t k = 0; k < i; k += 4099)
				cr_assert(e[k].a == k && e[k].b == ~k && e[k].c == k * 3,
					  "element %zu lost growing past %zu", k, before);
			mapped_seen |= (int)g.mapped;
		}
		e[i] = (struct elem){ i, ~i, i * 3 };
	}
	for (size_t k = 0; k < n; k++)
		cr_assert(e[k].a == k && e[k].b == ~k && e[k].c == k * 3, "element %zu", k);
	/* Past 2 MiB the array is a mapping of its own. */
	cr_assert(mapped_seen == (n * sizeof(*e) > ((size_t)2 << 20)));
	letw_grow_free(&g, sizeof(*e));
	cr_assert_null(g.p);
	cr_assert_eq(g.cap, 0);
}

Test(grow, small_stays_on_the_heap)
{
	fill_and_check(1000);
}

Test(grow, large_is_mapped_and_kept)
{
	fill_and_check(2000000); /* 48 MB: several mremap() */
}

Test(grow, large_with_huge_page_advice)
{
	letw_grow_huge_pages(1);
	fill_and_check(300000);
	letw_grow_huge_pages(0);
}

Test(grow, refused_growth_changes_nothing)
{
	struct letw_grow g = { 0 };
	struct rlimit rl = { 64u << 20, 64u << 20 };
	struct elem *e;
	size_t n = (4u << 20) / sizeof(*e); /* 4 MiB: mapped */

	cr_assert_eq(letw_grow(&g, sizeof(*e), n), 0);
	e = g.p;
	for (size_t i = 0; i < n; i++)
		e[i] = (struct elem){ i, ~i, i * 3 };
	/* Criterion runs each test in its own process: the limit stays here. */
	cr_assert_eq(setrlimit(RLIMIT_DATA, &rl), 0);
	cr_assert_eq(letw_grow(&g, sizeof(*e), ((size_t)1 << 30) / sizeof(*e)), -ENOMEM);
	cr_assert_eq(g.p, (void *)e);
	for (size_t i = 0; i < n; i += 997)
		cr_assert(e[i].a == i && e[i].b == ~i && e[i].c == i * 3, "element %zu", i);
	/* A growth the limit allows still works after a refusal. */
	cr_assert_eq(letw_grow(&g, sizeof(*e), n * 2), 0);
	e = g.p;
	for (size_t i = 0; i < n; i += 997)
		cr_assert(e[i].a == i && e[i].b == ~i && e[i].c == i * 3, "element %zu", i);
	letw_grow_free(&g, sizeof(*e));
}

#if defined(__x86_64__)
#define THIS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH AUDIT_ARCH_AARCH64
#endif

/* A mapped array whose mremap() the kernel refuses moves to the heap, whole,
 * and goes on growing there. The refusal is made by a seccomp filter
 * (mremap fails with ENOMEM, as under an address-space limit, which would
 * refuse the heap as well): Criterion runs each test in its own process, so
 * the filter ends with it. */
Test(grow, refused_mremap_moves_to_the_heap)
{
#ifdef THIS_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mremap, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOMEM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct letw_grow g = { 0 };
	struct elem *e;
	size_t n = (4u << 20) / sizeof(*e);

	cr_assert_eq(letw_grow(&g, sizeof(*e), n), 0);
	cr_assert(g.mapped);
	e = g.p;
	for (size_t i = 0; i < n; i++)
		e[i] = (struct elem){ i, ~i, i * 3 };
	cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		cr_assert_eq(errno, EINVAL, "seccomp: %s", strerror(errno));
		cr_skip_test("this kernel has no seccomp filters");
	}
	cr_assert_eq(mremap(g.p, 4096, 8192, MREMAP_MAYMOVE), MAP_FAILED, "the filter is on");
	cr_assert_eq(letw_grow(&g, sizeof(*e), g.cap + 1), 0);
	cr_assert(!g.mapped, "a refused mremap leaves the array on the heap");
	e = g.p;
	for (size_t i = 0; i < n; i++)
		cr_assert(e[i].a == i && e[i].b == ~i && e[i].c == i * 3, "element %zu", i);
	/* From the heap it grows by realloc (which may itself try mremap and
	 * fall back to copying: glibc's own business). */
	cr_assert_eq(letw_grow(&g, sizeof(*e), g.cap + 1), 0);
	e = g.p;
	for (size_t i = 0; i < n; i += 997)
		cr_assert(e[i].a == i && e[i].b == ~i && e[i].c == i * 3, "element %zu", i);
	letw_grow_free(&g, sizeof(*e));
#else
	cr_skip_test("no seccomp architecture constant for this machine");
#endif
}

Test(grow, overflowing_request)
{
	struct letw_grow g = { 0 };

	cr_assert_eq(letw_grow(&g, sizeof(struct elem), SIZE_MAX / 8), -ENOMEM);
	cr_assert_null(g.p);
	cr_assert_eq(g.cap, 0);
}
