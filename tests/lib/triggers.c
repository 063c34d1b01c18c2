/* SPDX-License-Identifier: MIT */
/*
 * letw-test-triggers PREFIX: print the name of every trigger registered
 * with lttng-sessiond whose name starts with PREFIX, one per line.
 *
 * Tests use it instead of `lttng list-triggers`, whose 2.13 client dies on
 * an assertion while printing a rotation condition with a notify action
 * (and then prints nothing: a "none left" check on its output could not
 * fail). Exit 0 after listing, 1 when sessiond could not be asked, so a
 * check built on it fails rather than passes when listing fails.
 */
#include <stdio.h>
#include <string.h>

#include <lttng/lttng.h>

int main(int argc, char **argv)
{
	struct lttng_triggers *triggers = NULL;
	enum lttng_error_code ret;
	unsigned int n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PREFIX\n", argv[0]);
		return 2;
	}
	ret = lttng_list_triggers(&triggers);
	if (ret != LTTNG_OK) {
		fprintf(stderr, "lttng_list_triggers: %s\n", lttng_strerror(-(int)ret));
		return 1;
	}
	if (lttng_triggers_get_count(triggers, &n) != LTTNG_TRIGGER_STATUS_OK) {
		lttng_triggers_destroy(triggers);
		fprintf(stderr, "lttng_triggers_get_count failed\n");
		return 1;
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct lttng_trigger *t = lttng_triggers_get_at_index(triggers, i);
		const char *name = NULL;

		if (t && lttng_trigger_get_name(t, &name) == LTTNG_TRIGGER_STATUS_OK && name &&
		    !strncmp(name, argv[1], strlen(argv[1])))
			printf("%s\n", name);
	}
	lttng_triggers_destroy(triggers);
	return 0;
}
