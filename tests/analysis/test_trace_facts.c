/* SPDX-License-Identifier: MIT */
/* Trace facts of a rotated stream (analysis/plugin/trace_facts.c,
 * trace_files.c): babeltrace2 names the stream by its first file and
 * counts over all of them, so what went wrong in a later file must be
 * named by the files themselves. Two stream files in LTTng's layout with
 * CTF index 1.1 files, judged against packets as the reader delivers them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "trace_facts.h"
#include "trace_facts_int.h"

#define PKT 4096u

static char dir[] = "/tmp/letw-facts.XXXXXX";

/* DIR/NAME: one packet of PKT bytes per ts[] (stream 0, instance 7,
 * packet_seq_num from seq0, events_discarded disc[]), and its index. */
static void write_stream(const char *name, const uint64_t *ts, const uint64_t *disc, size_t n,
			 uint64_t seq0)
{
	char *p, *ip;
	int fd, ifd;
	uint32_t hdr[4] = { htobe32(0xC1F1DCC1u), htobe32(1), htobe32(1), htobe32(72) };

	cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
	cr_assert_geq(asprintf(&ip, "%s/index/%s.idx", dir, name), 0);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ifd = open(ip, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert(fd >= 0 && ifd >= 0);
	cr_assert_eq(write(ifd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	for (size_t i = 0; i < n; i++) {
		unsigned char pk[PKT] = { 0 };
		uint32_t magic = htole32(0xC1FC1FC1u);
		uint64_t le[7] = { htole64(7), htole64(ts[i]), htole64(ts[i] + 50),
				   htole64(84 * 8), htole64(PKT * 8), htole64(seq0 + i),
				   htole64(disc[i]) };
		uint64_t e[9] = { htobe64(i * PKT), htobe64(PKT * 8), htobe64(84 * 8),
				  htobe64(ts[i]), htobe64(ts[i] + 50), htobe64(disc[i]), 0,
				  htobe64(7), htobe64(seq0 + i) };

		memcpy(pk, &magic, 4);
		memcpy(pk + 24, le, sizeof(le));
		cr_assert_eq(write(fd, pk, PKT), (ssize_t)PKT);
		cr_assert_eq(write(ifd, e, sizeof(e)), (ssize_t)sizeof(e));
	}
	close(fd);
	close(ifd);
	free(p);
	free(ip);
}

static struct letw_trace_facts f;
/* Stands for the reader's stream: only compared, never used, by the
 * checks judged here (no packet clock read, no trace environment). */
static char fake_stream;

/* The stream of files s_0 (packets at 100, 200) and s_1 (300, 400,
 * 500), events_discarded disc1[] in s_1; read: the packets beginning at
 * read[]. Returns its facts after finish. */
static struct letw_stream_facts *judge(const uint64_t *disc1, const uint64_t *read, size_t nread,
				       uint64_t discarded)
{
	static const uint64_t ts0[] = { 100, 200 }, ts1[] = { 300, 400, 500 }, disc0[] = { 0, 0 };
	struct letw_stream_facts *sf;
	char *idir, *p;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_geq(asprintf(&idir, "%s/index", dir), 0);
	cr_assert_eq(mkdir(idir, 0755), 0);
	free(idir);
	write_stream("s_0", ts0, disc0, 2, 0);
	write_stream("s_1", ts1, disc1, 3, 2);
	letw_facts_init(&f);
	cr_assert_geq(asprintf(&p, "%s/s_0", dir), 0);
	sf = letw_facts_add(&f, NULL, p);
	free(p);
	cr_assert_not_null(sf);
	sf->stream = (const bt_stream *)&fake_stream;
	sf->packets = nread;
	for (size_t i = 0; i < nread; i++) {
		cr_assert_eq(letw_grow(&sf->pkt_at, sizeof(uint64_t), sf->npkt_at + 1), 0);
		((uint64_t *)sf->pkt_at.p)[sf->npkt_at++] = read[i];
	}
	sf->discarded_events = discarded;
	cr_assert_geq(letw_facts_finish(&f), 0);
	return &f.s[0];
}

static void fini(void)
{
	char *cmd;

	for (size_t i = 0; i < f.n; i++)
		f.s[i].stream = NULL;
	letw_facts_fini(&f);
	if (asprintf(&cmd, "rm -rf '%s'", dir) >= 0) {
		cr_assert_eq(system(cmd), 0);
		free(cmd);
	}
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A packet of the later file not read: the stream's count (4) is above
 * its first file's index (2), which hid it; its own index says 3. */
Test(trace_facts, packets_read_short_in_a_later_file, .fini = fini)
{
	static const uint64_t disc1[] = { 0, 0, 0 }, read[] = { 100, 200, 300, 500 };
	struct letw_stream_facts *sf = judge(disc1, read, 4, 0);

	cr_assert_not_null(sf->problem, "a packet of s_1 was not read, and nothing said");
	cr_assert(strstr(sf->problem, "`s_1` (2 of 3)"), "%s", sf->problem);
	cr_assert_eq(sf->short_in.n, 1);
	cr_assert_str_eq(base(sf->short_in.path[0]), "s_1");
}

/* Every packet read: nothing to say. */
Test(trace_facts, packets_read_whole, .fini = fini)
{
	static const uint64_t disc1[] = { 0, 0, 0 }, read[] = { 100, 200, 300, 400, 500 };
	struct letw_stream_facts *sf = judge(disc1, read, 5, 0);

	cr_assert_null(sf->problem, "%s", sf->problem);
	cr_assert_eq(sf->short_in.n, 0);
}

/* The discarded-events counter rises in s_1's last packet: the reader
 * says so of the stream, named by s_0. */
Test(trace_facts, discarded_named_by_file, .fini = fini)
{
	static const uint64_t disc1[] = { 0, 0, 5 }, read[] = { 100, 200, 300, 400, 500 };
	struct letw_stream_facts *sf = judge(disc1, read, 5, 5);

	cr_assert_not_null(sf->problem);
	cr_assert(strstr(sf->problem, "5 event(s) discarded by the tracer: in `s_1`"), "%s",
		  sf->problem);
	cr_assert_eq(sf->discarded_in.n, 1);
	cr_assert_str_eq(base(sf->discarded_in.path[0]), "s_1");
}
