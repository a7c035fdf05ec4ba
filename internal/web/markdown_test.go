package web

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// worstInputs are the Markdown inputs goldmark is slowest or hungriest
// on, each of about n bytes: those that pass a bound of tooHard by far
// (shown as text) and those just within every bound (rendered).
func worstInputs(n int) []struct{ name, src string } {
	fill := func(s string) string {
		if len(s) >= n {
			return s[:n]
		}
		return s + strings.Repeat("plain words fill the rest of the report. ", (n-len(s))/41)
	}
	lines := func(k int, f func(i int) string) string {
		var b strings.Builder
		for i := range k {
			b.WriteString(f(i))
		}
		return b.String()
	}
	return []struct{ name, src string }{
		// Past a bound: shown as text.
		{"blockquotes", strings.Repeat(">", n)},
		{"blockquotes_spaced", strings.Repeat("> ", n/2)},
		{"ordered_lists", strings.Repeat("1. ", n/3)},
		{"indented_lists", fill(lines(n/1000, func(i int) string { return strings.Repeat("  ", i) + "- x\n" }))},
		{"brackets", strings.Repeat("[", n)},
		{"image_brackets", strings.Repeat("![", n/2)},
		{"emphasis_runs", strings.Repeat("*a**a***", n/8)},
		{"unpaired_emphasis", strings.Repeat("_a*", n/3)},
		{"link_destinations", strings.Repeat("[a](", n/4)},
		{"link_refs", fill(lines(n/40, func(i int) string { return fmt.Sprintf("[r%d]: http://x/%d\n", i, i) }) + lines(n/20, func(i int) string { return fmt.Sprintf("[r%d] ", i) }))},
		{"table", "|a|b|\n|-|-|\n" + strings.Repeat("|x|y|\n", n/6)},
		{"angle_brackets", strings.Repeat("<", n)},
		// Just within every bound: rendered.
		{"depth_32", fill(strings.Repeat(strings.Repeat(">", 32)+" x\n", 1800))},
		{"depth_16_spaced", fill(strings.Repeat(strings.Repeat("> ", 16)+"x\n", 2300))},
		{"nested_lists_16", fill(strings.Repeat(lines(16, func(i int) string { return strings.Repeat("  ", i) + "- x\n" }), 300))},
		{"brackets_59k", fill(strings.Repeat("[", 59_000))},
		{"unpaired_emphasis_3900", fill(strings.Repeat(strings.Repeat("_a*", 1300)+"\n\n", 19))},
		{"link_scan", fill(strings.Repeat(strings.Repeat("a](", 4600)+"\n\n", 6))},
		{"title_scan", fill(strings.Repeat(strings.Repeat("[a](x \"", 3000)+"\n\n", 6))},
		{"table_14k_rows", fill("|a|b|\n|-|-|\n" + strings.Repeat("|x|y|\n", 14_000))},
		{"link_refs_11k", fill(lines(11_000, func(i int) string { return fmt.Sprintf("[r%d]: http://x/%d\n", i, i) }) + lines(11_000, func(i int) string { return fmt.Sprintf("[r%d] ", i) }))},
	}
}

// BenchmarkRender renders each worst input of 1 MiB (the default bound)
// as the report page does. go test -bench Render -benchmem ./internal/web
func BenchmarkRender(b *testing.B) {
	m := newMarkdown(0)
	for _, in := range worstInputs(DefaultMaxMarkdown) {
		b.Run(in.name, func(b *testing.B) {
			src := []byte(in.src)
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				m.render(context.Background(), src, "")
			}
		})
	}
}

// TestRenderBounded: every worst input of 1 MiB allocates at most 64 MiB
// in all (runtime.MemStats.TotalAlloc, not a timing), the inputs past a
// bound are shown as text with a note saying which, and the rest render.
func TestRenderBounded(t *testing.T) {
	m := newMarkdown(0)
	for _, in := range worstInputs(DefaultMaxMarkdown) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out := string(m.render(context.Background(), []byte(in.src), ""))
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("%s: allocated %d MiB, over 64 MiB", in.name, alloc>>20)
		}
		asText := strings.Contains(out, "Shown as text, not rendered: ")
		if within := slices.Contains(strings.Fields("depth_32 depth_16_spaced nested_lists_16 brackets_59k unpaired_emphasis_3900 link_scan title_scan table_14k_rows link_refs_11k"), in.name); asText == within {
			t.Errorf("%s: shown as text %v, want %v: %.200s", in.name, asText, !within, out)
		}
	}
}

// TestRenderLimit: past the limit, the rest is shown as escaped text
// after a note; nothing is rendered for a client that has gone.
func TestRenderLimit(t *testing.T) {
	m := newMarkdown(64)
	src := "# Title\n\n" + strings.Repeat("word ", 10) + "\n\n<b>**rest**</b>\n"
	out := string(m.render(context.Background(), []byte(src), ""))
	if !strings.Contains(out, "<h1") || !strings.Contains(out, "Only the first 61 bytes are rendered; the other 16 follow as text") ||
		!strings.Contains(out, "&lt;b&gt;**rest**&lt;/b&gt;") || strings.Contains(out, "<strong>") {
		t.Errorf("render past the limit:\n%s", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if out := m.render(ctx, []byte(src), ""); out != "" {
		t.Errorf("rendered for a client that has gone: %s", out)
	}
}
