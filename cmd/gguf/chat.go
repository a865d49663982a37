package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"golang.org/x/term"

	"github.com/ggufkit/gguf/chat"
	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/internal/osmem"
	"github.com/ggufkit/gguf/internal/textline"
	"github.com/ggufkit/gguf/vocabselect"
)

// chatFlags are run's conversation flags (llama-cli's -cnv mode).
type chatFlags struct {
	on            bool
	system        string
	template      string
	reasoning     string
	verbosePrompt bool
	singleTurn    bool
}

// errStopString ends a generation whose text reached a stop string.
var errStopString = errors.New("stop string")

// stopStringReason is the Stop reason of an answer cut at a stop string.
const stopStringReason = "stop string"

// chatSession is one conversation with a model: the turns so far and the
// tokens the KV cache holds, so each turn evaluates only what is new.
type chatSession struct {
	tok       *vocabselect.Tokenizer
	s         *engine.State
	sm        *engine.Sampler
	tm        *chat.Template
	reasoning chat.Reasoning
	n         int
	verbose   bool
	out       *bufio.Writer
	msgs      []chat.Message
	cached    []int32 // the tokens at positions 0..s.Pos()-1
	stopIDs   map[int32]bool
	stops     []string // the template's stop strings and -r's
	single    bool     // --single-turn: loop answers one line
	total     engine.GenStats
	turns     int
	mem       *memWatch // the memory guard between tokens (nil: none)
	spec      engine.SpecOptions
}

