/* SPDX-License-Identifier: MIT */
/* The JVMTI agent's pure parts, first half: modified UTF-8, Java names,
 * options, line-table rows from HotSpot's inline records, line-number
 * tables. The pools and sets are in test_jvm_sets.c (one executable). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "linerows.h"
#include "linetab.h"
#include "mutf8.h"
#include "naming.h"
#include "options.h"
#include "scratch.h"
#include "stats.h"

/* ---- modified UTF-8 ---- */

Test(mutf8, ascii_and_two_byte_pass_through)
{
	char out[64];

	cr_expect_eq(jvm_mutf8_to_utf8("Foo$Bar", out, sizeof(out), NULL), 7);
	cr_expect_str_eq(out, "Foo$Bar");
	jvm_mutf8_to_utf8("caf\xC3\xA9", out, sizeof(out), NULL);
	cr_expect_str_eq(out, "caf\xC3\xA9");
	jvm_mutf8_to_utf8("\xE2\x82\xAC", out, sizeof(out), NULL); /* U+20AC */
	cr_expect_str_eq(out, "\xE2\x82\xAC");
}

Test(mutf8, surrogate_pair_becomes_four_bytes)
{
	char out[64];

	/* U+1F600 in CESU-8: ED A0 BD ED B8 80 */
	cr_expect_eq(jvm_mutf8_to_utf8("a\xED\xA0\xBD\xED\xB8\x80z", out, sizeof(out), NULL), 6);
	cr_expect_str_eq(out, "a\xF0\x9F\x98\x80z");
}

