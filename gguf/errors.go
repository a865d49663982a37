package gguf

import (
	"errors"
	"fmt"
)

// Sentinel errors for conditions callers test with errors.Is.
var (
	// ErrNotGGUF: the file does not start with the GGUF magic.
	ErrNotGGUF = errors.New("not a GGUF file")
	// ErrUnsupportedVersion: a GGUF version this package cannot read (v1, or newer than v3).
	ErrUnsupportedVersion = errors.New("unsupported GGUF version")
	// ErrBigEndian: the file was written big-endian (for s390x); only little-endian is supported.
	ErrBigEndian = errors.New("big-endian GGUF file")
	// ErrLFSPointer: the file is a Git LFS pointer, not the model itself.
	ErrLFSPointer = errors.New("Git LFS pointer file, not a GGUF file")
	// ErrTruncated: the file ends before the structure it declares.
	ErrTruncated = errors.New("file is truncated")
)

// FormatError reports invalid GGUF content at a byte offset of the file.
type FormatError struct {
	Offset int64  // byte offset in the file where the problem was found
	What   string // what is wrong, naming the key or tensor when known
	Err    error  // an underlying sentinel error, if any
}

// Error says where and what, as "offset N: what" (the command names the
// file and adds its own prefix).
func (e *FormatError) Error() string {
	if e.Err != nil && e.What == "" {
		return fmt.Sprintf("offset %d: %v", e.Offset, e.Err)
	}
	return fmt.Sprintf("offset %d: %s", e.Offset, e.What)
}

// Unwrap returns the sentinel error, so errors.Is(err, ErrTruncated) works.
func (e *FormatError) Unwrap() error { return e.Err }
