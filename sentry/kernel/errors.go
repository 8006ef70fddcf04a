package kernel

import "golang.org/x/sys/unix"

var (
	errEPERM  error = unix.EPERM
	errESRCH  error = unix.ESRCH
	errEACCES error = unix.EACCES
	errEINVAL error = unix.EINVAL
	errEAGAIN error = unix.EAGAIN
	errECHILD error = unix.ECHILD
	errEINTR  error = unix.EINTR
)
