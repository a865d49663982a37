//go:build unix

package source

import (
	"fmt"
	"os"
	"syscall"
)

// fileID returns the device and inode of a file, "" if unknown.
func fileID(st os.FileInfo) string {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", s.Dev, s.Ino)
	}
	return ""
}
