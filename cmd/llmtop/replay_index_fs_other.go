//go:build !linux

package main

// inMemoryFS: only Linux is asked (its statfs names tmpfs and ramfs).
func inMemoryFS(string) bool { return false }
