// Package strace names every x86-64 Linux system call and formats calls
// the way strace(1) prints them, for `runsc --strace`, which logs each
// syscall an application makes with its arguments decoded and its result.
//
// It owns:
//   - the syscall table (table_amd64.go): for each number its name, the
//     kind of each argument (ArgKind) and how its result prints. Name,
//     Number and Signature read it; the syscall documentation generator
//     uses Signature and ArgKind.String;
//   - Entry and Exit, which format one call before and after it runs.
//
// # Formats
//
// Output follows strace's default style (strace -s 32, not -v): strings
// and buffers are quoted with C escapes (\t \n \v \f \r \" \\, octal for
// other non-printable bytes, three digits only before an octal digit) and
// cut after 32 bytes with "..."; path names print whole; arrays (argv,
// iovecs, pollfds, epoll events) show at most 32 elements; execve's envp
// is an address with a count (`0x7ffe... /* 12 vars */`); getdents
// buffers show an entry count; flags print as NAME|NAME|0xrest; unknown
// enumeration values as `0x63 /* PREFIX_??? */`; structures strace
// abbreviates (stat, statx, termios, rusage, utsname) end in "...".
// Results print ` = 3`, ` = 0x7f...` for addresses, ` = -1 ENOENT (No
// such file or directory)` for errors, ` = ? ERESTARTSYS (...)` for the
// kernel's restart codes and ` = ?` for exit and exit_group. poll, ppoll,
// select, pselect6 and fcntl's F_GETFL/F_GETFD add strace's decoration
// after the value. Unknown numbers print as `syscall_0x3e7(0x1, ...)` with
// six hex arguments.
//
// Arguments the kernel writes (read's buffer, stat's struct, wait4's
// status) print as addresses at entry and on failure, and decoded after a
// successful call. Arguments that are both read and written (select's fd
// sets, poll's array, socklen pointers) show their value at the moment of
// formatting, so at exit the value after the call. After a successful
// execve the old image's memory is gone; callers log execve at entry.
//
// Where this package differs from strace on purpose: ioctl requests with
// two possible names print only the terminal one (TCSETS, not
// "SNDCTL_TMR_START or TCSETS"); rt_sigreturn does not decode the signal
// frame; sendmsg/recvmsg show msg_control as an address.
//
// # Safety
//
// Memory reads go through the Memory interface; a read that faults or
// comes back short makes the argument print as its address. Lengths taken
// from the application are bounded before anything is read (32 bytes of
// a buffer, PATH_MAX of a path, 1 KiB of an fd set or cpu mask, 65536
// directory entries or environment strings). The decoder is fuzzed with
// random arguments and hostile memory; Entry and Exit also recover from a
// panic and fall back to a raw line.
//
// Formatting takes a pooled buffer and makes one allocation for the
// returned string, plus those of a few rarely used paths. It runs only
// when --strace is on. There are no locks.
package strace
