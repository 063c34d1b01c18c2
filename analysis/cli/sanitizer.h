/* SPDX-License-Identifier: MIT */
/* Whether a sanitizer's runtime owns malloc in this build (gcc defines
 * __SANITIZE_*, clang answers __has_feature): glibc's heap tricks
 * (hugeheap.c) and malloc wrappers (allocwatch.c) then stand aside. */
#ifndef LETW_CLI_SANITIZER_H
#define LETW_CLI_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LETW_OWN_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LETW_OWN_MALLOC 1
#endif
#endif

#endif
