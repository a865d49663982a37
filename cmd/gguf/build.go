package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/safetensors"
	"github.com/ggufkit/gguf/sink"
	"github.com/ggufkit/gguf/source"
)

func init() { rootCmd.AddCommand(newBuildCmd()) }

// buildFlags are the options of `gguf build` shared by commands that write
// a GGUF file.
type buildFlags struct {
	out      string
	force    bool
	quiet    bool
	dryRun   bool
	splitMax string
	// splitTensors is llama-gguf-split's --split-max-tensors (0: none).
	splitTensors int
	// merge is llama-gguf-split's --merge spelling: SOURCE must be the
	// first file of a split model (which any build merges).
	merge bool
}

// register adds the output flags every command writing a GGUF file has.
func (f *buildFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.out, "output", "o", "", "output file, or - for stdout (required)")
	cmd.Flags().BoolVar(&f.force, "force", false, "write binary output to a terminal")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print the resulting tensor table and sizes, write nothing")
	cmd.Flags().StringVar(&f.splitMax, "split-max-size", "", "write llama-gguf-split files OUT-00001-of-0000N.gguf... of at most N (M or G) of tensor data each")
	cmd.Flags().IntVar(&f.splitTensors, "split-max-tensors", 0, "write llama-gguf-split files of at most N tensors each")
}

// registerMerge adds --merge, to a command reading one SOURCE (checked by
// checkMerge).
func (f *buildFlags) registerMerge(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.merge, "merge", false, "SOURCE is the first file of a split model: write it as one file (any build does; as llama-gguf-split --merge)")
}

// opFlags are the operations of `gguf build`, as given on the command line.
type opFlags struct {
	headIDs     string
	headRows    int
	headPad     int
	noSpecials  bool
	adds        []string
	replace     bool
	mtp         []string
	mtpType     string
	drops       []string
	renames     []string
	sets        []string
	dels        []string
	align       uint32
	expertsLast bool
	quant       quantFlags
	layouts     layoutFlags
}

func (o *opFlags) registerHead(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.headIDs, "head-ids", "", "prune the output head to the ranked ids in FILE (one per line, # comments)")
	cmd.Flags().IntVar(&o.headRows, "head-rows", 0, "keep the first N ranked ids (default: all in the file)")
	cmd.Flags().IntVar(&o.headPad, "head-pad", 8, "round the head's rows up to a multiple of M (1: no padding)")
	cmd.Flags().BoolVar(&o.noSpecials, "head-no-specials", false, "do not force control/special tokens into the head")
}

func (o *opFlags) register(cmd *cobra.Command) {
	o.registerHead(cmd)
	cmd.Flags().StringArrayVar(&o.adds, "add", nil, "add the tensors of another GGUF (SRC or SRC.gguf:REGEX), repeatable")
	cmd.Flags().BoolVar(&o.replace, "replace", false, "let --add replace tensors of the same name")
	cmd.Flags().StringArrayVar(&o.mtp, "add-mtp", nil, "add the MTP block (mtp.* tensors) of a Qwen3.5 checkpoint, as convert_hf_to_gguf.py writes it: a .safetensors file (path, URL or hf://; repeatable for shards) or its model.safetensors.index.json (the shards holding mtp.*)")
	cmd.Flags().StringVar(&o.mtpType, "mtp-outtype", "auto", "type of the MTP block's weights, as convert_hf_to_gguf.py's outtype: f32, f16, bf16, q8_0 or auto (the checkpoint's 16-bit type)")
	cmd.Flags().StringArrayVar(&o.drops, "drop", nil, "drop tensors whose name matches REGEX, repeatable")
	cmd.Flags().StringArrayVar(&o.renames, "rename", nil, "rename tensor OLD=NEW, repeatable")
	cmd.Flags().StringArrayVar(&o.sets, "set", nil, "set metadata KEY=TYPE:VALUE (TYPE u8..f64, bool, str, arr[T] with @FILE or a,b,c), repeatable")
	cmd.Flags().StringArrayVar(&o.dels, "del", nil, "delete metadata KEY, repeatable")
	cmd.Flags().Uint32Var(&o.align, "align", 0, "set general.alignment (a power of two up to 2 MiB: the padding is written as zeros)")
	cmd.Flags().BoolVar(&o.expertsLast, "experts-last", false, "move every MoE expert tensor (*_exps) after all other tensors")
	o.quant.register(cmd, false)
	o.layouts.register(cmd, "experts-layout", "ternary-layout")
}

