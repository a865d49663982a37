// Package source opens the SOURCE argument every command accepts: a local
// path, "-" for stdin, and (with the remote package) https:// URLs and
// hf://owner/repo[@rev]/file Hub paths, as a GGUF reader.
//
// Random-access sources (files, remote files) give a *gguf.Reader; stdin
// gives a *gguf.StreamReader that can be read once, front to back.
package source

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ggufkit/gguf/gguf"
)

// Options configure how sources are opened.
type Options struct {
	// Stdin is read for the source "-"; nil means os.Stdin.
	Stdin io.Reader
}

// Source is an opened GGUF source.
type Source struct {
	// Name is the source as the user wrote it.
	Name string
	// Reader is set for random-access sources.
	Reader *gguf.Reader
	// Stream is set for sequential sources (stdin).
	Stream *gguf.StreamReader
	closer io.Closer
}

// File returns the decoded header.
func (s *Source) File() *gguf.File {
	if s.Reader != nil {
		return s.Reader.File
	}
	return s.Stream.File
}

// Size returns the size of the source file, or -1 when unknown (a stream).
func (s *Source) Size() int64 {
	if s.Reader != nil {
		return s.Reader.Size()
	}
	return -1
}

// Close releases the source.
func (s *Source) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// Open opens spec and decodes its GGUF header.
func Open(ctx context.Context, spec string, opts Options) (*Source, error) {
	if spec == "-" {
		in := opts.Stdin
		if in == nil {
			in = os.Stdin
		}
		sr, err := gguf.NewStreamReader(in)
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		return &Source{Name: spec, Stream: sr}, nil
	}
	f, err := os.Open(spec)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory, not a GGUF file", spec)
	}
	r, err := gguf.NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", spec, err)
	}
	return &Source{Name: spec, Reader: r, closer: f}, nil
}
