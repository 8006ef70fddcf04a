/* pause: the pod sandbox's process, as Kubernetes' pause image runs it:
 * sleep until SIGINT or SIGTERM, then exit 0; reap nothing else. */
#include <signal.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }

int main(void)
{
	signal(SIGINT, stop);
	signal(SIGTERM, stop);
	for (;;)
		pause();
}
