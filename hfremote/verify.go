package hfremote

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// VerifyingReader reads the whole file in order (through Ranges with opt)
// and checks it at the end: against the sha256 the Hub published for an LFS
// file, else against the git blob id of a file the Hub serves itself, else
// only its length. A mismatch is returned by the Read that would have
// returned io.EOF, as an *Error wrapping ErrChecksumMismatch, so a caller
// that copies to a temporary output and publishes it only on success
// (io.Copy, then commit) never publishes a corrupt file.
func (f *File) VerifyingReader(ctx context.Context, opt RangeOptions) io.ReadCloser {
	return f.VerifyingReaderFrom(ctx, nil, opt)
}

// VerifyingReaderFrom is VerifyingReader for a caller that already holds
// the file's first len(prefix) bytes (a header it has decoded): they enter
// the check but are not fetched again, and the reader returns only the
// bytes after them.
func (f *File) VerifyingReaderFrom(ctx context.Context, prefix []byte, opt RangeOptions) io.ReadCloser {
	from := min(int64(len(prefix)), f.size)
	v := &verifier{f: f, rc: f.Ranges(ctx, []Range{{from, f.size - from}}, opt), n: from}
	switch v.algo, v.want = f.Checksum(); v.algo {
	case "sha256":
		v.h = sha256.New()
	case "git-sha1":
		// git hashes "blob <size>\0" followed by the content.
		v.h = sha1.New()
		fmt.Fprintf(v.h, "blob %d\x00", f.size)
	}
	if v.h != nil {
		v.h.Write(prefix[:from])
	}
	return v
}

// Checksum says what VerifyingReader checks the file against: "sha256" and
// the hex digest the Hub published for an LFS file (X-Linked-Etag),
// "git-sha1" and the blob id of a file the Hub stores in git, or "" when
// there is nothing but the length to check (plain URLs).
func (f *File) Checksum() (algo, hexDigest string) {
	switch {
	case f.sha256 != "":
		return "sha256", f.sha256
	case f.gitSHA1 != "":
		return "git-sha1", f.gitSHA1
	}
	return "", ""
}

type verifier struct {
	f          *File
	rc         io.ReadCloser
	h          hash.Hash // nil when there is nothing to check but the length
	want, algo string
	n          int64
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.rc.Read(p)
	v.n += int64(n)
	if v.h != nil {
		v.h.Write(p[:n])
	}
	if err != io.EOF {
		return n, err
	}
	if v.n != v.f.size {
		return n, &Error{Source: v.f.name, Err: ErrChecksumMismatch, Msg: fmt.Sprintf("checksum mismatch: read %d bytes, the file has %d", v.n, v.f.size)}
	}
	if v.h != nil {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			return n, &Error{Source: v.f.name, Err: ErrChecksumMismatch,
				Msg: fmt.Sprintf("checksum mismatch: %s of the downloaded bytes is %s, the Hub says %s", v.algo, got, v.want)}
		}
	}
	return n, io.EOF
}

// Close stops the underlying range reads.
func (v *verifier) Close() error { return v.rc.Close() }
