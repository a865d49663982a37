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
// same sources, as the caller identifies them) re-reads and checks those
// ranges, keeps the ones that match and writes only the rest, as
// huggingface_hub resumes downloads from its .incomplete files. Commit
// renames it to OUT.
//
// The journal is rewritten (temporary name, rename) after the file's data
// is synced, so every range it lists is on disk even after a power cut
// or kill -9. Unlike Output, a Partial is not removed on SIGINT/SIGTERM.
//
// Neither file is opened through a symbolic link (a link planted at
// OUT.incomplete would have the output written into its target), and the
// partial file is locked while a run writes it, so a second run to the
// same output fails at once instead of mixing its bytes with the first's.
type Partial struct {
	f       *os.File
	final   string
	spans   []Span
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

// Span is where one piece lies in the output, from the caller's plan:
// spans[i] is piece i's.
type Span struct {
	Off, Len int64
}

type journal struct {
	Key    string  `json:"key"`
	Pieces []Piece `json:"pieces"`
}

// IncompleteSuffix is appended to the output's name while it is written.
const IncompleteSuffix = ".incomplete"

// Resumable reports whether path names a file a Partial can be renamed
// to: a regular file (through its symlinks) or nothing yet. Stdout, a
// device or a FIFO is written straight into instead (see CreateWith).
func Resumable(path string) bool {
	if path == "-" {
		return false
	}
	final, err := resolve(path)
	if err != nil {
		return true // OpenPartial reports it
	}
	st, err := os.Stat(final)
	return err != nil || st.Mode().IsRegular()
}

// OpenPartial opens path's partial file, creating it if needed; spans
// are the pieces the output is made of. A symlink at path is followed as
// Create follows it (the partial file is made next to its target); one at
// the partial file's own name is refused. When a journal with the same
// key exists, the pieces it lists are kept if they are where spans puts
// them and the file holds their bytes (read back in full, with no hole,
// and of the sha256 listed): Has reports them. Otherwise the file starts
// empty.
func OpenPartial(path, key string, spans []Span) (*Partial, error) {
	final, err := resolve(path)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(final); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	} else if err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file: it cannot be resumed into", path)
	}
	f, err := openIncomplete(final + IncompleteSuffix)
	if err != nil {
		return nil, err
	}
	p := &Partial{f: f, final: final, spans: spans, journal: journal{Key: key}, have: map[int]Piece{}}
	if old, ok := p.readJournal(); ok && old.Key == key {
		for _, pc := range old.Pieces {
			if p.holds(pc) {
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

// maxOpenTries bounds how often openIncomplete starts over when another
// run creates or renames the partial file between its steps.
const maxOpenTries = 5

// openIncomplete opens (or creates, exclusively) the partial file name
// without following a symbolic link, and locks it.
func openIncomplete(name string) (*os.File, error) {
	for try := 1; ; try++ {
		if st, err := os.Lstat(name); err == nil && st.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: is a symbolic link: refusing to write through it (remove it)", name)
		} else if err == nil && !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: exists and is not a regular file (remove it)", name)
		}
		f, err := os.OpenFile(name, os.O_RDWR|noFollow, 0)
		if errors.Is(err, os.ErrNotExist) {
			f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|noFollow, 0o644)
		}
		if err != nil {
			if (errors.Is(err, os.ErrExist) || errors.Is(err, os.ErrNotExist)) && try < maxOpenTries {
				continue // created or removed by another run meanwhile
			}
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: another run is writing this output (%v): wait for it to end, or write to another name", name, err)
		}
		// The run that held the lock may have renamed the file into place
		// meanwhile: the lock must be on the file under the name.
		fst, ferr := f.Stat()
		st, err := os.Lstat(name)
		if ferr == nil && err == nil && os.SameFile(fst, st) && fst.Mode().IsRegular() {
			return f, nil
		}
		f.Close()
		if try == maxOpenTries {
			return nil, fmt.Errorf("%s: replaced by another run while being opened", name)
		}
	}
}

func (p *Partial) journalName() string { return p.f.Name() + ".json" }

