package sink

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Partial is an output file that survives an interrupted run: it is
// written in place under OUT.incomplete, next to a small journal
// (OUT.incomplete.json) listing the byte ranges already written and their
// sha256. A later run with the same key (the same output header from the
// same sources) re-reads and checks those ranges, keeps the ones that
// match and writes only the rest, as huggingface_hub resumes downloads
// from its .incomplete files. Commit renames it to OUT.
//
// The journal is rewritten (temporary name, rename) after the file's data
// is synced, so every range it lists is on disk even after a power cut
// or kill -9. Unlike Output, a Partial is not removed on SIGINT/SIGTERM.
type Partial struct {
	f       *os.File
	final   string
	journal journal
	have    map[int]Piece
}

// Piece is one range of a Partial: the bytes of one tensor (and its
// padding), identified by the caller's index.
type Piece struct {
	Index  int    `json:"i"`
	Off    int64  `json:"off"`
	Len    int64  `json:"len"`
	SHA256 string `json:"sha256"`
}

type journal struct {
	Key    string  `json:"key"`
	Pieces []Piece `json:"pieces"`
}

// IncompleteSuffix is appended to the output's name while it is written.
const IncompleteSuffix = ".incomplete"

// OpenPartial opens path's partial file, creating it if needed. When a
// journal with the same key exists, the pieces it lists that the file
// still holds (same sha256) are kept: Has reports them. Otherwise the file
// starts empty.
func OpenPartial(path, key string) (*Partial, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	name := path + IncompleteSuffix
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	p := &Partial{f: f, final: path, journal: journal{Key: key}, have: map[int]Piece{}}
	var old journal
	b, err := os.ReadFile(p.journalName())
	if err == nil && json.Unmarshal(b, &old) == nil && old.Key == key {
		for _, pc := range old.Pieces {
			if sum, err := p.sum(pc.Off, pc.Len); err == nil && sum == pc.SHA256 {
				p.have[pc.Index] = pc
				p.journal.Pieces = append(p.journal.Pieces, pc)
			}
		}
	}
	if len(p.have) == 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := p.writeJournal(); err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

func (p *Partial) journalName() string { return p.f.Name() + ".json" }

// sum returns the sha256 of the file's bytes [off, off+n).
func (p *Partial) sum(off, n int64) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(p.f, off, n)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Has reports whether piece i was written and checked by an earlier run.
func (p *Partial) Has(i int) bool {
	_, ok := p.have[i]
	return ok
}

// Kept returns the number of pieces and bytes kept from earlier runs.
func (p *Partial) Kept() (pieces int, bytes int64) {
	for _, pc := range p.have {
		bytes += pc.Len
	}
	return len(p.have), bytes
}

// Name returns the partial file's name.
func (p *Partial) Name() string { return p.f.Name() }

// WriterAt returns the file, to write pieces at their offsets.
func (p *Partial) WriterAt() io.WriterAt { return p.f }

// Done records that piece i, bytes [off, off+n), is written: it syncs the
// file, hashes the range and rewrites the journal.
func (p *Partial) Done(i int, off, n int64) error {
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("%s: sync: %w", p.f.Name(), err)
	}
	sum, err := p.sum(off, n)
	if err != nil {
		return err
	}
	p.journal.Pieces = append(p.journal.Pieces, Piece{Index: i, Off: off, Len: n, SHA256: sum})
	return p.writeJournal()
}

func (p *Partial) writeJournal() error {
	b, err := json.Marshal(p.journal)
	if err != nil {
		return err
	}
	tmp := p.journalName() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p.journalName())
}

// Commit cuts the file to size, syncs it, renames it to the final name
// and removes the journal.
func (p *Partial) Commit(size int64) error {
	if err := p.f.Truncate(size); err != nil {
		return err
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("%s: sync: %w", p.final, err)
	}
	if err := p.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(p.f.Name(), p.final); err != nil {
		return err
	}
	syncDir(p.final)
	if err := os.Remove(p.journalName()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Abort removes the partial file and its journal: what it holds cannot be
// trusted (a source failed its checksum).
func (p *Partial) Abort() {
	p.f.Close()
	os.Remove(p.f.Name())
	os.Remove(p.journalName())
}

// Close closes the file, keeping it and its journal for the next run. It
// does nothing after Commit.
func (p *Partial) Close() { p.f.Close() }
