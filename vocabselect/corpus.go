package vocabselect

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// CorpusReader streams a corpus argument: a file, "-" (standard input), or
// a directory, whose text files are read one after the other in lexical
// order (binary files, with a NUL or invalid UTF-8 in their first 8 KiB,
// are skipped).
type CorpusReader struct {
	files []string
	size  int64
	cur   *os.File
	stdin io.Reader
}

// OpenCorpus opens a corpus argument; "-" reads stdin. A directory without
// a text file is an error.
func OpenCorpus(path string, stdin io.Reader) (*CorpusReader, error) {
	if path == "-" {
		return &CorpusReader{size: -1, stdin: stdin}, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return &CorpusReader{files: []string{path}, size: st.Size()}, nil
	}
	c := &CorpusReader{}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if ok, err := IsTextFile(p); err != nil || !ok {
			return err
		}
		c.files = append(c.files, p)
		c.size += info.Size()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(c.files) == 0 {
		return nil, fmt.Errorf("%s: no text files", path)
	}
	return c, nil
}

// Size is the corpus's bytes, -1 for stdin.
func (c *CorpusReader) Size() int64 { return c.size }

// IsTextFile reports whether the file at p reads as text: no NUL and valid
// UTF-8 in its first 8 KiB (a character cut by that limit does not count).
func IsTextFile(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 8192)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false, err
	}
	full := n == len(head)
	head = head[:n]
	if full { // drop a character cut by the 8 KiB limit
		i := len(head) - 1
		for i > 0 && i > len(head)-utf8.UTFMax && !utf8.RuneStart(head[i]) {
			i--
		}
		if !utf8.FullRune(head[i:]) {
			head = head[:i]
		}
	}
	return bytes.IndexByte(head, 0) < 0 && utf8.Valid(head), nil
}

// Read reads the corpus's files one after the other, as one text.
func (c *CorpusReader) Read(p []byte) (int, error) {
	if c.size < 0 {
		return c.stdin.Read(p)
	}
	for {
		if c.cur == nil {
			if len(c.files) == 0 {
				return 0, io.EOF
			}
			f, err := os.Open(c.files[0])
			if err != nil {
				return 0, err
			}
			c.cur, c.files = f, c.files[1:]
		}
		n, err := c.cur.Read(p)
		if err == io.EOF {
			c.cur.Close()
			c.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

// Close closes the file being read, if any.
func (c *CorpusReader) Close() {
	if c.cur != nil {
		c.cur.Close()
	}
}

// CorpusBytes sums the sizes of corpus arguments, for a progress bar: -1
// if one is stdin or cannot be opened.
func CorpusBytes(paths []string) int64 {
	var total int64
	for _, p := range paths {
		cr, err := OpenCorpus(p, nil)
		if err != nil || cr.size < 0 {
			return -1
		}
		total += cr.size
	}
	return total
}

// CountCorpus counts the corpus argument path (stdin for "-") with t; an
// error while counting names the path.
func (t *Tokenizer) CountCorpus(ctx context.Context, path string, stdin io.Reader, opts CountOptions) (*Counts, error) {
	cr, err := OpenCorpus(path, stdin)
	if err != nil {
		return nil, err
	}
	defer cr.Close()
	counts, err := t.Count(ctx, cr, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return counts, nil
}

// ReadCorpusCounts reads path when it is a counts file (WriteCounts) and
// counts it as CountCorpus does otherwise, so a corpus can be given as
// its text or as the counts of it.
func (t *Tokenizer) ReadCorpusCounts(ctx context.Context, path string, stdin io.Reader, opts CountOptions) (*Counts, error) {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		head := make([]byte, 64)
		n, _ := io.ReadFull(f, head)
		if IsCountsFile(head[:n]) {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
			counts, err := ReadCounts(f, t.NumTokens())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return counts, nil
		}
	}
	return t.CountCorpus(ctx, path, stdin, opts)
}