// options turns the flags into build options, opening --add sources and
// reading --head-ids. Sources opened are appended to *closers.
func (o *opFlags) options(cmd *cobra.Command, in *plan.Input, force bool, closers *[]io.Closer) (ops.Options, error) {
	opts := ops.Options{Replace: o.replace, ExpertsLast: o.expertsLast, Align: o.align, Deletes: o.dels, Force: force}
	q, err := o.quant.options()
	if err != nil {
		return opts, err
	}
	opts.Quant = q
	if err := o.layouts.apply(cmd, &opts); err != nil {
		return opts, err
	}
	for _, d := range o.drops {
		re, err := regexp.Compile(d)
		if err != nil {
			return opts, usageError("--drop %q: %v", d, err)
		}
		opts.Drops = append(opts.Drops, re)
	}
	for _, r := range o.renames {
		old, nw, ok := strings.Cut(r, "=")
		if !ok || old == "" || nw == "" {
			return opts, usageError("--rename %q: want OLD=NEW", r)
		}
		opts.Renames = append(opts.Renames, ops.Rename{Old: old, New: nw})
	}
	for _, s := range o.sets {
		kv, err := ops.ParseSet(s)
		if err != nil {
			return opts, usageError("%v", err)
		}
		opts.Sets = append(opts.Sets, kv)
	}
	for _, a := range o.adds {
		spec, pattern := a, ""
		if i := strings.LastIndex(a, ".gguf:"); i >= 0 {
			spec, pattern = a[:i+5], a[i+6:]
		}
		add := ops.Add{}
		if pattern != "" {
			re, err := regexp.Compile(pattern)
			if err != nil {
				return opts, usageError("--add %q: %v", a, err)
			}
			add.Pattern = re
		}
		src, err := openSource(cmd, spec)
		if err != nil {
			return opts, fmt.Errorf("--add: %w", err)
		}
		*closers = append(*closers, src)
		add.Input = planInput(src)
		opts.Adds = append(opts.Adds, add)
	}
	if err := o.mtpOptions(cmd, &opts, closers); err != nil {
		return opts, err
	}
	if o.headIDs != "" {
		f, err := os.Open(o.headIDs)
		if err != nil {
			return opts, usageError("--head-ids: %v", err)
		}
		defer f.Close()
		ids, err := headprune.ReadIDs(f, headprune.VocabSize(in.File))
		if err != nil {
			return opts, usageError("--head-ids %s: %v", o.headIDs, err)
		}
		opts.HeadIDs = ids
		opts.Head = headprune.Options{Rows: o.headRows, Pad: o.headPad, NoSpecials: o.noSpecials}
	} else {
		for _, name := range []string{"head-rows", "head-pad", "head-no-specials"} {
			if cmd.Flags().Changed(name) {
				return opts, usageError("--%s needs --head-ids", name)
			}
		}
	}
	return opts, nil
}

// mtpOptions opens the --add-mtp sources, decoding their safetensors
// headers.
func (o *opFlags) mtpOptions(cmd *cobra.Command, opts *ops.Options, closers *[]io.Closer) error {
	if len(o.mtp) == 0 {
		if cmd.Flags().Changed("mtp-outtype") {
			return usageError("--mtp-outtype needs --add-mtp")
		}
		return nil
	}
	m := &ops.MTP{Threads: o.quant.threads}
	var err error
	if m.Type, m.Auto, err = ops.ParseMTPType(o.mtpType); err != nil {
		return usageError("--mtp-outtype %v", err)
	}
	specs, err := mtpShards(cmd, o.mtp, closers)
	if err != nil {
		return err
	}
	for _, spec := range specs {
		var f *safetensors.File
		src, err := openRawSource(cmd, spec, func(r io.ReaderAt, size int64) (err error) {
			f, err = safetensors.Parse(r, size)
			return err
		})
		if err != nil {
			return fmt.Errorf("--add-mtp: %w", err)
		}
		*closers = append(*closers, src)
		m.Sources = append(m.Sources, ops.MTPSource{Input: src.PlanInput(), File: f})
	}
	opts.MTP = m
	return nil
}

// mtpShards replaces each --add-mtp argument naming a sharded checkpoint's
// index (*.index.json) by the shards that hold its mtp.* tensors, named
// next to it.
func mtpShards(cmd *cobra.Command, specs []string, closers *[]io.Closer) ([]string, error) {
	var out []string
	for _, spec := range specs {
		if !strings.HasSuffix(spec, ".index.json") {
			out = append(out, spec)
			continue
		}
		var wm map[string]string
		src, err := openRawSource(cmd, spec, func(r io.ReaderAt, size int64) error {
			if size > safetensors.MaxIndexBytes {
				return fmt.Errorf("index of %d bytes: larger than %d MiB", size, safetensors.MaxIndexBytes>>20)
			}
			b := make([]byte, size)
			if _, err := r.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && size == 0) {
				return err
			}
			var err error
			wm, err = safetensors.ParseIndex(bytes.NewReader(b))
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("--add-mtp: %w", err)
		}
		*closers = append(*closers, src)
		var files []string
		for name, file := range wm {
			if strings.HasPrefix(name, "mtp.") || strings.HasPrefix(name, "model.mtp.") {
				files = append(files, file)
			}
		}
		slices.Sort(files)
		files = slices.Compact(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("--add-mtp %s: the index names no mtp.* tensor (a checkpoint without an MTP block)", spec)
		}
		dir := spec[:strings.LastIndex(spec, "/")+1]
		if !hfremote.IsRemote(spec) {
			dir = filepath.Dir(spec) + string(filepath.Separator)
		}
		for _, f := range files {
			out = append(out, dir+f)
		}
	}
	return out, nil
}

