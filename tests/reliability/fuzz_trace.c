/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the analysis plugin's input path: a real CTF data
 * stream of a real lttng-etw trace (LETW_FUZZ_FRAME, next to its metadata
 * LETW_FUZZ_METADATA) whose first packet's event bytes are replaced by the
 * input, read through a libbabeltrace2 graph src.ctf.fs ->
 * filter.utils.muxer -> sink.etw.report, the plugin being loaded from
 * LETW_FUZZ_PLUGIN (built with coverage in the fuzz build). The seeds are
 * the real event bytes, so mutations land in event headers and payloads
 * of real lttng-etw events: ids, timestamps, pass ids, addresses, sizes,
 * strings, vpid contexts.
 *
 * The packet header and context (the first FRAME_KEEP bytes) are kept
 * intact: babeltrace2 2.0.4's CTF reader asserts (aborts) on some mangled
 * packet sizes (msg-iter.c:1111, found by this harness), which would stop
 * every run at the decoder, before our plugin sees anything.
 *
 * babeltrace2 may reject a mangled stream (the graph ends in error): that
 * is fine. What must never happen in the plugin is a crash, an ASan report
 * or a hang (libFuzzer's -timeout).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>
#include <sanitizer/allocator_interface.h>
#include <sanitizer/common_interface_defs.h>

/* Under $TMPDIR (fuzz.sh points it into its own work directory, which
 * it empties on every run: libFuzzer ends by exit or by a crash, and a
 * directory in /tmp would outlive either). */
static char dir[4096];
static char stream_path[4200], report_path[4200];
static const bt_component_class_source *src_cls;
static const bt_component_class_filter *mux_cls;
static const bt_component_class_sink *sink_cls;
static uint8_t *frame;
static size_t frame_len, packet_len;

/* lttng-ust packet header (magic, uuid, stream ids) + packet context
 * (timestamps, content/packet sizes, seq num, discarded, cpu id), padded. */
#define FRAME_KEEP 96
#define UST_PACKET_MAX 65536

static void die(const char *what)
{
	fprintf(stderr, "fuzz_trace: %s\n", what);
	exit(2);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	if (!in || !out)
		die("cannot copy the metadata (LETW_FUZZ_METADATA)");
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	fclose(out);
}

/*
 * LETW_FUZZ_HEAP_LIMIT_MB: the allocation that takes the live heap past
 * the limit prints its stack and ends the process (exit 3). fuzz.sh sets it
 * while fuzzing, well under libFuzzer's RSS limit, so that a damaged array
 * length that makes babeltrace2 create millions of field objects is caught
 * in the input that does it, with that allocation's stack. libFuzzer's RSS
 * limit cannot say that: its thread samples RSS once a second and then
 * lists the heap (seconds, for 30 M chunks) while the fuzzing goes on, so
 * the input it names may be the next one (a fresh-clone CI run,
 * 2026-12-06: the named input replayed alone stayed under 256 MiB; an
 * input kept in the corpus before it crossed that alone). The RSS limit is
 * still the backstop, and fuzz.sh replays what it names under this hook.
 *
 * LETW_FUZZ_HEAP_UNIT: where the hook writes the input it stopped in (the
 * harness's copy), so fuzz.sh can keep it and drop it from the corpus as it
 * does libFuzzer's own crash-* units.
 *
 * The live count is kept here: __sanitizer_get_current_allocated_bytes()
 * sums every thread's statistics under ASan's thread-registry lock, on
 * every malloc; the free hook runs before ASan quarantines the chunk, so
 * its size can still be asked.
 */
static size_t heap_limit;
static long long heap_live;
static char heap_unit[4096];
static const uint8_t *cur_data;
static size_t cur_size;

static void heap_stop(size_t size)
{
	int fd;

	heap_limit = SIZE_MAX; /* report once: printing allocates too */
	if (heap_unit[0] && cur_data &&
	    (fd = open(heap_unit, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0) {
		/* No stdio: this runs inside malloc. */
		if (write(fd, cur_data, cur_size) != (ssize_t)cur_size)
			(void)unlink(heap_unit);
		close(fd);
	}
	fprintf(stderr, "LETW-FUZZ-HEAP-LIMIT: %lld bytes live, allocating %zu\n",
		__atomic_load_n(&heap_live, __ATOMIC_RELAXED), size);
	__sanitizer_print_stack_trace();
	_exit(3);
}

static void heap_hook(const volatile void *ptr, size_t size)
{
	long long live = __atomic_add_fetch(&heap_live, (long long)size, __ATOMIC_RELAXED);

	(void)ptr;
	if (live > 0 && (unsigned long long)live > heap_limit)
		heap_stop(size);
}

static void free_hook(const volatile void *ptr)
{
	if (ptr)
		__atomic_sub_fetch(&heap_live,
				   (long long)__sanitizer_get_allocated_size((const void *)ptr),
				   __ATOMIC_RELAXED);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *meta = getenv("LETW_FUZZ_METADATA");
	const char *plugin = getenv("LETW_FUZZ_PLUGIN");
	const char *frame_path = getenv("LETW_FUZZ_FRAME");
	FILE *f;
	const bt_plugin *ctf, *utils, *etw;
	const bt_plugin_set *set;
	char meta_copy[4200];

	if (getenv("LETW_FUZZ_HEAP_LIMIT_MB")) {
		heap_limit = (size_t)strtoul(getenv("LETW_FUZZ_HEAP_LIMIT_MB"), NULL, 10) << 20;
		heap_live = (long long)__sanitizer_get_current_allocated_bytes();
		if (getenv("LETW_FUZZ_HEAP_UNIT"))
			snprintf(heap_unit, sizeof(heap_unit), "%s", getenv("LETW_FUZZ_HEAP_UNIT"));
		if (!heap_limit || !__sanitizer_install_malloc_and_free_hooks(heap_hook, free_hook))
			die("LETW_FUZZ_HEAP_LIMIT_MB: no limit, or no room for a malloc hook");
	}
	if (!meta || !plugin || !frame_path)
		die("set LETW_FUZZ_METADATA (a trace's metadata file), LETW_FUZZ_FRAME "
		    "(one of its stream files) and LETW_FUZZ_PLUGIN (babeltrace-plugin-etw.so)");
	f = fopen(frame_path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (long)(frame_len = (size_t)ftell(f)) <= FRAME_KEEP)
		die("LETW_FUZZ_FRAME unreadable or too short");
	frame = malloc(frame_len);
	rewind(f);
	if (!frame || fread(frame, 1, frame_len, f) != frame_len)
		die("LETW_FUZZ_FRAME unreadable");
	fclose(f);
	packet_len = frame_len < UST_PACKET_MAX ? frame_len : UST_PACKET_MAX;
	snprintf(dir, sizeof(dir), "%s/letw-fuzz-trace.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		die("mkdtemp");
	snprintf(meta_copy, sizeof(meta_copy), "%s/metadata", dir);
	snprintf(stream_path, sizeof(stream_path), "%s/stream_0", dir);
	snprintf(report_path, sizeof(report_path), "%s.report", dir);
	copy_file(meta, meta_copy);
	bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);
	if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) !=
		    BT_PLUGIN_FIND_STATUS_OK ||
	    bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &utils) !=
		    BT_PLUGIN_FIND_STATUS_OK)
		die("babeltrace2 ctf/utils plugins not found");
	if (bt_plugin_find_all_from_file(plugin, BT_TRUE, &set) !=
	    BT_PLUGIN_FIND_ALL_FROM_FILE_STATUS_OK)
		die("cannot load LETW_FUZZ_PLUGIN");
	etw = bt_plugin_set_borrow_plugin_by_index_const(set, 0);
	src_cls = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
	mux_cls = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
	sink_cls = bt_plugin_borrow_sink_component_class_by_name_const(etw, "report");
	if (!src_cls || !mux_cls || !sink_cls)
		die("component classes missing");
	/* Plugins and classes stay referenced for the process lifetime. */
	return 0;
}

