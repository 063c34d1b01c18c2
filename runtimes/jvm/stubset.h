/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_STUBSET_H
#define LETW_JVM_STUBSET_H

#include <stdint.h>

#include <lttng-etw/lttng-etw.h>

/*
 * The stubs the agent published, by address: HotSpot frees some blobs
 * without telling JVMTI (see stubs.c), so a stub record can outlive its
 * code. HotSpot never has two live blobs in one range, so an nmethod
 * reported over a stub record proves that record stale: the method's
 * publish unpublishes it and retries.
 */

/* letw_stub_publish, remembering the stub when it is published. */
int jvm_stubset_publish(const struct letw_stub *st);

/*
 * letw_method_publish_opts; on -EEXIST, unpublishes every remembered stub
 * the method's range overlaps and, if there was one, publishes again.
 * *stale (may be NULL) gets how many stubs were unpublished. The result is
 * the last publish's.
 */
int jvm_stubset_publish_method(const struct letw_method *m, const struct letw_method_opts *o,
			       unsigned *stale);

/* Stubs remembered (tests). */
unsigned jvm_stubset_count(void);

/* Forgets every stub, unpublishing none (tests). */
void jvm_stubset_reset(void);

#endif