func newBuildCmd() *cobra.Command {
	var bf buildFlags
	var of opFlags
	cmd := &cobra.Command{
		Use:   "build SOURCE -o OUT",
		Short: "Rewrite a GGUF file in one streaming pass: prune heads, edit tensors and metadata, experts last",
		Long: `Reads SOURCE (a path, - for stdin, an https:// URL or hf://owner/repo/file.gguf) and writes a new
GGUF file in one pass: the header first, with every offset known up front, then the tensor data in
order. With no operations the output is byte-identical to the input. The output is written to a
temporary file next to OUT, synced and renamed only when complete; -o - writes to stdout.

Operations, applied in this order: --drop, --rename, --add, the head (--head-ids), quantization
(--type and llama-quantize's options, as in 'gguf quantize'), --experts-last, layouts
(--experts-layout, --ternary-layout, as in 'gguf layout'), metadata (--del, --set, --align).
A pruned head keeps the listed rows of output.weight (or of token_embd.weight when the model ties
them) byte for byte, in ascending id order, plus an I32 output_ids.weight that maps each row to its
token id; control and special tokens are always kept, and the row count is padded to a multiple of 8
for llama.cpp's fast kernels.`,
		Example: `  gguf build model.gguf -o copy.gguf
  gguf build Qwen3.5-2B-Q4_K_M.gguf --head-ids head-ids-ml60k.txt --head-rows 65668 -o - | adb exec-in 'cat > /data/local/tmp/qwen3.5-2b-head65k.gguf'
  gguf build moon-beam.gguf --experts-last -o moon-beam-el.gguf
  gguf build model.gguf --add mtp.gguf:'^mtp\.' --set general.name=str:with-mtp -o model-mtp.gguf
  cat model.gguf | gguf build - --drop '^blk\.1[2-9]\.' --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if bf.out == "" && !bf.dryRun {
				return usageError("missing -o OUT (a path, or - for stdout)")
			}
			return buildFrom(cmd, args[0], &of, bf, nil)
		},
	}
	bf.register(cmd)
	bf.registerMerge(cmd)
	cmd.Flags().Lookup("force").Usage = "write binary output to a terminal; let --set and --del break keys llama.cpp reads"
	of.register(cmd)
	return cmd
}

// checkMerge refuses a --merge SOURCE that is not the first file of a
// split model.
func (f *buildFlags) checkMerge(src *source.Source, spec string) error {
	if f.merge && src.Files() < 2 {
		return usageError("--merge: %s is not the first file of a split model (NAME-00001-of-0000N.gguf)", spec)
	}
	return nil
}

// buildFrom opens spec, lets check refuse it, turns the flags into
// operations and writes the result: the body of build and recut.
func buildFrom(cmd *cobra.Command, spec string, of *opFlags, bf buildFlags, check func(*source.Source) error) error {
	src, err := openSource(cmd, spec)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := bf.checkMerge(src, spec); err != nil {
		return err
	}
	if check != nil {
		if err := check(src); err != nil {
			return err
		}
	}
	in := planInput(src)
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	opts, err := of.options(cmd, in, bf.force, &closers)
	if err != nil {
		return err
	}
	p, rep, err := ops.Plan(in, opts)
	if err != nil {
		return err
	}
	return writePlan(cmd, p, rep, bf)
}

// writePlan executes p into the output named by bf (or prints it with
// --dry-run), then prints a one-line summary on stderr.
func writePlan(cmd *cobra.Command, p *plan.Plan, rep *ops.Report, bf buildFlags) error {
	if line := rep.HeadLine(); line != "" {
		fmt.Fprintf(stderr, "gguf: %s\n", line)
	}
	if bf.dryRun {
		printLayoutSummary(stderr, rep)
		if rep != nil && rep.Quant != nil {
			printQuantPlan(stdout, rep.Quant)
			fmt.Fprintln(stdout)
		}
		return p.WriteTable(stdout)
	}
	if rep != nil && rep.Quant != nil && bf.out != "" {
		printQuantSummary(stderr, rep.Quant)
	}
	if bf.splitMax != "" || bf.splitTensors > 0 {
		return writeSplit(cmd, p, bf)
	}
	if sink.Resumable(bf.out) && hasRemoteInput(p) {
		return writeResumable(cmd, p, rep, bf)
	}
	out, err := sink.Create(bf.out, bf.force)
	if err != nil {
		return usageError("%v", err)
	}
	defer out.Abort()
	start := time.Now()
	var res *plan.Result
	popts := plan.Options{Progress: progress(bf.quiet, "build")}
	if wa := out.WriterAt(); wa != nil && p.HasSequentialInput() {
		// Read a remote or piped source front to back, whatever the
		// output order: no spooling, and a remote file read whole is
		// checked against the Hub's sha256.
		res, err = p.ExecuteAt(cmd.Context(), wa, popts)
	} else {
		res, err = p.Execute(cmd.Context(), out, popts)
	}
	if err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	printLayoutSummary(stderr, rep)
	printWrote(out.Name(), res.Written, p, res.Read, time.Since(start))
	return nil
}
