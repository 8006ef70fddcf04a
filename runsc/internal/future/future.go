// Package future runs a computation on a goroutine of its own while its
// caller goes on, for the parts of a runsc process's start that wait on
// nothing else (a seccomp program's compilation, the Sentry's platform).
package future

// Start runs f on a goroutine of its own and returns a function that
// waits for its results; later calls return the same.
func Start[T any](f func() (T, error)) func() (T, error) {
	var v T
	var err error
	done := make(chan struct{})
	go func() {
		v, err = f()
		close(done)
	}()
	return func() (T, error) {
		<-done
		return v, err
	}
}
