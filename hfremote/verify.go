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
	v := &verifier{f: f, rc: f.Ranges(ctx, []Range{{0, f.size}}, opt)}
	switch {
	case f.sha256 != "":
		v.h, v.want, v.algo = sha256.New(), f.sha256, "sha256"
	case f.gitSHA1 != "":
		// git hashes "blob <size>\0" followed by the content.
		v.h, v.want, v.algo = sha1.New(), f.gitSHA1, "git blob sha1"
		fmt.Fprintf(v.h, "blob %d\x00", f.size)
	}
	return v
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
		return n, &Error{Source: v.f.name, Err: ErrChecksumMismatch, Msg: fmt.Sprintf("read %d bytes, the file has %d", v.n, v.f.size)}
	}
	if v.h != nil {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			return n, &Error{Source: v.f.name, Err: ErrChecksumMismatch,
				Msg: fmt.Sprintf("%s of the downloaded bytes is %s, the Hub says %s", v.algo, got, v.want)}
		}
	}
	return n, io.EOF
}

// Close stops the underlying range reads.
func (v *verifier) Close() error { return v.rc.Close() }