// newChatSession picks the chat template (--chat-template, else the
// model's tokenizer.chat_template) and the end-of-turn tokens.
// The answers go to out (see generatedOutput); f.reverse are stop strings too.
func newChatSession(m *engine.Model, tok *vocabselect.Tokenizer, s *engine.State, sm *engine.Sampler, f runFlags, out io.Writer) (*chatSession, error) {
	r, err := chat.ParseReasoning(f.chat.reasoning)
	if err != nil {
		return nil, usageError("%v", err)
	}
	spec := f.chat.template
	if spec == "" {
		if v, ok := m.Metadata.Get(vocabselect.KeyChatTemplate); ok {
			spec, _ = v.Str()
		}
	}
	tm, err := chat.New(spec)
	if err != nil {
		return nil, err
	}
	if r != chat.ReasoningAuto && !tm.HasReasoning() {
		fmt.Fprintf(stderr, "gguf: chat template %s has no thinking switch; --reasoning %s changes nothing\n", tm, f.chat.reasoning)
	}
	cs := &chatSession{tok: tok, s: s, sm: sm, tm: tm, reasoning: r, n: f.n, spec: f.spec, verbose: f.chat.verbosePrompt,
		out: bufio.NewWriter(out), stopIDs: map[int32]bool{}, stops: slices.Concat(tm.Stops(), f.reverse), single: f.chat.singleTurn}
	// A stop string that is one control token of the vocabulary (chatml's
	// <|im_start|>, ...) ends the turn as a token: its piece prints as
	// nothing, so the text would never show it.
	for _, st := range tm.Stops() {
		if ids := tok.Encode(st, false, true); len(ids) == 1 && tok.IsControl(ids[0]) {
			cs.stopIDs[ids[0]] = true
		}
	}
	if f.chat.system != "" {
		cs.msgs = append(cs.msgs, chat.Message{Role: "system", Content: f.chat.system})
	}
	if f.spec.Type == engine.SpecDraftMTP {
		// The MTP block stays with the state from turn to turn: each
		// turn's drafts see the whole conversation in its cache.
		if err := s.AttachMTP(f.spec.NMax); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

func (cs *chatSession) isEOG(id int32) bool { return cs.tok.IsEOG(id) || cs.stopIDs[id] }

// turn answers one user message, streaming the answer to stdout.
func (cs *chatSession) turn(user string) error {
	cs.msgs = append(cs.msgs, chat.Message{Role: "user", Content: user})
	prompt, err := cs.tm.Render(cs.msgs, cs.reasoning)
	if err != nil {
		return err
	}
	ids := cs.tok.Encode(prompt, true, true)
	if cs.verbose {
		fmt.Fprintf(stderr, "gguf: prompt tokens (%d): %v\n", len(ids), ids)
	}
	if len(ids) >= cs.s.Ctx() {
		return fmt.Errorf("the conversation is %d tokens, the context %d (raise --ctx)", len(ids), cs.s.Ctx())
	}
	// The cache keeps the longest start the new prompt shares with it:
	// usually all of it (the answer re-tokenizes as it was generated), up
	// to the last answer where the template renders past answers otherwise
	// (Qwen3 drops their think blocks). At least one token is evaluated,
	// for the logits of the next.
	common := 0
	for common < min(len(cs.cached), len(ids)-1) && cs.cached[common] == ids[common] {
		common++
	}
	cs.s.Rewind(common)
	common = cs.s.Pos() // a recurrent model's state starts over instead
	cs.cached = cs.cached[:common]
	stream := chat.NewStream(cs.stops)
	var reply strings.Builder
	var emitted []int32
	show := func(text string) error {
		reply.WriteString(text)
		if _, err := cs.out.WriteString(text); err != nil {
			return err
		}
		return cs.out.Flush()
	}
	st, err := engine.GenerateSpec(cs.s, cs.sm, ids[len(cs.cached):], cs.n, cs.isEOG, func(id int32) error {
		emitted = append(emitted, id)
		text, stopped := stream.Add(string(cs.tok.TokenToPiece(id, false)))
		if err := show(text); err != nil {
			return err
		}
		if stopped {
			return errStopString
		}
		return cs.mem.check()
	}, cs.spec)
	switch {
	case errors.Is(err, errStopString):
		st.Stop = stopStringReason
	case err != nil:
		return err
	default:
		if err := show(stream.Flush()); err != nil {
			return err
		}
	}
	if _, err := cs.out.WriteString("\n"); err != nil {
		return err
	}
	if err := cs.out.Flush(); err != nil {
		return err
	}
	cs.cached = slices.Concat(ids, emitted)[:cs.s.Pos()]
	cs.msgs = append(cs.msgs, chat.Message{Role: "assistant", Content: cs.tm.Answer(reply.String())})
	cs.total.PromptTokens += st.PromptTokens
	cs.total.PromptTime += st.PromptTime
	cs.total.Generated += st.Generated
	cs.total.GenTime += st.GenTime
	cs.total.Passes += st.Passes
	cs.total.Drafted += st.Drafted
	cs.total.Accepted += st.Accepted
	cs.total.Stop = st.Stop
	cs.turns++
	return nil
}

// maxChatLine is the longest user turn (one line of stdin) a chat takes.
const maxChatLine = 1 << 20

// loop reads user turns, one per line, until end of input. On a terminal
// it prompts with "> "; otherwise it echoes each line so the transcript
// reads as a conversation.
func (cs *chatSession) loop(in io.Reader) error {
	f, isFile := in.(*os.File)
	tty := isFile && term.IsTerminal(int(f.Fd()))
	sc := textline.NewScanner(in, maxChatLine)
	for {
		if tty {
			cs.out.WriteString("> ")
			cs.out.Flush()
		}
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return fmt.Errorf("chat turns on stdin: %w", err)
			}
			return nil
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !tty {
			cs.out.WriteString("> " + line + "\n")
		}
		if err := cs.turn(line); err != nil || cs.single {
			return err
		}
	}
}

// report prints the session's speed, memory and why the last answer
// stopped, as run does for a completion.
func (cs *chatSession) report(m *engine.Model, threads int, seed uint64) {
	t := cs.total
	fmt.Fprintf(stderr, "gguf: chat %s, %d turns: prompts %d tokens in %s (%.1f tok/s), generated %d tokens in %s (%.1f tok/s), %d threads, ctx %d, seed %d\n",
		cs.tm, cs.turns, t.PromptTokens, t.PromptTime.Round(time.Microsecond), t.PromptRate(),
		t.Generated, t.GenTime.Round(time.Microsecond), t.GenRate(), threads, cs.s.Ctx(), seed)
	fmt.Fprintf(stderr, "gguf: peak RSS %s (%s, KV cache %s); last answer stopped: %s\n",
		humanize.IBytes(uint64(osmem.PeakRSS())), weightsLine(m, cs.s),
		humanize.IBytes(uint64(cs.s.CacheBytes())), t.Stop)
	specLine(stderr, cs.spec, t)
}
