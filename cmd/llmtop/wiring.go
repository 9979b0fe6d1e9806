package main

// The sources' flags go on the root command (`llmtop [URL...] --log …`)
// once every wire_*.go init has registered its plugin: the go command hands
// a package's files to the compiler in file-name order, init functions run
// in that order, and "wiring.go" sorts after every "wire_*.go".
func init() {
	for _, p := range sourcePlugins {
		if p.Flags != nil {
			p.Flags(root.Flags())
		}
	}
}