// maxJournal bounds the journal read back (a few hundred bytes a piece).
const maxJournal = 64 << 20

// readJournal reads the journal, not through a symbolic link; ok is false
// when there is none or it is unreadable.
func (p *Partial) readJournal() (j journal, ok bool) {
	if st, err := os.Lstat(p.journalName()); err != nil || !st.Mode().IsRegular() {
		return j, false
	}
	f, err := os.OpenFile(p.journalName(), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return j, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxJournal))
	return j, err == nil && json.Unmarshal(b, &j) == nil
}

// holds reports whether the journal's piece pc can be kept: it is piece
// pc.Index of the plan at its place, listed once, and the file holds its
// bytes with the sha256 listed.
func (p *Partial) holds(pc Piece) bool {
	if pc.Index < 0 || pc.Index >= len(p.spans) || p.spans[pc.Index] != (Span{pc.Off, pc.Len}) {
		return false
	}
	if _, dup := p.have[pc.Index]; dup {
		return false
	}
	if pc.Len > 0 && hasHole(p.f, pc.Off, pc.Len) {
		// Never written: a file extended past its data reads zeros there,
		// whose sha256 a journal may list all the same.
		return false
	}
	sum, err := p.sum(pc.Off, pc.Len)
	return err == nil && sum == pc.SHA256
}

// sum returns the sha256 of the file's bytes [off, off+n), all of which
// must be there.
func (p *Partial) sum(off, n int64) (string, error) {
	h := sha256.New()
	got, err := io.Copy(h, io.NewSectionReader(p.f, off, n))
	if err != nil {
		return "", err
	}
	if got != n {
		return "", fmt.Errorf("%s: %d bytes at %d, want %d", p.f.Name(), got, off, n)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Has reports whether piece i was written and checked by an earlier run.
func (p *Partial) Has(i int) bool {
	_, ok := p.have[i]
	return ok
}

// Kept returns the number of pieces and bytes kept from earlier runs,
// each checked against the file's bytes.
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

// Done records that piece i (its span) is written: it syncs the file,
// hashes the range and rewrites the journal.
func (p *Partial) Done(i int) error {
	if i < 0 || i >= len(p.spans) {
		return fmt.Errorf("%s: piece %d of %d", p.f.Name(), i, len(p.spans))
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("%s: sync: %w", p.f.Name(), err)
	}
	sp := p.spans[i]
	sum, err := p.sum(sp.Off, sp.Len)
	if err != nil {
		return err
	}
	p.journal.Pieces = append(p.journal.Pieces, Piece{Index: i, Off: sp.Off, Len: sp.Len, SHA256: sum})
	return p.writeJournal()
}

// writeJournal replaces the journal with a new file: the temporary is
// created exclusively (a symlink there makes it fail rather than be
// followed) and renamed over the journal (which replaces a symlink
// rather than its target).
func (p *Partial) writeJournal() error {
	b, err := json.Marshal(p.journal)
	if err != nil {
		return err
	}
	tmp := p.journalName() + ".tmp"
	os.Remove(tmp) // a leftover of a killed run; the lock says no run uses it
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p.journalName())
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Commit cuts the file to size, syncs it, removes the journal and renames
// the file to the final name. The journal goes first: a run that opens
// the partial name after the rename must not find it and trust it.
func (p *Partial) Commit(size int64) error {
	if err := p.f.Truncate(size); err != nil {
		return err
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("%s: sync: %w", p.final, err)
	}
	if err := os.Remove(p.journalName()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(p.f.Name(), p.final); err != nil {
		return err
	}
	syncDir(p.final)
	// Closing releases the lock, now on the file under its final name.
	return p.f.Close()
}

// Abort removes the partial file and its journal: what it holds cannot be
// trusted (a source failed its checksum).
func (p *Partial) Abort() {
	os.Remove(p.journalName())
	os.Remove(p.f.Name())
	p.f.Close()
}

// Close closes the file, keeping it and its journal for the next run. It
// does nothing after Commit.
func (p *Partial) Close() { p.f.Close() }
