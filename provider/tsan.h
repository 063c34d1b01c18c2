/* SPDX-License-Identifier: MIT */
/*
 * Happens-before edges ThreadSanitizer cannot see. Debian 12's liburcu
 * (0.13) is not built for TSan and its cds_lfs push/pop are inline-asm
 * cmpxchg, so memory handed from one thread to another through a lock-free
 * stack (the store's free lists, the reclaim queues) looks unsynchronised:
 * the control thread's prefault memset of a chunk class block (store.c
 * grow_class) and a publisher's first write to a chunk it popped were
 * reported as a race (reliability.hostile_api, and the churn and faults
 * runtimes died of it at startup under halt_on_error).
 *
 * Rather than suppressing every report that has a store function on its
 * stack (which would also hide a real race on a chunk handed out twice),
 * the push side releases the node and the pop side acquires it: TSan then
 * sees exactly the edge the asm cmpxchg gives (release on push, acquire on
 * pop), and nothing more. No-ops outside TSan builds; inside, they cost a
 * TSan runtime call, no lock of ours and no system call.
 */
#ifndef LETW_TSAN_H
#define LETW_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define LETW_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LETW_TSAN 1
#endif
#endif

#ifdef LETW_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define letw_hb_release(p) __tsan_release((void *)(p))
#define letw_hb_acquire(p) __tsan_acquire((void *)(p))
#else
#define letw_hb_release(p) ((void)(p))
#define letw_hb_acquire(p) ((void)(p))
#endif

#endif
