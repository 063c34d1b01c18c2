/* SPDX-License-Identifier: MIT */
/*
 * Fault-safe reads of our own code: a runtime may free code while a
 * rundown copies it, or publish a range it never mapped. process_vm_readv
 * on our own pid returns EFAULT instead of faulting; it makes no blocking
 * wait, and runs only when a session enables the code-bytes events.
 */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include "walker.h"

static pid_t self_pid;

void letw_copy_code_set_pid(void)
{
	self_pid = getpid();
}

int letw_copy_code(void *dst, uint64_t addr, size_t len)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	if (!self_pid)
		letw_copy_code_set_pid();
	return process_vm_readv(self_pid, &local, 1, &remote, 1, 0) == (ssize_t)len ?
		0 : -EFAULT;
}
