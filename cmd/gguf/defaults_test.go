package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/ggufkit/gguf/gguf"
)

// TestThreadsFor: one core left free on ARM from 3 cores (never below 2),
// all cores elsewhere and on 1-2 core ARM machines.
func TestThreadsFor(t *testing.T) {
	for _, c := range []struct {
		arch        string
		cores, want int
	}{
		{"arm64", 1, 1}, {"arm64", 2, 2}, {"arm64", 3, 2}, {"arm64", 4, 3}, {"arm64", 8, 7}, {"arm", 4, 3},
		{"amd64", 1, 1}, {"amd64", 2, 2}, {"amd64", 4, 4}, {"amd64", 16, 16},
	} {
		if got := threadsFor(c.arch, c.cores); got != c.want {
			t.Errorf("%s, %d cores: %d threads, want %d", c.arch, c.cores, got, c.want)
		}
	}
}

// TestSamplingDefaults: general.sampling.penalty_repeat and
// penalty_last_n set the repeat penalty where the flags were not given,
// and never override them.
func TestSamplingDefaults(t *testing.T) {
	md, err := gguf.NewMetadata()
	if err != nil {
		t.Fatal(err)
	}
	md.Set("general.sampling.penalty_repeat", gguf.Float32(1.15))
	md.Set("general.sampling.penalty_last_n", gguf.Int32(256))
	for _, c := range []struct {
		args    []string
		penalty float32
		lastN   int
	}{
		{nil, 1.15, 256},
		{[]string{"--repeat-penalty", "1.3"}, 1.3, 256},
		{[]string{"--repeat-last-n", "32"}, 1.15, 32},
	} {
		var p float32
		var n int
		cmd := &cobra.Command{Use: "x", RunE: func(cmd *cobra.Command, _ []string) error {
			samplingDefaults(cmd, md, &p, &n)
			return nil
		}}
		cmd.Flags().Float32Var(&p, "repeat-penalty", 1, "")
		cmd.Flags().IntVar(&n, "repeat-last-n", 64, "")
		cmd.SetArgs(c.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if p != c.penalty || n != c.lastN {
			t.Errorf("%v: penalty %g over %d, want %g over %d", c.args, p, n, c.penalty, c.lastN)
		}
	}
	empty, _ := gguf.NewMetadata()
	p, n := float32(1), 64
	cmd := &cobra.Command{Use: "x"}
	cmd.Flags().Float32Var(&p, "repeat-penalty", 1, "")
	cmd.Flags().IntVar(&n, "repeat-last-n", 64, "")
	samplingDefaults(cmd, empty, &p, &n)
	if p != 1 || n != 64 {
		t.Errorf("no keys: penalty %g over %d", p, n)
	}
}
