package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/moegen"
)

func main() {
	out := flag.String("o", "", "output file")
	layers := flag.Int("layers", 10, "blocks")
	embd := flag.Int("embd", 2048, "embedding width")
	ff := flag.Int("ff", 5632, "feed-forward width")
	vocab := flag.Int("vocab", 131072, "vocabulary size")
	tied := flag.Bool("tied", true, "tie the output head to token_embd (no output.weight)")
	wtype := flag.String("type", "Q8_0", "type of the layer matrices")
	htype := flag.String("head-type", "F16", "type of token_embd / output")
	seed := flag.Uint64("seed", 42, "seed of the generated weights (two sources of one shape for gguf assemble)")
	named := flag.String("fixture", "", "write the named fixture model (fixture.Named: ci-dense, ci-moe) instead; the size flags are ignored")
	imatrix := flag.String("imatrix", "", "also write an importance matrix for the model (fixture.Imatrix) to this file")
	arch := flag.String("arch", "llama", "architecture (llama, qwen2, qwen3, qwen3moe, olmoe, bailingmoe2, gemma3, bailingmoe3, qwen35, qwen35moe)")
	heads := flag.Int("heads", 16, "attention heads")
	kvHeads := flag.Int("kv-heads", 8, "KV heads")
	headDim := flag.Int("head-dim", 0, "head width (attention.key_length; 0: embd/heads)")
	experts := flag.Int("experts", 0, "experts per layer (0: dense)")
	used := flag.Int("experts-used", 0, "experts used per token")
	expertFF := flag.Int("expert-ff", 0, "expert FFN width (expert_feed_forward_length; 0: ff)")
	skew := flag.Float64("moe-skew", 0, "write a MoE for the expert pager instead (internal/moegen): O(1) quantized weights and a router with this Zipf popularity strength (e.g. 3)")
	expType := flag.String("expert-type", "", "with -moe-skew: type of the *_exps tensors (default -type)")
	templates := flag.Int("expert-templates", 0, "with -moe-skew: distinct experts drawn per expert tensor, repeated (0: all distinct; a few make multi-GB models quick to write)")
	last := flag.Bool("experts-last", true, "with -moe-skew: write the expert tensors last (pageable)")
	shared := flag.Int("shared-experts", 0, "bailingmoe2/3: shared experts (expert_shared_count)")
	denseLead := flag.Int("dense-lead", 0, "bailingmoe2/3: leading dense layers")
	mlaEvery := flag.Int("mla-every", 4, "bailingmoe3: layer l is MLA when (l+1) % this == 0, KDA otherwise")
	kvLora := flag.Int("kv-lora", 512, "bailingmoe3: kv_lora_rank")
	qLora := flag.Int("q-lora", 0, "bailingmoe3: q_lora_rank (0: a plain attn_q)")
	nope := flag.Int("nope", 128, "bailingmoe3: MLA q/k head dims without RoPE")
	vHead := flag.Int("v-head", 128, "bailingmoe3: MLA value head width")
	kdaHead := flag.Int("kda-head", 128, "bailingmoe3: KDA head width")
	ropeDims := flag.Int("rope-dims", 0, "rotated dimensions per head (rope.dimension_count; 0: the head width, qwen35 a quarter of it)")
	ssmConv := flag.Int("ssm-conv", 4, "qwen35: taps of the Gated DeltaNet convolution (ssm.conv_kernel)")
	ssmHeadDim := flag.Int("ssm-head-dim", 128, "qwen35: width of a DeltaNet key and value head (ssm.state_size)")
	ssmKHeads := flag.Int("ssm-k-heads", 16, "qwen35: DeltaNet key heads (ssm.group_count)")
	ssmVHeads := flag.Int("ssm-v-heads", 16, "qwen35: DeltaNet value heads (ssm.time_step_rank)")
	interval := flag.Int("full-attn-interval", 4, "qwen35: every this many layers one is full attention")
	nextn := flag.Int("nextn", 0, "qwen35, qwen35moe: MTP (NextN) blocks after the main ones (nextn_predict_layers)")
	agree := flag.Float64("mtp-agree", 0, "with -crosscheck and -nextn: build the MTP block to agree with the model, the main layers' residual projections scaled by this (fixture.Model.MTPAgree; 0.02: most drafts accepted; use -tied=false)")
	xcheck := flag.Bool("crosscheck", false, "draw F32 weights as bench/crosscheck does (activations stay O(1), recurrent heads decay) instead of random blocks of -type; quantize the file with gguf quantize")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "genmodel: -o is required")
		os.Exit(2)
	}
	wt, err := gguf.ParseType(*wtype)
	check(err)
	ht, err := gguf.ParseType(*htype)
	check(err)
	m := fixture.Model{Arch: *arch, Name: "bench-synthetic", Layers: *layers, Embd: *embd, FF: *ff, Heads: *heads,
		KVHeads: *kvHeads, HeadDim: *headDim, Vocab: *vocab, Tied: *tied, Type: wt, HeadType: ht,
		Experts: *experts, ExpertsUsed: *used, ExpertFF: *expertFF, RopeDims: *ropeDims, Seed: *seed,
		SharedExperts: *shared, DenseLead: *denseLead, NextN: *nextn, MTPAgree: *agree}
	switch *arch {
	case "bailingmoe3":
		m.Sigmoid, m.WeightsNorm, m.WeightsScale = true, true, 2.5
		m.KVLoraRank, m.QLoraRank, m.NopeDim, m.VHeadDim = *kvLora, *qLora, *nope, *vHead
		m.KDAHeadDim, m.ConvKernel, m.GateLowerBound = *kdaHead, 4, -5
		for l := *mlaEvery - 1; l < *layers; l += *mlaEvery {
			m.MLALayers = append(m.MLALayers, l)
		}
	case "qwen35", "qwen35moe":
		if m.RopeDims == 0 {
			hd := *headDim
			if hd == 0 {
				hd = *embd / *heads
			}
			m.RopeDims = hd / 4
		}
		// text-only M-RoPE sections covering every rotated pair, as
		// Qwen3.5's 11, 11, 10 of 32: the sections interleave (pair p
		// is section p%3's), so section i counts the pairs p%3 == i
		n := int32(m.RopeDims / 2)
		m.RopeSections = [4]int32{(n + 2) / 3, (n + 1) / 3, n / 3, 0}
		m.SSMConv, m.SSMHeadDim, m.SSMKHeads, m.SSMVHeads = *ssmConv, *ssmHeadDim, *ssmKHeads, *ssmVHeads
		m.FullAttnInterval = *interval
	}
	if *named != "" {
		var ok bool
		if m, ok = fixture.Named[*named]; !ok {
			fmt.Fprintf(os.Stderr, "genmodel: no fixture %q\n", *named)
			os.Exit(2)
		}
	}
	if *imatrix != "" {
		check(os.WriteFile(*imatrix, fixture.Imatrix(m, m.Name+"-calibration.txt"), 0o644))
	}
	var src io.WriterTo = m
	if *skew > 0 {
		spec := moegen.Spec{Model: m, Skew: *skew, Templates: *templates, ExpertsLast: *last}
		if *expType != "" {
			spec.ExpertType, err = gguf.ParseType(*expType)
			check(err)
		}
		src = spec
	}
	f, err := os.Create(*out)
	check(err)
	w := bufio.NewWriterSize(f, 4<<20)
	var n int64
	if *xcheck {
		n, err = crosscheck.WriteF32(w, m)
	} else {
		n, err = src.WriteTo(w)
	}
	check(err)
	check(w.Flush())
	check(f.Close())
	fmt.Fprintf(os.Stderr, "genmodel: wrote %s (%d bytes)\n", *out, n)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "genmodel:", err)
		os.Exit(1)
	}
}
