/* SPDX-License-Identifier: MIT */
/*
 * The one decision: which rundown passes an ETW control request runs
 * (DESIGN §4). Pure, so it is tested exhaustively and shared by the
 * control thread and the control socket.
 */
#include <errno.h>

#include <lttng-etw/lttng-etw.h>

LETW_API int letw_rundown_pass(int control_code, uint64_t match_any_keyword,
			       int provider)
{
	int passes = LETW_PASS_NONE;

	switch (control_code) {
	case LETW_CONTROL_DISABLE_PROVIDER:
	case LETW_CONTROL_ENABLE_PROVIDER:
	case LETW_CONTROL_CAPTURE_STATE:
		break;
	default:
		return -EINVAL;
	}
	if (provider != LETW_PROVIDER_RUNTIME && provider != LETW_PROVIDER_RUNDOWN)
		return -EINVAL;
	/* The runtime provider's START/END_ENUMERATION (0x40/0x80) describe
	 * its own load events; only the rundown provider runs passes. */
	if (provider != LETW_PROVIDER_RUNDOWN ||
	    control_code == LETW_CONTROL_DISABLE_PROVIDER)
		return LETW_PASS_NONE;
	/* RUNDOWN_END is 0x100: 0x80 (END_ENUMERATION) is deliberately not
	 * part of this test. */
	if (match_any_keyword & LETW_KW_RUNDOWN_START)
		passes |= LETW_PASS_DCSTART;
	if (match_any_keyword & LETW_KW_RUNDOWN_END)
		passes |= LETW_PASS_DCEND;
	return passes;
}
