package vocabselect

import (
	"fmt"
	"sort"
)

// Corpus is one corpus's token counts with its share of the head.
type Corpus struct {
	Name   string
	Counts *Counts
	// Budget is the number of rows this corpus's most frequent tokens fill.
	// 0 gives the corpus an equal share of the rows the other budgets leave.
	Budget int
}

// SelectOptions are the parameters of Select.
type SelectOptions struct {
	// Rows is the number of ids wanted (before padding).
	Rows int
	// KeepBelow keeps every id below it, after the specials.
	KeepBelow int32
	// Pad rounds the list up to a multiple of it (1 or 0: no padding).
	Pad int
}

// Selection is the result of Select.
type Selection struct {
	// IDs is the ranked list: specials, then ids below KeepBelow, then the
	// corpora's tokens in turn, then fill.
	IDs []int32
	// Specials and Low count the first two groups.
	Specials, Low int
	// Taken is how many rows each corpus filled, in corpus order.
	Taken []int
	// Budgets are the corpus budgets after equal shares were assigned.
	Budgets []int
	// Fill counts the rows added after the budgets (corpora that ran out of
	// tokens, and padding), by combined frequency then id.
	Fill int
}

// Select ranks the ids a pruned head keeps: the tokenizer's specials first,
// then every id below KeepBelow, then each corpus's most frequent tokens not
// yet chosen, interleaved so that every corpus is always as close to its
// budget's share as the others (the rows of a prefix are shared the same
// way), then, while rows remain, tokens by their combined frequency across
// corpora (each corpus's counts divided by its total) and id. The list has
// Rows ids rounded up to a multiple of Pad (at most the vocabulary), and the
// same inputs always give the same list.
func Select(t *Tokenizer, corpora []Corpus, opts SelectOptions) (*Selection, error) {
	n := t.NumTokens()
	if opts.Rows <= 0 {
		return nil, fmt.Errorf("rows must be positive, got %d", opts.Rows)
	}
	pad := max(opts.Pad, 1)
	target := min((opts.Rows+pad-1)/pad*pad, n)
	sel := &Selection{}
	chosen := make([]bool, n)
	add := func(id int32) {
		chosen[id] = true
		sel.IDs = append(sel.IDs, id)
	}
	for _, id := range t.Specials() {
		add(id)
	}
	sel.Specials = len(sel.IDs)
	for id := int32(0); id < opts.KeepBelow && int(id) < n; id++ {
		if !chosen[id] {
			add(id)
		}
	}
	sel.Low = len(sel.IDs) - sel.Specials
	if len(sel.IDs) > opts.Rows {
		return nil, fmt.Errorf("%d rows asked, but the %d specials and %d ids below %d need %d", opts.Rows, sel.Specials, sel.Low, opts.KeepBelow, len(sel.IDs))
	}
	free := opts.Rows - len(sel.IDs)
	budgets := make([]int, len(corpora))
	fixed, open := 0, 0
	for i, c := range corpora {
		if c.Counts == nil || len(c.Counts.Counts) != n {
			return nil, fmt.Errorf("corpus %q: counts are not for this vocabulary", c.Name)
		}
		if c.Budget < 0 {
			return nil, fmt.Errorf("corpus %q: negative budget %d", c.Name, c.Budget)
		}
		budgets[i] = c.Budget
		fixed += c.Budget
		if c.Budget == 0 {
			open++
		}
	}
	if fixed > free {
		return nil, fmt.Errorf("corpus budgets add up to %d rows, but only %d remain after specials and ids below %d", fixed, free, opts.KeepBelow)
	}
	if open > 0 {
		share, extra := (free-fixed)/open, (free-fixed)%open
		for i := range budgets {
			if corpora[i].Budget == 0 {
				budgets[i] = share
				if extra > 0 {
					budgets[i]++
					extra--
				}
			}
		}
	}
	sel.Budgets = budgets

	// Each corpus's candidates, most frequent first.
	ranked := make([][]int32, len(corpora))
	for i, c := range corpora {
		ranked[i] = byFrequency(c.Counts.Counts)
	}
	taken := make([]int, len(corpora))
	cursor := make([]int, len(corpora))
	for {
		// The corpus furthest behind its budget goes next (the first one on
		// ties); cross-multiplied to stay in integers.
		best := -1
		for i := range corpora {
			if taken[i] >= budgets[i] || cursor[i] >= len(ranked[i]) {
				continue
			}
			if best < 0 || int64(taken[i])*int64(budgets[best]) < int64(taken[best])*int64(budgets[i]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		for cursor[best] < len(ranked[best]) && chosen[ranked[best][cursor[best]]] {
			cursor[best]++
		}
		if cursor[best] == len(ranked[best]) {
			continue
		}
		add(ranked[best][cursor[best]])
		taken[best]++
	}
	sel.Taken = taken
	if len(sel.IDs) < target {
		for _, id := range fillOrder(corpora, n) {
			if len(sel.IDs) == target {
				break
			}
			if !chosen[id] {
				add(id)
				sel.Fill++
			}
		}
	}
	return sel, nil
}

// byFrequency returns the ids with a non-zero count, most frequent first,
// ties by id.
func byFrequency(counts []uint64) []int32 {
	var ids []int32
	for id, c := range counts {
		if c > 0 {
			ids = append(ids, int32(id))
		}
	}
	sort.Slice(ids, func(a, b int) bool {
		ca, cb := counts[ids[a]], counts[ids[b]]
		return ca > cb || (ca == cb && ids[a] < ids[b])
	})
	return ids
}

// fillOrder ranks every id by its frequency summed over the corpora, each
// corpus weighted by 1/its total, then by id.
func fillOrder(corpora []Corpus, n int) []int32 {
	score := make([]float64, n)
	for _, c := range corpora {
		if c.Counts.Tokens == 0 {
			continue
		}
		w := 1 / float64(c.Counts.Tokens)
		for id, v := range c.Counts.Counts {
			score[id] += float64(float64(v) * w)
		}
	}
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i)
	}
	sort.Slice(ids, func(a, b int) bool {
		sa, sb := score[ids[a]], score[ids[b]]
		return sa > sb || (sa == sb && ids[a] < ids[b])
	})
	return ids
}

