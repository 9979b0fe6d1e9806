//go:build !linux

package sim

func nameThread(string) {}
