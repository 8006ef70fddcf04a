package linux

import (
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/sentry/kernel"
)

// mqSyscalls are the POSIX message queue entries (sys_mq.go), merged into
// AMD64 by init.
func mqSyscalls() map[uintptr]kernel.Syscall {
	return map[uintptr]kernel.Syscall{
		unix.SYS_MQ_OPEN:         partial("mq_open", MqOpen, "one IPC namespace per sandbox; limits are Linux's defaults (msg_max 10, msgsize_max 8192, queues_max 256), fixed"),
		unix.SYS_MQ_UNLINK:       full("mq_unlink", MqUnlink),
		unix.SYS_MQ_TIMEDSEND:    full("mq_timedsend", MqTimedsend),
		unix.SYS_MQ_TIMEDRECEIVE: full("mq_timedreceive", MqTimedreceive),
		unix.SYS_MQ_NOTIFY:       partial("mq_notify", MqNotify, "SIGEV_SIGNAL and SIGEV_NONE; SIGEV_THREAD needs a netlink socket (ECONNREFUSED); a registration is dropped by the owner's close(2) of the queue, not by close_range, dup2 or exit"),
		unix.SYS_MQ_GETSETATTR:   full("mq_getsetattr", MqGetsetattr),
	}
}

func init() { tableParts = append(tableParts, mqSyscalls) }
