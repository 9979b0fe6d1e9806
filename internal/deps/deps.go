//go:build tools

// Package deps pins modules that code is about to use, so `go mod tidy` keeps
// them (the proxy here refuses some newer versions: see GO-STACK.md).
package deps

import (
	_ "charm.land/bubbles/v2/progress"
)
