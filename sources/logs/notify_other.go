//go:build !linux

package logs

// notifier is inotify's wake-up on Linux; elsewhere the follower polls.
type notifier struct{}

func newNotifier(string) *notifier     { return nil }
func (n *notifier) watchFile(string)   {}
func (n *notifier) C() <-chan struct{} { return nil }
func (n *notifier) close()             {}
