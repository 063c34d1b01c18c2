/* SPDX-License-Identifier: MIT */
/*
 * Names the sinks write (analysis/plugin/names.c, json_out.c): the scheme,
 * what becomes '?', JSON strings, and the comparison of a record's name
 * parts with a stored name.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "names.h"

Test(names, scheme)
{
	char *s;

	s = letw_name_method("ns.Mod", "fn", "(i64)->i64", 0x8u | (2u << 7));
	cr_expect_str_eq(s, "ns.Mod::fn(i64)->i64 [optimized]");
	free(s);
	s = letw_name_method("", "fn", "", 0x8u);
	cr_expect_str_eq(s, "fn");
	free(s);
	s = letw_name_method("a", "b\nc", NULL, 0);
	cr_expect_str_eq(s, "a::b?c");
	free(s);
	s = letw_name_stub(1, 0x1234, "VSD_ResolveStub");
	cr_expect_str_eq(s, "stub<precode>@0x1234 VSD_ResolveStub");
	free(s);
	s = letw_name_stub(77, 0, "");
	cr_expect_str_eq(s, "stub<77>@0x0");
	free(s);
}

/* A perf map name is one line of valid UTF-8: C0, DEL and C1 controls and
 * bytes outside valid UTF-8 become '?', valid multibyte text is kept, and
 * long names take the same path as short ones (word-at-a-time check). */
Test(names, control_and_invalid_utf8)
{
	struct letw_namebuf b = { NULL, 0 };
	char *s;

	s = letw_name_method("", "a\x7f" "b\xc2\x85" "c\x1b[2J", NULL, 0);
	cr_expect_str_eq(s, "a?b?c?[2J");
	free(s);
	s = letw_name_method("", "caf\xc3\xa9 \xe2\x82\xac \xff\xfe \xed\xa0\x80 \xc3", NULL, 0);
	cr_expect_str_eq(s, "caf\xc3\xa9 \xe2\x82\xac ?? ??? ?");
	free(s);
	cr_expect_str_eq(letw_name_method_in(&b, "Some.Long.Namespace.Name", "method_with_a_long_name",
					     "(i64, i64)->i64\n", 0),
			 "Some.Long.Namespace.Name::method_with_a_long_name(i64, i64)->i64?");
	cr_expect_str_eq(letw_name_method_len(&b, "ns", 2, "fn", 2, "()", 2, 3u << 7),
			 "ns::fn() [quick]");
	letw_namebuf_fini(&b);
}

/* JSON strings from trace bytes are valid UTF-8 and escaped. */
Test(json, strings_are_valid_utf8)
{
	char buf[256] = { 0 };
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	cr_assert(f);
	letw_json_str(f, "q\"b\\n\n\x01 caf\xc3\xa9 \xff\xc3(");
	fclose(f);
	cr_expect_str_eq(buf, "\"q\\\"b\\\\n\\u000a\\u0001 caf\xc3\xa9 \\ufffd\\ufffd(\"");
}

/* letw_name_method_is() agrees with the name letw_name_method_len()
 * builds: equal, different, and unsure (-1) only where sanitizing could
 * make different bytes equal. */
static int name_is(const char *stored, const char *ns, const char *name, const char *sig,
		   uint32_t flags)
{
	return letw_name_method_is(stored, ns, SIZE_MAX, name, SIZE_MAX, sig, SIZE_MAX,
				   flags);
}

Test(names, method_is_compares_parts)
{
	struct letw_namebuf b = { NULL, 0 };
	const char *built = letw_name_method_len(&b, "mj", 2, "fn_1", 4, "(i64)->i64", 10,
						 2u << 7);

	cr_assert_str_eq(built, "mj::fn_1(i64)->i64 [optimized]");
	cr_expect_eq(name_is(built, "mj", "fn_1", "(i64)->i64", 2u << 7), 1);
	cr_expect_eq(name_is(built, "mj", "fn_1", "(i64)->i64", 0), 0);
	cr_expect_eq(name_is(built, "mj", "fn_12", "(i64)->i64", 2u << 7), 0);
	cr_expect_eq(name_is(built, "", "mj::fn_1", "(i64)->i64", 2u << 7), 1,
		     "same bytes, same name");
	cr_expect_eq(name_is("mj::fn_1(i64)->i64 [optimized] x", "mj", "fn_1", "(i64)->i64",
			     2u << 7), 0, "stored longer");
	cr_expect_eq(name_is("mj::fn", "mj", "fn_1", "(i64)->i64", 0), 0, "stored shorter");
	/* No namespace, no name, no signature. */
	cr_expect_eq(name_is("?", "", "", NULL, 0), 1);
	cr_expect_eq(name_is("f", NULL, "f", "", 0), 1);
	cr_expect_eq(name_is("::f", "", "f", "", 0), 0);
	/* A control character becomes '?': the parts' bytes differ from
	 * the stored name, which only building it can match. */
	built = letw_name_method_len(&b, "a\nb", SIZE_MAX, "f", SIZE_MAX, NULL, SIZE_MAX, 0);
	cr_assert_str_eq(built, "a?b::f");
	cr_expect_eq(name_is(built, "a\nb", "f", NULL, 0), -1);
	cr_expect_eq(name_is(built, "a?b", "f", NULL, 0), 1);
	/* Valid UTF-8 is kept: byte-equal parts are its name. */
	cr_expect_eq(name_is("caf\xc3\xa9::f", "caf\xc3\xa9", "f", NULL, 0), 1);
	letw_namebuf_fini(&b);
}
