package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/jsonlines"
	"github.com/specd-dev/specd/tools/train/corpus"
)

// publicSource is one entry of public.yaml: a repository at a pinned
// commit, the files to read and how to turn them into records.
type publicSource struct {
	Name     string            `yaml:"name"` // the source (corpus.SourceOf) and the output file's name
	Heldout  bool              `yaml:"heldout"`
	Repo     string            `yaml:"repo"` // owner/name
	Commit   string            `yaml:"commit"`
	Licence  string            `yaml:"licence"`
	Label    string            `yaml:"label"`
	Category string            `yaml:"category"`
	Format   string            `yaml:"format"` // markdown | cyberseceval | jailbreakbench | csv | lines | json_strings | spikee
	Files    []string          `yaml:"files"`  // path.Match patterns over the commit's files
	Lang     string            `yaml:"lang"`
	LangFrom string            `yaml:"lang_from"`
	LangMap  map[string]string `yaml:"lang_map"`
	PerFile  int               `yaml:"per_file"` // most records taken from one file, evenly spaced
	Code     bool              `yaml:"code"`
	Variants []string          `yaml:"variants"`
	Column   string            `yaml:"column"` // csv: the column holding the text
	Key      string            `yaml:"key"`    // json_strings: the key of the list of texts
	// NotInHeldout drops a record that shares a run of shingleWords words
	// with a text of the held-out group (the same template or prompt
	// published twice), so the held-out group stays unseen.
	NotInHeldout bool `yaml:"not_in_heldout"`
}

// shingleWords is the length of the word runs NotInHeldout compares.
const shingleWords = 10

