//go:build !linux

package recording

// inMemoryFS: only Linux is asked (its statfs names tmpfs and ramfs).
func inMemoryFS(string) bool { return false }
