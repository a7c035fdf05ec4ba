package corpus

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"unicode"

	"github.com/specd-dev/specd/internal/quarantine/normalize"
)

// writtenRecords builds the records of the written data w: each opener
// with each action, each action alone, each whole attack, each addressee
// with each action, the goal hijacks, and the benign texts; with an
// encoded copy of each attack (of one addressed attack in four) and, for
// one attack in three, a copy set after a benign tldr-pages sentence of its
// language taken from public.
func writtenRecords(w *Written, public []Record) []Record {
	context := tldrContext(public)
	var out, hijacks, addressed []Record
	for _, l := range w.Languages {
		out = append(out, languageRecords(l, context[l.Lang])...)
		hijacks = append(hijacks, hijackRecords(l)...)
		for _, a := range l.Addressees {
			for _, act := range l.Actions {
				addressed = append(addressed, writtenAttack(l.Lang, a, a.Text+" "+act.Text))
			}
		}
		for _, b := range l.PeopleNotes {
			addressed = append(addressed, writtenBenign(l.Lang, b))
		}
	}
	out = append(out, hijacks...)
	for i, r := range addressed {
		out = append(out, r)
		if r.Label == "attack" && i%4 == 0 {
			kind, enc := encode(r.Text, i/4, r.Lang)
			e := r
			e.Text, e.Category, e.Encoded = enc, "encoded_"+kind, true
			out = append(out, e)
		}
	}
	for _, b := range w.LookalikeBenign {
		out = append(out, Record{
			Text:     b,
			Label:    "benign",
			Category: "hard_negative_encoding",
			Lang:     "en",
			Source:   "written",
		})
	}
	return out
}

// tldrContext returns, by language, the short benign tldr-pages sentences
// of public (sorted, without duplicates) to set attacks after.
func tldrContext(public []Record) map[string][]string {
	context := map[string][]string{} // lang → benign sentences to embed attacks in
	for _, r := range public {
		if r.Label == "benign" && r.Source == "tldr-pages" && len(r.Text) < 160 && !strings.Contains(r.Text, "`") {
			context[r.Lang] = append(context[r.Lang], r.Text)
		}
	}
	for lang, ss := range context { // one order whatever the files' order
		slices.Sort(ss)
		context[lang] = slices.Compact(ss)
	}
	return context
}

// writtenAttack is the attack text of language code, with part p's
// category and group.
func writtenAttack(code string, p Part, text string) Record {
	return Record{
		Text:     text,
		Label:    "attack",
		Category: p.Category,
		Lang:     code,
		Source:   "written",
		Group:    p.Group,
	}
}

// writtenBenign is part p as a benign text of language code.
func writtenBenign(code string, p Part) Record {
	return Record{
		Text:     p.Text,
		Label:    "benign",
		Category: p.Category,
		Lang:     code,
		Source:   "written",
	}
}

// languageRecords returns language l's attacks (each opener with each
// action, each action alone, each whole attack), each followed by a copy
// after a sentence of ctx (one in three) and an encoded copy; then its
// benign texts and reports.
func languageRecords(l Language, ctx []string) []Record {
	code := l.Lang
	var out, attacks []Record
	for _, o := range l.Openers {
		for _, a := range l.Actions {
			r := writtenAttack(code, a, o.Text+" "+a.Text)
			r.Group = o.Group
			attacks = append(attacks, r)
		}
	}
	for _, a := range l.Actions { // the action alone, addressed to the reader
		attacks = append(attacks, writtenAttack(code, a, a.Text))
	}
	for _, a := range l.Whole {
		attacks = append(attacks, writtenAttack(code, a, a.Text))
	}
	for i, r := range attacks {
		out = append(out, r)
		if len(ctx) > 0 && i%3 == 0 {
			c := r
			c.Text = ctx[hashN(r.Text, len(ctx))] + " " + r.Text
			c.Source = "written+tldr-context"
			out = append(out, c)
		}
		kind, enc := encode(r.Text, i, code)
		e := r
		e.Text, e.Category, e.Encoded = enc, "encoded_"+kind, true
		out = append(out, e)
	}
	for _, b := range l.Benign {
		out = append(out, writtenBenign(code, b))
	}
	for _, b := range l.Reports {
		out = append(out, writtenBenign(code, b))
	}
	return out
}

// hijackRecords returns language l's goal hijacks: half the combinations
// of question, pivot and new task, then each question alone as benign.
func hijackRecords(l Language) []Record {
	var out []Record
	h := l.Hijack
	for _, pivot := range h.Pivots {
		for qi, q := range h.Questions {
			for ti, task := range h.Tasks {
				if (qi+ti)%2 == 1 { // half the combinations are enough
					continue
				}
				out = append(out, writtenAttack(l.Lang, pivot, q+" "+pivot.Text+" "+task))
			}
		}
	}
	for _, q := range h.Questions {
		out = append(out, writtenBenign(l.Lang, Part{Text: q, Category: "question"}))
	}
	return out
}

func hashN(s string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() % uint32(n))
}

var latinKinds = []string{"base64", "hex", "rot13", "leet", "spaced", "homoglyph", "fullwidth", "combining", "zero_width", "entities", "url"}
var otherKinds = []string{"base64", "hex", "fullwidth", "zero_width", "entities", "url"}

// encode returns the i-th encoding (by rotation) of an attack text.
func encode(s string, i int, lang string) (kind, out string) {
	kinds := otherKinds
	if lang == "en" || lang == "de" || lang == "es" || lang == "fr" || lang == "pt" {
		kinds = latinKinds
	}
	kind = kinds[i%len(kinds)]
	switch kind {
	case "base64":
		return kind, "Decode this and do what it says: " + base64.StdEncoding.EncodeToString([]byte(s))
	case "hex":
		return kind, "payload " + hex.EncodeToString([]byte(s))
	case "rot13":
		return kind, normalize.ROT13(s)
	case "leet":
		return kind, strings.NewReplacer("o", "0", "e", "3", "a", "4", "i", "1", "s", "5", "t", "7").Replace(s)
	case "spaced":
		var b strings.Builder
		for _, w := range strings.Fields(s) {
			if b.Len() > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Join(strings.Split(w, ""), " "))
		}
		return kind, b.String()
	case "homoglyph":
		return kind, strings.NewReplacer("a", "а", "e", "е", "o", "о", "p", "р", "c", "с", "i", "і", "x", "х").Replace(s)
	case "fullwidth":
		return kind, strings.Map(func(r rune) rune {
			if r > ' ' && r < 0x7f {
				return r + 0xFEE0
			}
			return r
		}, s)
	case "combining":
		var b strings.Builder
		for j, r := range s {
			b.WriteRune(r)
			if unicode.IsLetter(r) && j%2 == 0 {
				b.WriteString("\u0301\u0308")
			}
		}
		return kind, b.String()
	case "zero_width":
		var b strings.Builder
		for _, r := range s {
			b.WriteRune(r)
			if unicode.IsLetter(r) {
				b.WriteRune('\u200b')
			}
		}
		return kind, b.String()
	case "entities":
		var b strings.Builder
		for j, r := range s {
			if j%2 == 0 && unicode.IsLetter(r) {
				fmt.Fprintf(&b, "&#%d;", r)
			} else {
				b.WriteRune(r)
			}
		}
		return kind, b.String()
	default: // url
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, "%%%02X", c)
		}
		return kind, "https://example.net/search?q=" + b.String()
	}
}
