package web

import (
	"bytes"
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
}

func newMarkdown() *markdown {
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
	return &markdown{md: md, policy: p}
}

// render returns src as sanitised HTML. With mark (a report's spotlight
// mark, twelve hex digits) the spotlight markers ⟦mark⟧ and ⟦/mark⟧ are
// set off so that they stay visible (docs/contract.md#spotlighting), and
// code spans that cite path:line are marked as citations.
func (m *markdown) render(src []byte, mark string) template.HTML {
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
