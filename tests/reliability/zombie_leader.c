/* SPDX-License-Identifier: MIT */
/*
 * A process whose main thread has exited while another runs on: /proc
 * shows its leader as a zombie ('Z') though the process is alive. Forks
 * one such child and exits, for launcher_backstop.sh; the child ends
 * after 300 s if nobody kills it.
 */
#include <pthread.h>
#include <unistd.h>

static void *linger(void *arg)
{
	(void)arg;
	sleep(300);
	_exit(0);
}

int main(void)
{
	pthread_t t;

	if (fork() != 0)
		return 0;
	if (pthread_create(&t, NULL, linger, NULL))
		return 1;
	pthread_exit(NULL);
}