// Missing is one token a head cannot produce, with how often a text used it.
type Missing struct {
	ID    int32  `json:"id"`
	Count uint64 `json:"count"`
	Text  string `json:"text"`
}

// CoverageReport says how much of a text a list of ids covers.
type CoverageReport struct {
	// Tokens is the number of tokens of the text (no BOS/EOS).
	Tokens uint64 `json:"tokens"`
	// Misses is the number of those tokens not in the list.
	Misses uint64 `json:"misses"`
	// Share is Misses/Tokens (0 for an empty text).
	Share float64 `json:"share"`
	// Top lists the most frequent missing tokens, most frequent first.
	Top []Missing `json:"top_missing"`
}

// Coverage compares a text's token counts with a list of ids and lists the
// top most frequent tokens the list lacks.
func Coverage(t *Tokenizer, ids []int32, c *Counts, top int) CoverageReport {
	in := make([]bool, len(c.Counts))
	for _, id := range ids {
		if int(id) < len(in) && id >= 0 {
			in[id] = true
		}
	}
	missing := make([]uint64, len(c.Counts))
	rep := CoverageReport{Tokens: c.Tokens}
	for id, v := range c.Counts {
		if !in[id] {
			missing[id] = v
			rep.Misses += v
		}
	}
	if rep.Tokens > 0 {
		rep.Share = float64(rep.Misses) / float64(rep.Tokens)
	}
	for _, id := range byFrequency(missing) {
		if len(rep.Top) == top {
			break
		}
		rep.Top = append(rep.Top, Missing{ID: id, Count: missing[id], Text: string(t.TokenToPiece(id, true))})
	}
	return rep
}
