//go:build !unix

package main

func limitMemoryToRlimit() {}