// extractPublic converts every source of the manifest at manifest (or,
// when only is not empty, the sources named there), read from the git
// repositories under dir (dir/owner+name, a clone or a git directory),
// into dataDir/NAME.jsonl, or heldoutDir/NAME.jsonl for the held-out
// group; sources of one name go into one file.
func extractPublic(manifest, dir, dataDir, heldoutDir string, only []string) error {
	raw, err := os.ReadFile(manifest)
	if err != nil {
		return err
	}
	var m struct {
		Sources []publicSource `yaml:"sources"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("%s: %w", manifest, err)
	}
	out := map[string][]corpus.Record{}
	var order []string
	var seen map[string]bool
	for _, s := range m.Sources {
		if len(only) > 0 && !slices.Contains(only, s.Name) {
			continue
		}
		recs, err := s.extract(dir)
		if err != nil {
			return fmt.Errorf("%s (%s): %w", s.Name, s.Repo, err)
		}
		if s.NotInHeldout {
			if seen == nil {
				if seen, err = heldoutShingles(heldoutDir); err != nil {
					return err
				}
			}
			kept := recs[:0]
			for _, r := range recs {
				if !sharesShingle(r.Text, seen) {
					kept = append(kept, r)
				}
			}
			fmt.Printf("%s (%s): %d records, %d dropped as in the held-out group\n", s.Name, s.Repo, len(kept), len(recs)-len(kept))
			recs = kept
		}
		p := filepath.Join(dataDir, s.Name+".jsonl")
		if s.Heldout {
			p = filepath.Join(heldoutDir, s.Name+".jsonl")
		}
		if _, ok := out[p]; !ok {
			order = append(order, p)
		}
		out[p] = append(out[p], recs...)
	}
	for _, p := range order {
		if err := writeJSONL(p, out[p]); err != nil {
			return err
		}
	}
	return nil
}

// shingles returns the runs of shingleWords words of text, lowered and
// cut at anything but letters and digits.
func shingles(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var out []string
	for i := 0; i+shingleWords <= len(words); i++ {
		out = append(out, strings.Join(words[i:i+shingleWords], " "))
	}
	return out
}

// heldoutShingles returns the set of shingles of every text in the
// *.jsonl files of dir.
func heldoutShingles(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range files {
		recs, err := corpus.ReadJSONL(f)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			for _, sh := range shingles(r.Text) {
				seen[sh] = true
			}
		}
	}
	return seen, nil
}

// sharesShingle reports whether text has a shingle in seen.
func sharesShingle(text string, seen map[string]bool) bool {
	for _, sh := range shingles(text) {
		if seen[sh] {
			return true
		}
	}
	return false
}

// git runs git on the repository of s under dir.
func (s publicSource) git(dir string, args ...string) ([]byte, error) {
	base := filepath.Join(dir, strings.ReplaceAll(s.Repo, "/", "+"))
	gitDir := base
	for _, c := range []string{filepath.Join(base, ".git"), filepath.Join(base, "repo")} {
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			gitDir = c
			break
		}
	}
	cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return b, nil
}

// extract returns the records of one source.
func (s publicSource) extract(dir string) ([]corpus.Record, error) {
	list, err := s.git(dir, "ls-tree", "-r", "--name-only", s.Commit)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		for _, p := range s.Files {
			if ok, _ := path.Match(p, f); ok {
				files = append(files, f)
				break
			}
		}
	}
	slices.Sort(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no file matches %v", s.Files)
	}
	var langRE *regexp.Regexp
	if s.LangFrom != "" {
		if langRE, err = regexp.Compile(s.LangFrom); err != nil {
			return nil, err
		}
	}
	var out []corpus.Record
	for _, f := range files {
		body, err := s.git(dir, "show", s.Commit+":"+f)
		if err != nil {
			return nil, err
		}
		lang := s.Lang
		if langRE != nil {
			if m := langRE.FindStringSubmatch(f); m != nil {
				lang = m[1]
				if l, ok := s.LangMap[lang]; ok {
					lang = l
				}
			}
		}
		recs, err := s.fileRecords(dir, f, body, lang)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// recordOf is a record of text with its category, language and group,
// labelled and sourced as its file's source says.
type recordOf func(text, category, lang, group string) corpus.Record

// fileRecords returns the records of file f, whose content is body, read
// in the source's format; lang is the file's language.
func (s publicSource) fileRecords(dir, f string, body []byte, lang string) ([]corpus.Record, error) {
	src := s.Repo + "/" + f + " (" + s.Licence + ")"
	rec := func(text, category, lang, group string) corpus.Record {
		return corpus.Record{
			Text:     text,
			Label:    s.Label,
			Category: category,
			Lang:     lang,
			Source:   s.Name + " " + src,
			Group:    group,
		}
	}
	var out []corpus.Record
	switch s.Format {
	case "markdown":
		for _, p := range spaced(markdownParagraphs(string(body), s.Code), s.PerFile) {
			cat := s.Category
			if p.code {
				cat += "_code"
			}
			out = append(out, rec(p.text, cat, lang, s.Name+":"+f))
		}
	case "cyberseceval":
		return s.cybersecevalRecords(f, body, rec)
	case "jailbreakbench":
		return s.jailbreakRecords(f, body, rec)
	case "csv":
		return s.csvRecords(f, body, lang, rec)
	case "lines":
		for i, l := range strings.Split(string(body), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, rec(l, s.Category, lang, fmt.Sprintf("%s:%s:%d", s.Name, f, i+1)))
			}
		}
	case "json_strings":
		var doc map[string][]string
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for i, t := range doc[s.Key] {
			out = append(out, rec(t, s.Category, lang, fmt.Sprintf("%s:%s:%s:%d", s.Name, f, s.Key, i)))
		}
	case "spikee":
		recs, err := s.spikee(dir, f, body)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			l := lang
			if r.Lang != "" {
				l = r.Lang
			}
			out = append(out, rec(r.Text, r.Category, l, r.Group))
		}
	default:
		return nil, fmt.Errorf("unknown format %q", s.Format)
	}
	return out, nil
}

// cybersecevalRecords returns the indirect tests, and the direct ones of
// the source's variants, of CyberSecEval's JSON file f.
func (s publicSource) cybersecevalRecords(f string, body []byte, rec recordOf) ([]corpus.Record, error) {
	var tests []struct {
		ID       int    `json:"prompt_id"`
		Input    string `json:"user_input"`
		Variant  string `json:"injection_variant"`
		Type     string `json:"injection_type"`
		Language string `json:"speaking_language"`
	}
	if err := json.Unmarshal(body, &tests); err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	var out []corpus.Record
	for _, t := range tests {
		if t.Type != "indirect" && !slices.Contains(s.Variants, t.Variant) {
			continue
		}
		out = append(out, rec(t.Input, "cyberseceval_"+t.Type+"_"+t.Variant, languageCode(t.Language), fmt.Sprintf("%s:%s:%d", s.Name, f, t.ID)))
	}
	return out, nil
}

// jailbreakRecords returns the prompts of JailbreakBench's artifact file
// f that are not empty.
func (s publicSource) jailbreakRecords(f string, body []byte, rec recordOf) ([]corpus.Record, error) {
	var a struct {
		Parameters struct {
			Method string `json:"method"`
		} `json:"parameters"`
		Jailbreaks []struct {
			Prompt   *string `json:"prompt"`
			Behavior string  `json:"behavior"`
		} `json:"jailbreaks"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	var out []corpus.Record
	for _, j := range a.Jailbreaks {
		if j.Prompt == nil || strings.TrimSpace(*j.Prompt) == "" {
			continue
		}
		out = append(out, rec(*j.Prompt, "jailbreak_"+strings.ToLower(a.Parameters.Method), "en", s.Name+":"+a.Parameters.Method+":"+j.Behavior))
	}
	return out, nil
}

// csvRecords returns the cells of the source's column of CSV file f
// that are not blank, in language lang.
func (s publicSource) csvRecords(f string, body []byte, lang string, rec recordOf) ([]corpus.Record, error) {
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	col := slices.Index(rows[0], s.Column)
	if col < 0 {
		return nil, fmt.Errorf("%s: no column %q in %v", f, s.Column, rows[0])
	}
	var out []corpus.Record
	for i, row := range rows[1:] {
		if col < len(row) && strings.TrimSpace(row[col]) != "" {
			out = append(out, rec(row[col], s.Category, lang, fmt.Sprintf("%s:%s:%d", s.Name, f, i)))
		}
	}
	return out, nil
}

// spikee returns the attacks of one of spikee's seed folders, whose
// jailbreaks.jsonl is body (at f): each jailbreak template with its
// <INSTRUCTION> filled by an instruction of the folder's
// instructions.jsonl, the instructions in rotation, and each of the
// folder's standalone_attacks.jsonl as it is. Records carry only Text,
// Category, Group and, when the template names one, Lang.
func (s publicSource) spikee(dir, f string, body []byte) ([]corpus.Record, error) {
	type line struct {
		ID          string `json:"id"`
		Type        string `json:"jailbreak_type"`
		Text        string `json:"text"`
		Instruction string `json:"instruction"`
		Lang        string `json:"lang"`
	}
	read := func(name string, b []byte) ([]line, error) {
		return jsonlines.Decode[line](bytes.NewReader(b), name, false, nil)
	}
	jbs, err := read(f, body)
	if err != nil {
		return nil, err
	}
	folder := path.Dir(f)
	var ins, alone []line
	if b, err := s.git(dir, "show", s.Commit+":"+folder+"/instructions.jsonl"); err == nil {
		if ins, err = read(folder+"/instructions.jsonl", b); err != nil {
			return nil, err
		}
	}
	if b, err := s.git(dir, "show", s.Commit+":"+folder+"/standalone_attacks.jsonl"); err == nil {
		if alone, err = read(folder+"/standalone_attacks.jsonl", b); err != nil {
			return nil, err
		}
	}
	var out []corpus.Record
	if len(ins) > 0 {
		for i, j := range jbs {
			t := strings.ReplaceAll(j.Text, "<INSTRUCTION>", ins[i%len(ins)].Instruction)
			out = append(out, corpus.Record{Text: t, Category: "spikee_" + j.Type, Lang: j.Lang, Group: s.Name + ":" + j.ID})
		}
	}
	for _, a := range alone {
		out = append(out, corpus.Record{Text: a.Text, Category: "spikee_standalone", Group: s.Name + ":" + a.ID})
	}
	return out, nil
}

// languageCode maps CyberSecEval's language names to the codes the other
// records use.
func languageCode(name string) string {
	codes := map[string]string{"English": "en", "Hindi": "hi", "Bengali": "bn", "Turkish": "tr", "Arabic": "ar", "Italian": "it",
		"Spanish": "es", "Vietnamese": "vi", "French": "fr", "Russian": "ru", "Filipino/Tagalog": "tl", "Portuguese": "pt",
		"Japanese": "ja", "Korean": "ko", "German": "de", "Chinese": "zh", "Indonesian": "id", "Thai": "th"}
	if c, ok := codes[name]; ok {
		return c
	}
	return strings.ToLower(name)
}

// paragraph is one text taken from a Markdown file.
type paragraph struct {
	text string
	code bool
}

// spaced returns at most n of ps, evenly spaced (all when n is 0).
func spaced(ps []paragraph, n int) []paragraph {
	if n <= 0 || len(ps) <= n {
		return ps
	}
	out := make([]paragraph, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, ps[i*len(ps)/n])
	}
	return out
}

