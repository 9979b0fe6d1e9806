package recording

import "syscall"

// inMemoryFS says whether dir is on a file system held in memory (tmpfs,
// ramfs).
func inMemoryFS(dir string) bool {
	const tmpfs, ramfs = 0x01021994, 0x858458f6
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return false
	}
	return st.Type == tmpfs || st.Type == ramfs
}
