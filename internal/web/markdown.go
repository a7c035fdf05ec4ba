package web

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"

	"github.com/specd-dev/specd/specs"
)

// markdown renders the Markdown of reports, OVERVIEW.md and REQUEST.md,
// which hold untrusted text, as inert HTML (docs/web.md#safety): goldmark
// drops raw HTML and javascript:, vbscript:, file: and data: links, an
// image is shown as its text and address and never loaded, and
// bluemonday then keeps only the elements and attributes Markdown makes
// (links to http, https and mailto only). Nothing rendered can run a
// script or make the browser fetch anything.
type markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
	limit  int // bytes rendered at most; the rest is shown as text
}

// newMarkdown renders at most limit bytes of Markdown (≤ 0:
// DefaultMaxMarkdown).
func newMarkdown(limit int) *markdown {
	if limit <= 0 {
		limit = DefaultMaxMarkdown
	}
	md := goldmark.New(
		goldmark.WithExtensions(
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough, extension.Linkify, extension.TaskList,
		),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(imageAsText{}, 100))),
	)
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code",
		"em", "strong", "del", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "span")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^(language-[\w+-]+|image-off)$`)).OnElements("code", "span")
	p.AllowAttrs("title").OnElements("span")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(false)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return &markdown{md: md, policy: p, limit: limit}
}

// render returns src as sanitised HTML. With mark (a report's spotlight
// mark, twelve hex digits) the spotlight markers ⟦mark⟧ and ⟦/mark⟧ are
// set off so that they stay visible, and
// code spans that cite path:line are marked as citations.
//
// Rendering is bounded (docs/web.md#limits): at most m.limit bytes are
// rendered, cut at a line end, and the rest is shown as escaped text
// after a note; Markdown that goldmark would take quadratic time or much
// memory on (bounds) is shown whole as escaped text, with a note saying
// which bound it passed. Nothing is rendered once ctx has ended (the
// client went away): "" is returned.
func (m *markdown) render(ctx context.Context, src []byte, mark string) template.HTML {
	if ctx.Err() != nil {
		return ""
	}
	head, rest := src, []byte(nil)
	if len(src) > m.limit {
		cut := bytes.LastIndexByte(src[:m.limit], '\n') + 1
		if cut == 0 {
			cut = m.limit
		}
		head, rest = src[:cut], src[cut:]
	}
	if why := tooHard(head); why != "" {
		return asText(src, fmt.Sprintf("Shown as text, not rendered: %s (docs/web.md#limits).", why))
	}
	out := m.markdown(head, mark)
	if len(rest) > 0 {
		out += asText(rest, fmt.Sprintf("Only the first %d bytes are rendered; the other %d follow as text (docs/web.md#limits).", len(head), len(rest)))
	}
	return out
}

// markdown renders src, which tooHard passed, as render does.
func (m *markdown) markdown(src []byte, mark string) template.HTML {
	var buf bytes.Buffer
	if err := m.md.Convert(src, &buf); err != nil {
		// goldmark fails only when writing fails, which a buffer does not.
		return template.HTML(template.HTMLEscapeString(string(src)))
	}
	out := m.policy.SanitizeBytes(buf.Bytes())
	out = citationRE.ReplaceAll(out, []byte(`<code class="cite" title="citation: path:line in the project">$1</code>`))
	if markRE.MatchString(mark) {
		for _, mk := range []string{specs.SpotlightOpen(mark), specs.SpotlightClose(mark)} {
			out = bytes.ReplaceAll(out, []byte(mk), []byte(`<span class="spot" title="spotlight mark: the text between the marks is quoted from fetched sources, data and never instructions">`+mk+`</span>`))
		}
	}
	return template.HTML(out) // sanitised above; the replacements add only fixed markup around fixed text
}

// asText is src as escaped preformatted text after a note; past
// maxText bytes (cut at a line end) the note says how many are left out.
func asText(src []byte, note string) template.HTML {
	if len(src) > maxText {
		cut := bytes.LastIndexByte(src[:maxText], '\n') + 1
		if cut == 0 {
			cut = maxText
		}
		note += fmt.Sprintf(" The last %d bytes are not shown: read the file itself.", len(src)-cut)
		src = src[:cut]
	}
	var b strings.Builder
	b.Grow(len(src) + len(src)/8 + 256)
	b.WriteString(`<p class="md-limit">`)
	template.HTMLEscape(&b, []byte(note))
	b.WriteString(`</p><pre class="md-text">`)
	template.HTMLEscape(&b, src)
	b.WriteString(`</pre>`)
	return template.HTML(b.String())
}

// Bounds of the Markdown rendered (docs/web.md#limits), measured with
// BenchmarkRender: goldmark takes time quadratic in the nesting of
// blockquotes and lists, in a paragraph's emphasis delimiters that do not
// pair, and in a paragraph's length times its unclosed link destinations
// and titles; and 150 to 650 bytes of memory per nesting level, markup
// character and line. Reports stay far within these bounds.
const (
	// DefaultMaxMarkdown is Options.MaxMarkdown's default: 1 MiB.
	DefaultMaxMarkdown = 1 << 20
	// maxText is the most bytes shown as text instead of Markdown, so
	// that the page of an 8 MiB report of "<" (32 MiB escaped) stays small.
	maxText = 2 << 20
	// maxDepth is the most blockquote and list markers, and pairs of
	// indenting spaces, that open a line.
	maxDepth = 32
	// maxWeight bounds the nodes goldmark makes: the lines, plus the
	// nesting of each, plus the markup characters ([ ] ( ! < ` | * _ ~).
	maxWeight = 60_000
	// maxDelims is the most emphasis delimiters (* _ ~) in a paragraph
	// (lines between blank lines).
	maxDelims = 4_000
	// maxLinkScan bounds a paragraph's length times its "](" and "][":
	// goldmark may scan the rest of the paragraph for each.
	maxLinkScan = 1 << 26
)

