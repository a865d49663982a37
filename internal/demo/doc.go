// Package demo is `gguf demo`: the toolkit's main job run end to end,
// offline, with every step checked. It starts a loopback Hugging Face Hub
// (hfremote/hubtest), publishes Karpathy's stories260K (embedded in
// demodata/ with its MIT license, imported as import-llama2c does) and a
// generated mixture-of-experts model on it, runs the two bundled pinned
// recipes from the Hub, checks each output's sha256, tells llama2.c's
// reference story with the Go runtime, and takes the MoE file through a
// re-cut head, a numeric diff, generation (mapped and paged) and
// perplexity. Each step prints the gguf command it stands for.
//
// The command (cmd/gguf/demo.go) parses flags and passes an Env: the
// commands' code for loading a model, printing a summary and reading
// tensors, so the demo runs what the printed commands run.
//
// It may import the toolkit's packages (engine, recipes, ops, inspect,
// vocabselect, hfremote and the test fixtures it generates its MoE with),
// but never the command (cmd/gguf) nor cobra: what it needs of the
// command comes in through Env.
package demo
