/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitdump_proc.h"
#include "jitdump_read.h"

/* The header of the file at path (not followed when a link, never a
 * blocking open): 0, or -1 when it is not there, not a regular file or
 * shorter than a header. The fields are as read (magic unchecked). */
static int read_header(const char *path, struct letw_jd_header *h)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -1;
	got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, h, sizeof(*h)) : -1;
	close(fd);
	return got == (ssize_t)sizeof(*h) ? 0 : -1;
}

/*
 * When the process began, from the header of its placeholder
 * (DIR/jit-PID.dump, made by letw_init: provider/jitdump_mark.c), or of a
 * dump written there before (which keeps it); 0 when the file is not
 * there or not this process's.
 *
 * Code the trace saw no load for is dated just after it. Dated at 1 ns,
 * before everything, perf dropped it whenever perf.data held the
 * process's fork (`perf record -a`, or `perf record -- launcher`): perf
 * replays the LOADs' mappings before the fork, and the fork gives the
 * child a fresh copy of its parent's maps (the perf audit: 15,905 of
 * 15,905 samples unnamed). The time is the process's start, a clock tick
 * after its fork (provider/jitdump_mark.c), not letw_init's: a JVM agent
 * attached late had run code for seconds before (9,689 samples unnamed
 * when it was letw_init's).
 */
uint64_t letw_jd_process_since(const char *path, long long vpid, uint64_t first_ns)
{
	struct letw_jd_header h;

	if (read_header(path, &h) || h.magic != LETW_JD_MAGIC || h.version != LETW_JD_VERSION ||
	    h.pid != (uint32_t)vpid)
		return 0;
	/* Not after the trace's first event of the process: a dump of ours
	 * written without a placeholder holds that (see write_dump). */
	return h.timestamp > LETW_JD_BEFORE_TRACE_NS && h.timestamp < first_ns ? h.timestamp : 0;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int letw_jd_reader_init(struct letw_jd_reader *r, const uint8_t *buf, size_t len,
			const char **why)
{
	memset(r, 0, sizeof(*r));
	if (len < sizeof(r->h)) {
		*why = "shorter than a jitdump header";
		return -EINVAL;
	}
	memcpy(&r->h, buf, sizeof(r->h));
	if (r->h.magic == LETW_JD_MAGIC_SWAPPED) {
		*why = "written in the other byte order";
		return -EINVAL;
	}
	if (r->h.magic != LETW_JD_MAGIC || r->h.version != LETW_JD_VERSION) {
		*why = "not a jitdump (version 1)";
		return -EINVAL;
	}
	if (r->h.total_size < sizeof(r->h) || r->h.total_size > len) {
		*why = "its header size is wrong";
		return -EINVAL;
	}
	r->buf = buf;
	r->len = len;
	r->at = r->h.total_size;
	return 0;
}

int letw_jd_reader_next(struct letw_jd_reader *r, struct letw_jd_rec *rec, const char **why)
{
	const uint8_t *p = r->buf + r->at;
	size_t left = r->len - r->at;

	if (!left)
		return 0;
	memset(rec, 0, sizeof(*rec));
	if (left < 16 || u32_at(p + 4) < 16 || u32_at(p + 4) > left) {
		*why = "a record runs past the end of the file";
		return -EINVAL;
	}
	rec->p = p;
	rec->id = u32_at(p);
	rec->size = u32_at(p + 4);
	rec->ts = u64_at(p + 8);
	if (rec->id == LETW_JD_CODE_LOAD || rec->id == LETW_JD_CODE_MOVE) {
		uint32_t fixed = rec->id == LETW_JD_CODE_LOAD ? LETW_JD_LOAD_FIXED : LETW_JD_MOVE_FIXED;

		if (rec->size < fixed) {
			*why = "a LOAD or MOVE record is shorter than its fields";
			return -EINVAL;
		}
		rec->pid = u32_at(p + 16);
		rec->tid = u32_at(p + 20);
		rec->vma = u64_at(p + 24);
		if (rec->id == LETW_JD_CODE_LOAD) {
			rec->code_addr = u64_at(p + 32);
			rec->code_size = u64_at(p + 40);
			rec->code_index = u64_at(p + 48);
		} else {
			/* old_code_addr at 32; the code now at new_code_addr */
			rec->code_addr = u64_at(p + 40);
			rec->code_size = u64_at(p + 48);
			rec->code_index = u64_at(p + 56);
		}
	}
	if (rec->id == LETW_JD_CODE_LOAD) {
		const uint8_t *name = p + LETW_JD_LOAD_FIXED;
		uint64_t room = rec->size - LETW_JD_LOAD_FIXED;

		/* name, its NUL, then exactly code_size bytes of code */
		if (rec->code_size >= room ||
		    !memchr(name, '\0', (size_t)(room - rec->code_size)) ||
		    strlen((const char *)name) + 1 != room - rec->code_size) {
			*why = "a LOAD record's name and code do not fill it";
			return -EINVAL;
		}
		rec->name = (const char *)name;
		rec->code = p + rec->size - rec->code_size;
	}
	r->at += rec->size;
	return 1;
}