// tooHard says why src passes one of the bounds above, or "". It reads
// src once.
func tooHard(src []byte) string {
	weight, delims, para, links := 0, 0, 0, 0
	for line := range bytes.Lines(src) {
		d := depth(line)
		if d > maxDepth {
			return fmt.Sprintf("a line nests %d blockquotes, lists or indents, over %d", d, maxDepth)
		}
		weight += 1 + d
		if len(bytes.TrimSpace(line)) == 0 {
			delims, para, links = 0, 0, 0
			continue
		}
		for _, c := range line {
			switch c {
			case '*', '_', '~':
				delims++
				weight++
			case '[', ']', '(', '!', '<', '`', '|':
				weight++
			}
		}
		if delims > maxDelims {
			return fmt.Sprintf("a paragraph holds %d emphasis delimiters (* _ ~), over %d", delims, maxDelims)
		}
		para += len(line)
		links += bytes.Count(line, []byte("](")) + bytes.Count(line, []byte("]["))
		if para*links > maxLinkScan {
			return fmt.Sprintf("a paragraph of %d bytes holds %d link openings, over %d bytes × openings", para, links, maxLinkScan)
		}
	}
	if weight > maxWeight {
		return fmt.Sprintf("%d lines, nesting levels and markup characters, over %d", weight, maxWeight)
	}
	return ""
}

// depth counts the container markers (>, list markers) that open line,
// and its indenting spaces in pairs (a tab is four spaces).
func depth(line []byte) int {
	markers, spaces := 0, 0
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ':
			spaces++
			i++
		case c == '\t':
			spaces += 4
			i++
		case c == '>':
			markers++
			i++
		case (c == '-' || c == '*' || c == '+') && i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '\t'):
			markers++
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j+1 >= len(line) || line[j] != '.' && line[j] != ')' || line[j+1] != ' ' && line[j+1] != '\t' {
				return markers + spaces/2
			}
			markers++
			i = j + 1
		default:
			return markers + spaces/2
		}
	}
	return markers + spaces/2
}

var (
	markRE = regexp.MustCompile(`^[0-9a-f]{12}$`)
	// citationRE matches a code span holding only path:line or
	// path:start-end, as findings cite code (docs/contract.md#structured-results).
	citationRE = regexp.MustCompile(`<code>([\w./@+-]+:\d+(?:-\d+)?)</code>`)
)

// imageAsText renders a Markdown image as "[image: alt — address]" in a
// span, so that a report can never make the browser fetch an image, from
// another host least of all.
type imageAsText struct{}

func (imageAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, func(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		n := node.(*ast.Image)
		var alt strings.Builder
		_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
			if t, ok := c.(*ast.Text); ok && entering {
				alt.Write(t.Segment.Value(source))
			}
			return ast.WalkContinue, nil
		})
		_, _ = w.WriteString(`<span class="image-off" title="images in reports are not loaded">[image: `)
		_, _ = w.Write(util.EscapeHTML([]byte(alt.String())))
		_, _ = w.WriteString(" — ")
		_, _ = w.Write(util.EscapeHTML(n.Destination))
		_, _ = w.WriteString("]</span>")
		return ast.WalkSkipChildren, nil
	})
}
