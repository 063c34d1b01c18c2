/* SPDX-License-Identifier: MIT */
/* letw_rundown_pass over every control code x keyword combination. */
#include <errno.h>

#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>

/* Every keyword either provider defines, and a few bits nobody does. */
static const uint64_t keywords[] = {
	LETW_KW_LOADER, LETW_KW_JIT, LETW_KW_START_ENUMERATION,
	LETW_KW_END_ENUMERATION, LETW_KW_STUB, LETW_KW_LOADER_RUNDOWN,
	LETW_KW_JIT_RUNDOWN, LETW_KW_RUNDOWN_START, LETW_KW_RUNDOWN_END,
	LETW_KW_STUB_RUNDOWN, 0x1ull, 0x200ull, 1ull << 63,
};
#define NKW (sizeof(keywords) / sizeof(keywords[0]))

/* Reference model written from DESIGN §4, independently of pass.c. */
static int expected(int code, uint64_t mask, int provider)
{
	int p = 0;

	if (provider != LETW_PROVIDER_RUNDOWN)
		return 0;
	if (code != LETW_CONTROL_ENABLE_PROVIDER && code != LETW_CONTROL_CAPTURE_STATE)
		return 0;
	if (mask & 0x40)
		p |= LETW_PASS_DCSTART;
	if (mask & 0x100)
		p |= LETW_PASS_DCEND;
	return p;
}

Test(pass, every_code_keyword_subset_and_provider)
{
	static const int codes[] = { LETW_CONTROL_DISABLE_PROVIDER,
				     LETW_CONTROL_ENABLE_PROVIDER,
				     LETW_CONTROL_CAPTURE_STATE };
	unsigned long checked = 0;

	/* All 2^13 subsets of the keyword list. */
	for (uint32_t subset = 0; subset < (1u << NKW); subset++) {
		uint64_t mask = 0;

		for (size_t k = 0; k < NKW; k++)
			if (subset & (1u << k))
				mask |= keywords[k];
		for (size_t c = 0; c < 3; c++)
			for (int prov = 0; prov <= 1; prov++) {
				cr_assert_eq(letw_rundown_pass(codes[c], mask, prov),
					     expected(codes[c], mask, prov),
					     "code %d mask %#llx provider %d", codes[c],
					     (unsigned long long)mask, prov);
				checked++;
			}
	}
	cr_assert_eq(checked, (1ul << NKW) * 6);
}

Test(pass, end_enumeration_0x80_never_triggers)
{
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_ENABLE_PROVIDER, 0x80,
				       LETW_PROVIDER_RUNDOWN), LETW_PASS_NONE);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_CAPTURE_STATE, 0x80,
				       LETW_PROVIDER_RUNDOWN), LETW_PASS_NONE);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_ENABLE_PROVIDER, 0x80 | 0x40,
				       LETW_PROVIDER_RUNTIME), LETW_PASS_NONE);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_ENABLE_PROVIDER, 0x80 | 0x40,
				       LETW_PROVIDER_RUNDOWN), LETW_PASS_DCSTART);
}

Test(pass, both_keywords_run_one_walk_with_both_flavours)
{
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_ENABLE_PROVIDER,
				       LETW_KW_RUNDOWN_START | LETW_KW_RUNDOWN_END |
					       LETW_KW_JIT_RUNDOWN,
				       LETW_PROVIDER_RUNDOWN),
		     LETW_PASS_DCSTART | LETW_PASS_DCEND);
}

Test(pass, capture_state_and_disable)
{
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_CAPTURE_STATE,
				       LETW_KW_RUNDOWN_END, LETW_PROVIDER_RUNDOWN),
		     LETW_PASS_DCEND);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_DISABLE_PROVIDER, ~0ull,
				       LETW_PROVIDER_RUNDOWN), LETW_PASS_NONE);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_CAPTURE_STATE, 0,
				       LETW_PROVIDER_RUNDOWN), LETW_PASS_NONE);
}

Test(pass, runtime_provider_never_triggers)
{
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_CAPTURE_STATE, ~0ull,
				       LETW_PROVIDER_RUNTIME), LETW_PASS_NONE);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_ENABLE_PROVIDER, ~0ull,
				       LETW_PROVIDER_RUNTIME), LETW_PASS_NONE);
}

Test(pass, invalid_arguments)
{
	cr_assert_eq(letw_rundown_pass(3, LETW_KW_RUNDOWN_START,
				       LETW_PROVIDER_RUNDOWN), -EINVAL);
	cr_assert_eq(letw_rundown_pass(-1, 0, LETW_PROVIDER_RUNDOWN), -EINVAL);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_ENABLE_PROVIDER,
				       LETW_KW_RUNDOWN_START, 2), -EINVAL);
}
