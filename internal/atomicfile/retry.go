package atomicfile

import "time"

// retry runs op until it succeeds, fails with an error transient does not
// accept, or bound has passed since the first try; the last error is
// returned. The pause between tries doubles from a millisecond.
func retry(op func() error, transient func(error) bool, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	pause := time.Millisecond
	for {
		err := op()
		if err == nil || !transient(err) || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 100*time.Millisecond)
	}
}
