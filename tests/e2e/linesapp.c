/* SPDX-License-Identifier: MIT */
/*
 * letw-linesapp: publishes one method with a line table (longer than one
 * event chunk, several files, an inlining stack) over a buffer of known
 * bytes, when told to, so the e2e test can check the method_lines and
 * method_code_bytes events against what was published.
 *   letw-linesapp READY_FILE GO_FILE [unvouched]
 * With `unvouched` it publishes without LETW_METHOD_OPT_CODE_READABLE, so
 * the publish must emit no code bytes.
 * Prints the address it published at on stdout, then waits to be killed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>

#define CODE_SIZE 10000u /* > 2 code-bytes chunks */
#define NR_LINES 1200u   /* > 2 line-table chunks */

static uint8_t code[CODE_SIZE];
static struct letw_line rows[NR_LINES];

static int exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

int main(int argc, char **argv)
{
	static const char *const files[] = { "src/outer.c", "include/inl.h", "" };
	struct letw_method m = {
		.method_id = 42,
		.code_start = (uint64_t)(uintptr_t)code,
		.code_size = CODE_SIZE,
		.version_id = 7,
		.method_namespace = "lines",
		.name = "outer",
		.signature = "(void)",
	};
	struct letw_method_opts o = {
		.size = sizeof(o),
		.lines = rows,
		.nr_lines = NR_LINES,
		.nr_files = 3,
		.files = files,
		.flags = LETW_METHOD_OPT_CODE_READABLE,
	};
	FILE *f;

	if (argc == 4 && !strcmp(argv[3], "unvouched"))
		o.flags = 0;
	else if (argc != 3)
		return 2;
	for (uint32_t i = 0; i < CODE_SIZE; i++)
		code[i] = (uint8_t)(i * 7 + 3);
	/* Every fourth row sits at the same offset as the previous one, one
	 * inline level deeper, in the header file. */
	for (uint32_t i = 0; i < NR_LINES; i++) {
		int inl = (i % 4) == 3;

		rows[i] = (struct letw_line){
			.native_offset = inl ? rows[i - 1].native_offset : i * 8,
			.line = 100 + i,
			.file = inl ? 1 : (i % 11 == 0 ? 2 : 0),
			.inline_depth = inl ? 1 : 0,
		};
	}
	if (letw_init(NULL))
		return 1;
	if (!(f = fopen(argv[1], "w")))
		return 1;
	fclose(f);
	while (!exists(argv[2]))
		usleep(10000);
	if (letw_method_publish_opts(&m, &o))
		return 1;
	printf("0x%llx\n", (unsigned long long)m.code_start);
	fflush(stdout);
	pause();
	return 0;
}