var (
	// componentRE is a line of MDX or HTML markup: a tag opening or
	// closing at the start of the line, or an import/export.
	componentRE = regexp.MustCompile(`^(?:</?[A-Za-z][\w.-]*(?:\s[^>]*)?/?>?\s*$|</?[A-Z]\w*|import\s|export\s|<!--|-->|\{/\*)`)
	listItemRE  = regexp.MustCompile(`^(?:[-*+]|\d+[.)])\s+`)
	// mdLinkRE is a Markdown link or a bare URL: a paragraph that is
	// little else (a reference list entry) is skipped.
	mdLinkRE = regexp.MustCompile(`!?\[[^\]]*\]\([^)]*\)|https?://\S+`)
	// templateRE is what makes a code block a chat payload or template:
	// JSON with a role, a chat-template marker or a template placeholder.
	templateRE = regexp.MustCompile(`"role"\s*:|<\|[a-z_]+\|>|\[/?INST\]|\{\{|\{%|<s>|</s>|<start_of_turn>|\bSYSTEM\b|\bTEMPLATE\b`)
)

// markdownParagraphs returns the prose paragraphs and list items of a
// Markdown or MDX document (40–700 bytes each, at least 30 of them
// outside links and URLs, lines joined by spaces):
// front matter, code blocks, headings, tables, block quotes, HTML and MDX
// component lines and HTML comments are skipped. With code, a code block
// of at most 600 bytes that holds a chat payload or template (templateRE)
// is kept as one text too.
func markdownParagraphs(doc string, code bool) []paragraph {
	var out []paragraph
	var para []string
	flush := func() {
		t := strings.TrimSpace(strings.Join(para, " "))
		para = nil
		if len(t) >= 40 && len(t) <= 700 && len(mdLinkRE.ReplaceAllString(t, "")) >= 30 {
			out = append(out, paragraph{text: t})
		}
	}
	lines := strings.Split(strings.ReplaceAll(doc, "\r\n", "\n"), "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "---" {
				lines = lines[i+1:]
				break
			}
		}
	}
	inComment := false
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if inComment {
			if strings.Contains(l, "-->") {
				inComment = false
			}
			continue
		}
		if strings.HasPrefix(l, "<!--") && !strings.Contains(l, "-->") {
			flush()
			inComment = true
			continue
		}
		if fence := fenceOf(l); fence != "" {
			flush()
			var block []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				block = append(block, lines[i])
			}
			b := strings.TrimSpace(strings.Join(block, "\n"))
			if code && len(b) >= 20 && len(b) <= 600 && templateRE.MatchString(b) {
				out = append(out, paragraph{text: b, code: true})
			}
			continue
		}
		switch {
		case l == "":
			flush()
		case strings.HasPrefix(l, "#"), strings.HasPrefix(l, "|"), strings.HasPrefix(l, ">"),
			strings.HasPrefix(l, "!["), strings.HasPrefix(l, "[!"), componentRE.MatchString(l),
			strings.HasPrefix(l, "---"), strings.HasPrefix(l, "==="), strings.HasPrefix(l, "[^"):
			flush()
		case listItemRE.MatchString(l):
			flush()
			para = append(para, listItemRE.ReplaceAllString(l, ""))
		default:
			para = append(para, l)
		}
	}
	flush()
	return out
}

// fenceOf returns the fence a line opens (``` or ~~~, with any info
// string), or "".
func fenceOf(l string) string {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(l, f) {
			return f
		}
	}
	return ""
}
