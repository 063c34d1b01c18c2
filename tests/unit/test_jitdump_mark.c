/* SPDX-License-Identifier: MIT */
/*
 * The jitdump placeholder (LETW_CONFIG_JITDUMP / LETW_JITDUMP_DIR): a
 * valid 40-byte jitdump header in DIR/jit-PID.dump, mapped executable
 * while the process lives (what perf record notes), its own in a forked
 * child, and never a reason for letw_init to fail. Each test runs in its
 * own process (Criterion forks), so the once-per-process state is fresh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/letw-mark-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	unsetenv("LETW_JITDUMP_DIR");
}

static void rm_dir(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* The placeholder of pid: its header checked; 1 if it is mapped r-x in
 * this process, 0 if not mapped here. */
static int check_mark(pid_t pid)
{
	char path[128], line[512];
	uint32_t h[10];
	int mapped = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)pid);
	f = fopen(path, "rb");
	cr_assert_not_null(f, "no placeholder %s", path);
	cr_assert_eq(fread(h, 1, sizeof(h), f), 40u, "header is not 40 bytes");
	cr_assert_eq(fgetc(f), EOF, "records after the header");
	fclose(f);
	cr_assert_eq(h[0], 0x4A695444u);  /* magic */
	cr_assert_eq(h[1], 1u);           /* version */
	cr_assert_eq(h[2], 40u);          /* total_size */
	cr_assert_eq(h[5], (uint32_t)pid);
	cr_assert_eq(h[8] | h[9], 0u);    /* flags */
	f = fopen("/proc/self/maps", "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, path)) {
			cr_assert(strstr(line, " r-xp ") != NULL, "mapped but not r-x: %s", line);
			mapped = 1;
		}
	fclose(f);
	return mapped;
}

Test(jitdump_mark, flag_and_dir_in_config)
{
	struct letw_config cfg = {
		.size = sizeof(cfg), .flags = LETW_CONFIG_JITDUMP | LETW_CONFIG_NO_CONTROL_THREAD,
	};

	make_dir();
	cfg.jitdump_dir = dir;
	cr_assert_eq(letw_init(&cfg), 0);
	cr_assert(check_mark(getpid()));
	/* Kept after shutdown: for the life of the process. */
	cr_assert_eq(letw_shutdown(), 0);
	cr_assert(check_mark(getpid()));
	rm_dir();
}

Test(jitdump_mark, environment_alone)
{
	make_dir();
	setenv("LETW_JITDUMP_DIR", dir, 1);
	cr_assert_eq(letw_init(NULL), 0);
	cr_assert(check_mark(getpid()));
	letw_shutdown();
	rm_dir();
}

Test(jitdump_mark, off_unless_asked)
{
	struct letw_config cfg = { .size = sizeof(cfg), .flags = LETW_CONFIG_NO_CONTROL_THREAD };
	char path[128];
	struct stat st;

	make_dir();
	cfg.jitdump_dir = dir; /* a directory without the flag: nothing */
	cr_assert_eq(letw_init(&cfg), 0);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	cr_assert_neq(stat(path, &st), 0);
	letw_shutdown();
	rm_dir();
}

Test(jitdump_mark, old_config_size_ignores_the_dir)
{
	/* A runtime built against the header before jitdump_dir: the field
	 * is not read, the flag alone means /tmp... so point the
	 * environment at our directory to keep /tmp clean, and check that an
	 * undersized struct is accepted. */
	struct letw_config cfg = { .flags = LETW_CONFIG_JITDUMP | LETW_CONFIG_NO_CONTROL_THREAD };

	make_dir();
	cfg.size = offsetof(struct letw_config, jitdump_dir);
	cfg.jitdump_dir = "/nonexistent/never/read";
	setenv("LETW_JITDUMP_DIR", dir, 1);
	cr_assert_eq(letw_init(&cfg), 0);
	cr_assert(check_mark(getpid()));
	letw_shutdown();
	rm_dir();
}

static void count_log(enum letw_log_level level, const char *msg, void *ctx)
{
	if (level >= LETW_LOG_WARN && strstr(msg, "jitdump placeholder"))
		(*(int *)ctx)++;
}

Test(jitdump_mark, failure_is_logged_not_fatal)
{
	int warnings = 0;
	struct letw_config cfg = {
		.size = sizeof(cfg), .flags = LETW_CONFIG_JITDUMP | LETW_CONFIG_NO_CONTROL_THREAD,
		.jitdump_dir = "/proc/letw-no-such-dir", .log_fn = count_log, .log_ctx = &warnings,
	};

	unsetenv("LETW_JITDUMP_DIR");
	cr_assert_eq(letw_init(&cfg), 0);
	cr_assert_geq(warnings, 1);
	letw_shutdown();
}

Test(jitdump_mark, forked_child_gets_its_own)
{
	struct letw_config cfg = {
		.size = sizeof(cfg), .flags = LETW_CONFIG_JITDUMP | LETW_CONFIG_NO_CONTROL_SOCKET,
	};
	pid_t child;
	int st;

	make_dir();
	cfg.jitdump_dir = dir;
	cr_assert_eq(letw_init(&cfg), 0);
	letw_fork_prepare();
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		char line[512], parent[128];
		FILE *f;
		int bad = 0;

		letw_fork_child();
		/* Own placeholder mapped; the parent's not any more. */
		if (!check_mark(getpid()))
			_exit(2);
		snprintf(parent, sizeof(parent), "jit-%d.dump", (int)getppid());
		f = fopen("/proc/self/maps", "r");
		while (f && fgets(line, sizeof(line), f))
			bad |= strstr(line, parent) != NULL;
		if (f)
			fclose(f);
		letw_shutdown();
		_exit(bad ? 3 : 0);
	}
	letw_fork_parent();
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	cr_assert(check_mark(getpid()));
	letw_shutdown();
	rm_dir();
}
