/* SPDX-License-Identifier: MIT */
#include "source.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"

#define HEADER_LINES 3u   /* the file's own comment lines and a blank */
#define BLOCK_EXTRA 5u    /* comment, fn, for, return, blank */

void source_assign_lines(struct jitrt *rt)
{
	uint32_t line = HEADER_LINES + 2; /* after the first block's comment */

	for (uint32_t i = 0; i < rt->nfns; i++) {
		rt->fns[i].src_line = line;
		line += rt->fns[i].k.nops + BLOCK_EXTRA;
	}
}

static void write_op(FILE *f, const struct kernel_op *op)
{
	switch (op->kind) {
	case K_ADDI: fprintf(f, "x = x + %" PRId32, op->imm); break;
	case K_SUBI: fprintf(f, "x = x - %" PRId32, op->imm); break;
	case K_XORI: fprintf(f, "x = x ^ 0x%" PRIx32, (uint32_t)op->imm); break;
	case K_MULI: fprintf(f, "x = x * %" PRId32, op->imm); break;
	case K_ROLI: fprintf(f, "x = rotl(x, %" PRId32 ")", op->imm); break;
	case K_RORI: fprintf(f, "x = rotr(x, %" PRId32 ")", op->imm); break;
	case K_XSHR: fprintf(f, "x = x ^ (x >> %" PRId32 ")", op->imm); break;
	case K_ADDCTR: fprintf(f, "x = x + ctr"); break;
	case K_XORARG: fprintf(f, "x = x ^ arg"); break;
	case K_ADDARG: fprintf(f, "x = x + arg"); break;
	case K_NOT: fprintf(f, "x = ~x"); break;
	case K_BSWAP: fprintf(f, "x = bswap(x)"); break;
	default: fprintf(f, "x = ?"); break;
	}
}

int source_write(const struct jitrt *rt, const char *path)
{
	size_t len = strlen(path) + 8;
	char *tmp = malloc(len);
	FILE *f;
	int ret = 0;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		ret = -errno;
		goto out;
	}
	fprintf(f, "# letw-minijit source: the kernel each function compiles (64-bit integer ops\n"
		   "# on x, wrapping); its line tables (lttng-etw method_lines) point here.\n\n");
	for (uint32_t i = 0; i < rt->nfns; i++) {
		const struct jit_fn *fn = &rt->fns[i];

		fprintf(f, "# minijit.Module%" PRIu32 "::fn_%" PRIu32 " (method %" PRIu64 ")\n",
			fn->module, i, fn->method_id);
		fprintf(f, "fn fn_%" PRIu32 "(x):\n", i);
		fprintf(f, "  for ctr = %" PRIu32 " down to 1:\n", fn->k.iters);
		for (uint32_t k = 0; k < fn->k.nops; k++) {
			fprintf(f, "    ");
			write_op(f, &fn->k.ops[k]);
			fputc('\n', f);
		}
		fprintf(f, "  return x\n\n");
	}
	if (fflush(f) || ferror(f))
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
out:
	if (ret)
		fprintf(stderr, "letw-minijit: cannot write source file %s: %s\n", path,
			strerror(-ret));
	free(tmp);
	return ret;
}