static void run_graph(void)
{
	bt_graph *g = bt_graph_create(0);
	bt_value *sp = bt_value_map_create(), *kp = bt_value_map_create(), *inputs;
	const bt_component_source *src = NULL;
	const bt_component_filter *mux = NULL;
	const bt_component_sink *sink = NULL;
	uint64_t nports;

	if (!g || !sp || !kp)
		die("out of memory");
	if (bt_value_map_insert_empty_array_entry(sp, "inputs", &inputs) ||
	    bt_value_array_append_string_element(inputs, dir) ||
	    bt_value_map_insert_string_entry(kp, "output", report_path) ||
	    bt_value_map_insert_string_entry(kp, "format", "json"))
		die("out of memory");
	if (bt_graph_add_source_component(g, src_cls, "src", sp,
					  BT_LOGGING_LEVEL_NONE, &src) ||
	    bt_graph_add_filter_component(g, mux_cls, "mux", NULL,
					  BT_LOGGING_LEVEL_NONE, &mux) ||
	    bt_graph_add_sink_component(g, sink_cls, "sink", kp,
					BT_LOGGING_LEVEL_NONE, &sink))
		goto out; /* e.g. the stream is unusable from its first packet */
	nports = bt_component_source_get_output_port_count(src);
	for (uint64_t i = 0; i < nports; i++) {
		/* The muxer grows a new input port each time one is taken. */
		if (bt_graph_connect_ports(g,
			bt_component_source_borrow_output_port_by_index_const(src, i),
			bt_component_filter_borrow_input_port_by_index_const(mux, i), NULL))
			goto out;
	}
	if (bt_graph_connect_ports(g,
		bt_component_filter_borrow_output_port_by_index_const(mux, 0),
		bt_component_sink_borrow_input_port_by_index_const(sink, 0), NULL))
		goto out;
	for (int i = 0; i < 1000000; i++) {
		bt_graph_run_status st = bt_graph_run(g);

		if (st != BT_GRAPH_RUN_STATUS_AGAIN)
			break;
	}
out:
	bt_current_thread_clear_error();
	BT_GRAPH_PUT_REF_AND_RESET(g);
	BT_VALUE_PUT_REF_AND_RESET(sp);
	BT_VALUE_PUT_REF_AND_RESET(kp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = open(stream_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	uint8_t *buf = malloc(frame_len);
	size_t n = size < packet_len - FRAME_KEEP ? size : packet_len - FRAME_KEEP;

	if (!buf)
		die("out of memory");
	memcpy(buf, frame, frame_len);
	memcpy(buf + FRAME_KEEP, data, n);
	if (fd < 0 || write(fd, buf, frame_len) != (ssize_t)frame_len)
		die("cannot write the stream file");
	free(buf);
	close(fd);
	cur_data = data;
	cur_size = size;
	run_graph();
	cur_data = NULL;
	return 0;
}
