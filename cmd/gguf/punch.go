package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/inspect"
)

func init() {
	rootCmd.AddCommand(newPunchCmd(true), newPunchCmd(false))
}

// newPunchCmd makes `gguf punch` (punch true) or `gguf unpunch`.
func newPunchCmd(punch bool) *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "punch FILE --from CACHE",
		Short: "Free the expert bytes of an experts-last file whose experts a cache holds (hole punching)",
		Long: `Checks that CACHE (a SOURCE: a path, an https:// URL or hf://...) holds every expert tensor of FILE
with the same sha256, then frees the page-aligned interior of FILE's expert region in place with
fallocate(PUNCH_HOLE|KEEP_SIZE): FILE keeps its size and header, the punched bytes read as zeros and
take no disk space, so a device that pages experts from CACHE stores the model once. Refused when the
file system cannot punch holes, the experts are not last, a tensor differs, FILE is read-only, or
CACHE is FILE itself (the same inode: a symlink, a hard link or another spelling of the path).
'gguf unpunch FILE --from CACHE' writes them back; 'gguf info FILE' shows punched bytes.`,
		Example: `  gguf punch moon-beam-el.gguf --from moon-beam-experts.gguf
  gguf unpunch moon-beam-el.gguf --from moon-beam-experts.gguf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" {
				return usageError("missing --from CACHE")
			}
			cache, err := openSource(cmd, from)
			if err != nil {
				return err
			}
			defer cache.Close()
			if cache.Reader == nil {
				return usageError("--from %s: the cache must be a file or URL, not a stream", from)
			}
			run := experts.Punch
			if !punch {
				run = experts.Unpunch
			}
			res, err := run(args[0], cache.Reader.ReaderAt(), cache.Size())
			if errors.Is(err, os.ErrNotExist) {
				return usageError("%v", err)
			}
			if err != nil {
				return usageError("%s: %v", args[0], err)
			}
			if punch {
				fmt.Fprintf(stderr, "gguf: punched %s (%d bytes) of %s at bytes %d-%d, %d expert tensors checked against %s; %s in holes now\n",
					humanize.Bytes(uint64(res.Len())), res.Len(), args[0], res.Start, res.End, res.Tensors, from, humanize.Bytes(uint64(res.Holes)))
			} else if res.Restored == 0 {
				fmt.Fprintf(stderr, "gguf: %s has no holes in its expert region: nothing to restore (its %d expert tensors match %s)\n", args[0], res.Tensors, from)
			} else {
				fmt.Fprintf(stderr, "gguf: restored %s (%d bytes) of %s, %d expert tensors checked against %s; %s in holes now\n",
					humanize.Bytes(uint64(res.Restored)), res.Restored, args[0], res.Tensors, from, humanize.Bytes(uint64(res.Holes)))
			}
			return nil
		},
	}
	if !punch {
		cmd.Use = "unpunch FILE --from CACHE"
		cmd.Short = "Write back the expert bytes 'gguf punch' freed, from the cache, and check them"
		cmd.Long = `Checks CACHE against FILE before writing a byte: the same expert tensors (names, types, shapes)
and the same bytes wherever FILE still holds expert bytes (the unpunched edges and any page that is
not a hole); any difference, or CACHE being FILE itself, is refused. Then writes CACHE's expert bytes
back into the holes of FILE's expert region (zeros into the padding between tensors), syncs, and
checks every expert tensor's sha256 against CACHE. A FILE without holes there is left as it is
(nothing to restore).`
		cmd.Example = `  gguf unpunch moon-beam-el.gguf --from moon-beam-experts.gguf`
	}
	cmd.Flags().StringVar(&from, "from", "", "the cache holding FILE's expert tensors (a GGUF SOURCE)")
	return cmd
}

// notePunched records in s how many bytes of a local experts-last file's
// expert region are punched holes (gguf info); other sources are not
// checked.
func notePunched(spec string, s *inspect.Summary) {
	if s.Experts == nil || !s.Experts.Last {
		return
	}
	if st, err := os.Stat(spec); err != nil || !st.Mode().IsRegular() {
		return
	}
	f, err := os.Open(spec)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return
	}
	r, err := gguf.NewReader(f, st.Size())
	if err != nil {
		return
	}
	if h, err := experts.Punched(f, r.File); err == nil {
		s.Experts.Punched = h
	}
}
