package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/sink"
)

// hasRemoteInput reports whether p reads a remote source, whose output is
// worth resuming after an interruption.
func hasRemoteInput(p *plan.Plan) bool {
	for i := range p.Tensors {
		if in := p.Tensors[i].Src.Input(); in != nil {
			if _, ok := in.ReaderAt.(plan.RangeStreamer); ok {
				return true
			}
		}
	}
	return false
}

// resumeKey identifies an output: its header (metadata, tensor table) and
// the sources it is made from, with their sizes and identities (a remote
// file's commit and ETag, a local file's size, modification time and
// inode), so that a source changed since the interrupted run, even to the
// same size and header, starts the output over.
func resumeKey(layout *gguf.File) (string, error) {
	h := sha256.New()
	var hdr bytes.Buffer
	if _, err := gguf.NewWriterLayout(&hdr, layout); err != nil {
		return "", err
	}
	h.Write(hdr.Bytes())
	for _, s := range opened {
		fmt.Fprintf(h, "\x00%s\x00%d\x00%s", s.Name, s.Size(), s.Identity())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeResumable writes a plan reading remote sources into OUT.incomplete
// with a journal of the tensors written (sink.Partial): a run interrupted
// in any way leaves them, and the same command run again fetches only the
// tensors not yet written and verified, then renames the file to OUT. The
// bytes are those of an uninterrupted run: each tensor and its padding are
// written at their offsets whatever the order.
func writeResumable(cmd *cobra.Command, p *plan.Plan, rep *ops.Report, bf buildFlags) error {
	layout, err := p.Layout()
	if err != nil {
		return err
	}
	key, err := resumeKey(layout)
	if err != nil {
		return err
	}
	align := int64(layout.Alignment)
	spans := make([]sink.Span, len(layout.Tensors))
	for i := range layout.Tensors {
		t := &layout.Tensors[i]
		size := t.Size()
		spans[i] = sink.Span{Off: layout.DataOffset + int64(t.Offset), Len: size + (align-size%align)%align}
	}
	part, err := sink.OpenPartial(bf.out, key, spans)
	if err != nil {
		return usageError("%v", err)
	}
	defer part.Close()
	if n, b := part.Kept(); n > 0 {
		fmt.Fprintf(stderr, "gguf: resuming %s: %d of %d tensors (%s) already written and verified\n",
			part.Name(), n, len(p.Tensors), humanize.Bytes(uint64(b)))
	}
	start := time.Now()
	res, err := p.ExecuteAt(cmd.Context(), part.WriterAt(), plan.Options{
		Progress: progress(bf.quiet, "build"),
		Have:     part.Has,
		Wrote:    part.Done,
	})
	if errors.Is(err, hfremote.ErrChecksumMismatch) {
		part.Abort()
		return err
	}
	if err != nil {
		return fmt.Errorf("%w (the tensors written so far are kept in %s: run the same command again to resume)", err, part.Name())
	}
	if err := part.Commit(layout.FileSize()); err != nil {
		return err
	}
	printLayoutSummary(stderr, rep)
	printWrote(bf.out, res.Written, p, res.Read, time.Since(start))
	return nil
}