Test(mutf8, nul_lone_surrogates_and_garbage_become_fffd)
{
	char out[64];

	jvm_mutf8_to_utf8("a\xC0\x80z", out, sizeof(out), NULL);
	cr_expect_str_eq(out, "a\xEF\xBF\xBDz");
	jvm_mutf8_to_utf8("\xED\xA0\xBDx", out, sizeof(out), NULL); /* high alone */
	cr_expect_str_eq(out, "\xEF\xBF\xBDx");
	jvm_mutf8_to_utf8("\xED\xB8\x80", out, sizeof(out), NULL); /* low alone */
	cr_expect_str_eq(out, "\xEF\xBF\xBD");
	jvm_mutf8_to_utf8("\xFF\xC3", out, sizeof(out), NULL); /* bad lead, cut sequence */
	cr_expect_str_eq(out, "\xEF\xBF\xBD\xEF\xBF\xBD");
	jvm_mutf8_to_utf8("\xE0\x80\xAF", out, sizeof(out), NULL); /* overlong */
	cr_expect_str_eq(out, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
	jvm_mutf8_to_utf8(NULL, out, sizeof(out), NULL);
	cr_expect_str_eq(out, "");
}

Test(mutf8, cut_at_a_character_boundary)
{
	char out[6];
	int cut;

	/* "ab€c": the euro sign (3 bytes) does not fit after "ab" in 5+1. */
	cr_expect_eq(jvm_mutf8_to_utf8("abc\xE2\x82\xAC", out, sizeof(out), &cut), 3);
	cr_expect_str_eq(out, "abc");
	cr_expect_eq(cut, 1);
	cr_expect_eq(jvm_mutf8_to_utf8("abcde", out, sizeof(out), &cut), 5);
	cr_expect_eq(cut, 0);
}

/* ---- names ---- */

Test(naming, class_styles)
{
	char out[128];

	jvm_name_class("Lcom/example/Foo$Inner;", JVM_NS_DOTTED, out, sizeof(out));
	cr_expect_str_eq(out, "com.example.Foo$Inner");
	jvm_name_class("Lcom/example/Foo$Inner;", JVM_NS_SIMPLE, out, sizeof(out));
	cr_expect_str_eq(out, "Foo$Inner");
	jvm_name_class("Lcom/example/Foo$Inner;", JVM_NS_JVM, out, sizeof(out));
	cr_expect_str_eq(out, "Lcom/example/Foo$Inner;");
	jvm_name_class("LTop;", JVM_NS_DOTTED, out, sizeof(out));
	cr_expect_str_eq(out, "Top");
	/* Hidden classes print like Class.getName(). */
	jvm_name_class("Ljava/lang/invoke/LambdaForm$MH.0x0000000800c0c400;", JVM_NS_DOTTED, out,
		       sizeof(out));
	cr_expect_str_eq(out, "java.lang.invoke.LambdaForm$MH/0x0000000800c0c400");
	jvm_name_class("Ljava/lang/invoke/LambdaForm$MH.0x0000000800c0c400;", JVM_NS_SIMPLE, out,
		       sizeof(out));
	cr_expect_str_eq(out, "LambdaForm$MH/0x0000000800c0c400");
	jvm_name_class("[I", JVM_NS_DOTTED, out, sizeof(out)); /* kept as is */
	cr_expect_str_eq(out, "[I");
}

Test(naming, class_cut_keeps_utf8_whole)
{
	char out[8];

	/* "a/b\xC3\xA9\xC3\xA9\xC3\xA9" dotted is 9 bytes; 7 fit, the cut
	 * must not leave half of an é. */
	jvm_name_class("La/b\xC3\xA9\xC3\xA9\xC3\xA9;", JVM_NS_DOTTED, out, sizeof(out));
	cr_expect_str_eq(out, "a.b\xC3\xA9\xC3\xA9");
	jvm_name_class("La/b\xC3\xA9\xC3\xA9\xC3\xA9x;", JVM_NS_DOTTED, out, 7);
	cr_expect_str_eq(out, "a.b\xC3\xA9");
}

/* A class signature longer than the buffer (a generated class, 4 KiB of
 * packages): converted, it still ends with ';', so the styles and the
 * source path read it as a class, not as the raw JVM form. */
Test(naming, long_class_signature_stays_a_class)
{
	char sig[200], utf8[64], ns[64], path[64];
	size_t n, i;

	n = (size_t)snprintf(sig, sizeof(sig), "L");
	for (i = 0; i < 20; i++)
		n += (size_t)snprintf(sig + n, sizeof(sig) - n, "pkg%zu/", i);
	snprintf(sig + n, sizeof(sig) - n, "Foo;");
	n = jvm_class_sig_to_utf8(sig, utf8, sizeof(utf8));
	cr_expect_eq(n, sizeof(utf8) - 1);
	cr_expect_eq(utf8[0], 'L');
	cr_expect_eq(utf8[n - 1], ';', "cut signature lost its ';': %s", utf8);
	cr_expect_eq(strncmp(utf8, sig, n - 1), 0);
	jvm_name_class(utf8, JVM_NS_DOTTED, ns, sizeof(ns));
	cr_expect_eq(strncmp(ns, "pkg0.pkg1.pkg2.", 15), 0, "dotted: %s", ns);
	jvm_source_path(utf8, "Foo.java", path, sizeof(path));
	cr_expect_eq(strncmp(path, "pkg0/pkg1/", 10), 0, "source path: %s", path);
	/* One that fits is untouched; a non-class one is only cut. */
	jvm_class_sig_to_utf8("La/B;", utf8, sizeof(utf8));
	cr_expect_str_eq(utf8, "La/B;");
	jvm_class_sig_to_utf8("[[[[[[[[[[I", utf8, 6);
	cr_expect_str_eq(utf8, "[[[[");
}

Test(naming, signature_styles)
{
	const char *d = "(I[Ljava/lang/String;[[JLcom/ex/Foo$Bar;Z)V";
	char out[256];

	jvm_name_signature(d, JVM_SIG_DESCRIPTOR, out, sizeof(out));
	cr_expect_str_eq(out, d);
	jvm_name_signature(d, JVM_SIG_JAVA, out, sizeof(out));
	cr_expect_str_eq(out, "(int, java.lang.String[], long[][], com.ex.Foo$Bar, boolean)");
	jvm_name_signature(d, JVM_SIG_SIMPLE, out, sizeof(out));
	cr_expect_str_eq(out, "(int, String[], long[][], Foo$Bar, boolean)");
	jvm_name_signature(d, JVM_SIG_NONE, out, sizeof(out));
	cr_expect_str_eq(out, "");
	jvm_name_signature("()J", JVM_SIG_SIMPLE, out, sizeof(out));
	cr_expect_str_eq(out, "()");
}

Test(naming, malformed_signature_is_copied)
{
	char out[64];

	jvm_name_signature("(Ljava/lang/String", JVM_SIG_JAVA, out, sizeof(out));
	cr_expect_str_eq(out, "(Ljava/lang/String");
	jvm_name_signature("(Q)V", JVM_SIG_SIMPLE, out, sizeof(out));
	cr_expect_str_eq(out, "(Q)V");
	jvm_name_signature("([V)V", JVM_SIG_SIMPLE, out, sizeof(out));
	cr_expect_str_eq(out, "([V)V");
	jvm_name_signature("I", JVM_SIG_JAVA, out, sizeof(out));
	cr_expect_str_eq(out, "I");
}

Test(naming, source_paths)
{
	char out[128];

	jvm_source_path("Lcom/example/Foo$Bar;", "Foo.java", out, sizeof(out));
	cr_expect_str_eq(out, "com/example/Foo.java");
	jvm_source_path("LTop;", "Top.java", out, sizeof(out));
	cr_expect_str_eq(out, "Top.java");
	jvm_source_path("Lcom/example/Foo;", NULL, out, sizeof(out));
	cr_expect_str_eq(out, "");
	jvm_source_path("Lcom/example/Foo;", "", out, sizeof(out));
	cr_expect_str_eq(out, "");
}

/* Method handle intrinsics: MethodHandle's native wrappers only. */
Test(naming, method_handle_intrinsics)
{
	const char *mh = "Ljava/lang/invoke/MethodHandle;";

	cr_expect(jvm_is_mh_intrinsic(mh, 0, 0), "a native wrapper (no pcs) of MethodHandle");
	cr_expect(jvm_is_mh_intrinsic(mh, 0, 1));
	cr_expect(!jvm_is_mh_intrinsic(mh, 5, 1),
		  "C1/C2 code has pcs: a real MethodHandle method, whatever the jmethodID says");
	cr_expect(jvm_is_mh_intrinsic(mh, -1, 1), "no inline record: the resolved method is native");
	cr_expect(!jvm_is_mh_intrinsic(mh, -1, 0));
	cr_expect(!jvm_is_mh_intrinsic("Ljava/lang/Object;", 0, 1), "other classes' native wrappers");
	cr_expect(!jvm_is_mh_intrinsic("Ljava/lang/invoke/VarHandle;", 0, 1));
	cr_expect(!jvm_is_mh_intrinsic("Ljava/lang/invoke/MethodHandle", 0, 1));
	cr_expect(!jvm_is_mh_intrinsic(NULL, 0, 1));
}

/* ---- options ---- */

Test(options, defaults)
{
	struct jvm_opts o;
	char err[128];

	jvm_opts_defaults(&o);
	cr_assert_eq(jvm_opts_parse(NULL, &o, err, sizeof(err)), 0);
	cr_expect_eq(o.ns, JVM_NS_DOTTED);
	cr_expect_eq(o.sig, JVM_SIG_DESCRIPTOR);
	cr_expect(o.lines && o.inlining && o.stubs && o.modules);
	cr_expect_eq(o.poll_ms, 0);
	cr_expect_str_eq(o.log, "");
	cr_expect_eq(o.log_level, JVM_LOG_INFO);
	cr_expect_eq(o.help, 0);
}

Test(options, every_key)
{
	struct jvm_opts o;
	char err[128];

	jvm_opts_defaults(&o);
	cr_assert_eq(jvm_opts_parse("class=simple,sig=java,lines=0,inline=0,stubs=0,modules=0,"
				    "poll=20,instance=7,log=/tmp/a.log,loglevel=debug,help",
				    &o, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(o.ns, JVM_NS_SIMPLE);
	cr_expect_eq(o.sig, JVM_SIG_JAVA);
	cr_expect(!o.lines && !o.inlining && !o.stubs && !o.modules);
	cr_expect_eq(o.poll_ms, 20);
	cr_expect_eq(o.instance_id, 7);
	cr_expect_str_eq(o.log, "/tmp/a.log");
	cr_expect_eq(o.log_level, JVM_LOG_DEBUG);
	cr_expect_eq(o.help, 1);
}

Test(options, colon_spelling_and_aliases)
{
	struct jvm_opts o;
	char err[128];

	jvm_opts_defaults(&o);
	cr_assert_eq(jvm_opts_parse("sig:none,class:jvm,log:/tmp/x=y", &o, err, sizeof(err)), 0,
		     "%s", err);
	cr_expect_eq(o.sig, JVM_SIG_NONE);
	cr_expect_eq(o.ns, JVM_NS_JVM);
	/* The first separator ends the key; the value keeps the other. */
	cr_assert_eq(jvm_opts_parse("log=/tmp/a:b", &o, err, sizeof(err)), 0);
	cr_expect_str_eq(o.log, "/tmp/a:b");
	cr_assert_eq(jvm_opts_parse("dottedclass,msig", &o, err, sizeof(err)), 0);
	cr_expect_eq(o.ns, JVM_NS_DOTTED);
	cr_expect_eq(o.sig, JVM_SIG_DESCRIPTOR);
}

/* Any path the system takes (PATH_MAX), not a shorter limit of ours. */
Test(options, long_log_path)
{
	char opt[4200], err[128];
	struct jvm_opts o;
	size_t n;

	n = (size_t)snprintf(opt, sizeof(opt), "log=");
	while (n < 4 + 4000)
		n += (size_t)snprintf(opt + n, sizeof(opt) - n, "/a-directory");
	jvm_opts_defaults(&o);
	cr_expect_eq(jvm_opts_parse(opt, &o, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(o.log, opt + 4);
}

Test(options, bad_input_is_refused_with_a_message)
{
	static const char *const bad[] = {
		"bogus", "sig=short", "class=", "lines=2", "poll=0", "poll=10001", "poll=-1",
		"poll=5ms", "instance=65536", "log=", "loglevel=loud", "unfold",
		"poll= 5", "poll=+5", "instance= -0", "instance=\t7", "poll=",
	};
	struct jvm_opts o;
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		jvm_opts_defaults(&o);
		cr_expect_eq(jvm_opts_parse(bad[i], &o, err, sizeof(err)), -EINVAL, "%s", bad[i]);
		cr_expect_neq(err[0], '\0', "%s: no message", bad[i]);
	}
}

/* ---- line-table rows ---- */

/* Fake methods: the "jmethodID" is 1..n; method k lives in file k-1 and
 * its line for bci b is 100*k + b. */
static void fake_resolve(void *ctx, jmethodID m, jint bci, uint32_t *file, uint32_t *line)
{
	uintptr_t k = (uintptr_t)m;

	(*(int *)ctx)++;
	*file = (uint32_t)(k - 1);
	*line = bci < 0 ? (uint32_t)(100 * k) : (uint32_t)(100 * k + (uintptr_t)bci);
}

#define M(k) ((jmethodID)(uintptr_t)(k))
#define CODE 0x10000ull

static void expect_row(const struct letw_line *r, uint32_t off, uint32_t line, uint32_t file,
		       uint32_t depth)
{
	cr_expect_eq(r->native_offset, off, "offset %u, want %u", r->native_offset, off);
	cr_expect_eq(r->line, line, "line %u, want %u", r->line, line);
	cr_expect_eq(r->file, file, "file %u, want %u", r->file, file);
	cr_expect_eq(r->inline_depth, depth, "depth %u, want %u", r->inline_depth, depth);
}

Test(linerows, inlined_frames_outermost_first_and_offsets_after_the_previous_pc)
{
	/* pc 0x10: method 1 alone at bci 3; pc 0x30: method 2 (bci 5)
	 * inlined into method 1 (bci 7), HotSpot's order innermost first. */
	jmethodID m0[] = { M(1) }, m1[] = { M(2), M(1) };
	jint b0[] = { 3 }, b1[] = { 5, 7 };
	PCStackInfo pcs[] = {
		{ (void *)(uintptr_t)(CODE + 0x10), 1, m0, b0 },
		{ (void *)(uintptr_t)(CODE + 0x30), 2, m1, b1 },
	};
	struct letw_line rows[16];
	struct jvm_rows r = { .rows = rows, .cap = 16 };
	int calls = 0;

	jvm_rows_from_inline(&r, pcs, 2, CODE, 0x80, 1, fake_resolve, &calls);
	cr_assert_eq(r.n, 4);
	expect_row(&rows[0], 0, 103, 0, 0);     /* up to and including pc 0x10 */
	expect_row(&rows[1], 0x11, 107, 0, 0);  /* (0x10, 0x30]: method 1 ... */
	expect_row(&rows[2], 0x11, 205, 1, 1);  /* ... with method 2 inlined */
	expect_row(&rows[3], 0x31, 0, 0, 0);    /* after the last PcDesc: unknown */
	cr_expect_eq(r.truncated, 0);
	cr_expect_eq(r.skipped_pcs, 0);
}

Test(linerows, without_inlining_only_the_outer_frame)
{
	jmethodID m1[] = { M(2), M(1) };
	jint b1[] = { 5, 7 };
	PCStackInfo pcs[] = { { (void *)(uintptr_t)(CODE + 0x30), 2, m1, b1 } };
	struct letw_line rows[8];
	struct jvm_rows r = { .rows = rows, .cap = 8 };
	int calls = 0;

	jvm_rows_from_inline(&r, pcs, 1, CODE, 0x31, 0, fake_resolve, &calls);
	cr_assert_eq(r.n, 1); /* code ends right after the pc: no unknown row */
	expect_row(&rows[0], 0, 107, 0, 0);
	cr_expect_eq(calls, 1);
}

Test(linerows, identical_stacks_merge_and_bad_pcs_are_skipped)
{
	jmethodID m[] = { M(1) };
	jint b[] = { 4 }, b2[] = { 9 };
	PCStackInfo pcs[] = {
		{ (void *)(uintptr_t)(CODE + 0x08), 1, m, b },
		{ (void *)(uintptr_t)(CODE + 0x18), 1, m, b },   /* same line: merged */
		{ (void *)(uintptr_t)(CODE + 0x10), 1, m, b2 },  /* out of order */
		{ (void *)(uintptr_t)(CODE - 0x01), 1, m, b2 },  /* before the code */
		{ (void *)(uintptr_t)(CODE + 0x100), 1, m, b2 }, /* past the end */
		{ (void *)(uintptr_t)(CODE + 0x20), 0, m, b2 },  /* no frames */
		{ (void *)(uintptr_t)(CODE + 0x28), 1, m, b2 },
	};
	struct letw_line rows[8];
	struct jvm_rows r = { .rows = rows, .cap = 8 };
	int calls = 0;

	jvm_rows_from_inline(&r, pcs, 7, CODE, 0x40, 1, fake_resolve, &calls);
	cr_assert_eq(r.n, 3);
	expect_row(&rows[0], 0, 104, 0, 0);
	expect_row(&rows[1], 0x19, 109, 0, 0);
	expect_row(&rows[2], 0x29, 0, 0, 0);
	cr_expect_eq(r.skipped_pcs, 4);
}

Test(linerows, full_table_ends_with_an_unknown_row_where_the_next_would_start)
{
	jmethodID m1[] = { M(2), M(1) };
	jint b1[] = { 1, 2 }, b2[] = { 3, 4 }, b3[] = { 5, 6 };
	PCStackInfo pcs[] = {
		{ (void *)(uintptr_t)(CODE + 0x10), 2, m1, b1 },
		{ (void *)(uintptr_t)(CODE + 0x20), 2, m1, b2 },
		{ (void *)(uintptr_t)(CODE + 0x30), 2, m1, b3 },
	};
	struct letw_line rows[4];
	struct jvm_rows r = { .rows = rows, .cap = 4 }; /* room for one stack + the closing row */
	int calls = 0;

	jvm_rows_from_inline(&r, pcs, 3, CODE, 0x80, 1, fake_resolve, &calls);
	cr_assert_eq(r.n, 3);
	expect_row(&rows[0], 0, 102, 0, 0);
	expect_row(&rows[1], 0, 201, 1, 1);
	expect_row(&rows[2], 0x11, 0, 0, 0);
	cr_expect_eq(r.truncated, 1);
}

Test(linerows, deep_stacks_keep_their_outermost_frames)
{
	jmethodID m[JVM_ROWS_MAX_DEPTH + 6];
	jint b[JVM_ROWS_MAX_DEPTH + 6];
	PCStackInfo pcs[1];
	struct letw_line rows[JVM_ROWS_MAX_DEPTH + 8];
	struct jvm_rows r = { .rows = rows, .cap = JVM_ROWS_MAX_DEPTH + 8 };
	int calls = 0, i, n = JVM_ROWS_MAX_DEPTH + 6;

	for (i = 0; i < n; i++) {
		m[i] = M(n - i); /* outermost (index n-1) is method 1 */
		b[i] = 0;
	}
	pcs[0] = (PCStackInfo){ (void *)(uintptr_t)(CODE + 4), n, m, b };
	jvm_rows_from_inline(&r, pcs, 1, CODE, 8, 1, fake_resolve, &calls);
	cr_assert_eq(r.n, JVM_ROWS_MAX_DEPTH + 1);
	expect_row(&rows[0], 0, 100, 0, 0);
	expect_row(&rows[JVM_ROWS_MAX_DEPTH - 1], 0, 100 * JVM_ROWS_MAX_DEPTH,
		   JVM_ROWS_MAX_DEPTH - 1, JVM_ROWS_MAX_DEPTH - 1);
	cr_expect_eq(r.cut_frames, 6);
	cr_expect_eq(jvm_rows_bound_inline(pcs, 1, 1), JVM_ROWS_MAX_DEPTH + 1);
	cr_expect_eq(jvm_rows_bound_inline(pcs, 1, 0), 2);
}

Test(linerows, from_the_address_map)
{
	jvmtiAddrLocationMap map[] = {
		{ (void *)(uintptr_t)(CODE + 0x04), 0 },
		{ (void *)(uintptr_t)(CODE + 0x0c), 6 },
		{ (void *)(uintptr_t)(CODE + 0x0c), 8 }, /* same pc again: skipped */
	};
	struct letw_line rows[8];
	struct jvm_rows r = { .rows = rows, .cap = 8 };
	int calls = 0;

	jvm_rows_from_map(&r, map, 3, M(3), CODE, 0x20, fake_resolve, &calls);
	cr_assert_eq(r.n, 3);
	expect_row(&rows[0], 0, 300, 2, 0);
	expect_row(&rows[1], 5, 306, 2, 0);
	expect_row(&rows[2], 0x0d, 0, 0, 0);
	cr_expect_eq(r.skipped_pcs, 1);
}

Test(linerows, inline_record_is_found_and_version_checked)
{
	jvmtiCompiledMethodLoadDummyRecord dummy = { { JVMTI_CMLR_DUMMY, 1, 0, NULL }, "x" };
	jvmtiCompiledMethodLoadInlineRecord rec = { { JVMTI_CMLR_INLINE_INFO, 1, 0, NULL }, 0, NULL };

	dummy.header.next = &rec.header;
	cr_expect_eq(jvm_inline_record(&dummy), &rec);
	cr_expect_null(jvm_inline_record(NULL));
	rec.header.majorinfoversion = 2;
	cr_expect_null(jvm_inline_record(&dummy));
}

/* ---- line-number tables: sorted once, searched per frame ---- */

Test(linetab, search_a_sorted_table)
{
	jvmtiLineNumberEntry t[] = { { 0, 10 }, { 4, 11 }, { 9, 13 }, { 20, 12 } };

	jvm_linetab_sort(t, 4); /* already sorted: unchanged */
	cr_expect_eq(t[2].line_number, 13);
	cr_expect_eq(jvm_linetab_line(t, 4, 0, 7), 10);
	cr_expect_eq(jvm_linetab_line(t, 4, 3, 7), 10);
	cr_expect_eq(jvm_linetab_line(t, 4, 4, 7), 11);
	cr_expect_eq(jvm_linetab_line(t, 4, 19, 7), 13);
	cr_expect_eq(jvm_linetab_line(t, 4, 20, 7), 12);
	cr_expect_eq(jvm_linetab_line(t, 4, 5000, 7), 12);
	cr_expect_eq(jvm_linetab_line(t, 4, -1, 7), 7);   /* synchronization scope */
	cr_expect_eq(jvm_linetab_line(t + 1, 3, 2, 7), 7); /* before every entry */
	cr_expect_eq(jvm_linetab_line(NULL, 0, 2, 7), 7);
}

/* The old linear scan, the reference: greatest start <= bci, the smallest
 * line among equal starts (the sorted order's first). */
static uint32_t scan_line(const jvmtiLineNumberEntry *t, jint n, jint bci, uint32_t fallback)
{
	jlocation best = -1;
	uint32_t line = fallback;
	jint i;

	if (bci < 0)
		return fallback;
	for (i = 0; i < n; i++)
		if (t[i].start_location <= bci &&
		    (t[i].start_location > best ||
		     (t[i].start_location == best && (uint32_t)t[i].line_number < line))) {
			best = t[i].start_location;
			line = (uint32_t)t[i].line_number;
		}
	return line;
}

Test(linetab, unsorted_tables_with_shared_starts_match_a_scan)
{
	enum { N = 997 };
	static jvmtiLineNumberEntry t[N], orig[N];
	uint32_t x = 12345, i;
	jint bci;

	/* Random starts in [0, 400): many shared; lines random too. */
	for (i = 0; i < N; i++) {
		x = x * 1103515245u + 12345u;
		orig[i].start_location = (jlocation)((x >> 8) % 400);
		x = x * 1103515245u + 12345u;
		orig[i].line_number = (jint)((x >> 8) % 5000) + 1;
	}
	memcpy(t, orig, sizeof(t));
	jvm_linetab_sort(t, N);
	for (i = 1; i < N; i++)
		cr_assert(t[i - 1].start_location < t[i].start_location ||
			  (t[i - 1].start_location == t[i].start_location &&
			   t[i - 1].line_number <= t[i].line_number), "not sorted at %u", i);
	for (bci = -2; bci < 420; bci++)
		cr_expect_eq(jvm_linetab_line(t, N, bci, 3), scan_line(orig, N, bci, 3), "bci %d", bci);
	/* Reverse order: the worst case for a naive sort, still in place. */
	for (i = 0; i < N; i++)
		t[i] = (jvmtiLineNumberEntry){ (jlocation)(N - i), (jint)i };
	jvm_linetab_sort(t, N);
	for (i = 0; i < N; i++)
		cr_expect_eq(t[i].start_location, (jlocation)(i + 1));
}

/* ---- line-table rows in a scratch block (scratch.h) ---- */

Test(scratch, rows_past_the_cap_are_truncated)
{
	const uint32_t npcs = JVM_SCRATCH_ROWS + 100;
	PCStackInfo *pcs = calloc(npcs, sizeof(*pcs));
	jint *bcis = calloc(npcs, sizeof(*bcis));
	jmethodID m = M(1);
	struct jvm_scratch *s;
	struct jvm_rows r;
	uint32_t i;
	int calls = 0;

	cr_assert(pcs && bcis);
	cr_assert_eq(jvm_scratch_init(), 0);
	s = jvm_scratch_get();
	cr_assert_not_null(s);
	jvm_scratch_rows(s, &r);
	cr_expect_eq(r.rows, s->rows);
	cr_assert_eq(r.cap, JVM_SCRATCH_ROWS);
	/* One PcDesc every 4 bytes, each at a new line: one row each. */
	for (i = 0; i < npcs; i++) {
		bcis[i] = (jint)i;
		pcs[i] = (PCStackInfo){ (void *)(uintptr_t)(CODE + 4 * i + 3), 1, &m, &bcis[i] };
	}
	jvm_rows_from_inline(&r, pcs, (jint)npcs, CODE, 4 * npcs + 16, 1, fake_resolve, &calls);
	cr_expect_eq(r.truncated, 1);
	cr_assert_eq(r.n, JVM_SCRATCH_ROWS);
	expect_row(&r.rows[JVM_SCRATCH_ROWS - 2], 4 * (JVM_SCRATCH_ROWS - 2), 100 + JVM_SCRATCH_ROWS - 2,
		   0, 0);
	/* The closing row is unknown, where the first row that did not fit
	 * would have started. */
	expect_row(&r.rows[JVM_SCRATCH_ROWS - 1], 4 * (JVM_SCRATCH_ROWS - 1), 0, 0, 0);
	jvm_scratch_put(s);
	free(pcs);
	free(bcis);
}
