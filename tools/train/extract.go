package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/specd-dev/specd/tools/train/corpus"
)

// tldrLangs maps a tldr-pages directory to a language code.
var tldrLangs = map[string]string{
	"pages": "en", "pages.de": "de", "pages.es": "es", "pages.fr": "fr",
	"pages.pt_BR": "pt", "pages.ru": "ru", "pages.zh": "zh", "pages.ja": "ja",
	"pages.ar": "ar", "pages.bn": "bn", "pages.hi": "hi", "pages.id": "id", "pages.it": "it",
	"pages.ko": "ko", "pages.th": "th", "pages.tr": "tr",
}

// extractTldr writes benign records from a tldr-pages checkout: for about
// 150 evenly spaced pages of common/ and linux/ (by name) per language,
// the page's description and each example's description with its command.
func extractTldr(root, out string) error {
	var recs []corpus.Record
	for _, dir := range slices.Sorted(maps.Keys(tldrLangs)) {
		lang := tldrLangs[dir]
		var pages []string
		for _, sub := range []string{"common", "linux"} {
			m, _ := filepath.Glob(filepath.Join(root, dir, sub, "*.md"))
			pages = append(pages, m...)
		}
		slices.Sort(pages)
		step := max(1, len(pages)/150)
		for i, p := range pages {
			if i%step != 0 {
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			var desc []string
			lines := strings.Split(string(data), "\n")
			for j, l := range lines {
				switch {
				case strings.HasPrefix(l, "> "):
					if !strings.Contains(l, "http") {
						desc = append(desc, strings.TrimPrefix(l, "> "))
					}
				case strings.HasPrefix(l, "- "):
					cmd := ""
					for _, n := range lines[j+1:] {
						if strings.HasPrefix(n, "`") {
							cmd = n
							break
						}
					}
					recs = append(recs, corpus.Record{Text: strings.TrimSuffix(strings.TrimPrefix(l, "- "), ":") + ": " + cmd,
						Label: "benign", Category: "command_docs", Lang: lang, Source: "tldr-pages", Group: rel})
				}
			}
			if len(desc) > 0 {
				recs = append(recs, corpus.Record{Text: strings.Join(desc, " "), Label: "benign", Category: "command_docs",
					Lang: lang, Source: "tldr-pages", Group: rel})
			}
		}
	}
	return writeJSONL(out, recs)
}

// extractReadmes writes benign records from the README.md files of a Go
// module cache whose module is under an MIT, BSD or Apache licence: up to
// 10 prose paragraphs of 40–600 bytes each, code blocks skipped.
func extractReadmes(cache, out string) error {
	var readmes []string
	err := filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "cache" || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "README.md" && strings.Count(strings.TrimPrefix(p, cache), "@") == 1 {
			readmes = append(readmes, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(readmes)
	var recs []corpus.Record
	for _, p := range readmes {
		modDir := p[:strings.Index(p, "@")]
		modDir = p[:len(modDir)+strings.Index(p[len(modDir):], "/")]
		lic := licence(modDir)
		if lic == "" {
			continue
		}
		rel, _ := filepath.Rel(cache, modDir)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n := 0
		inCode := false
		var para []string
		flush := func() {
			t := strings.TrimSpace(strings.Join(para, " "))
			para = nil
			if n < 6 && len(t) >= 40 && len(t) <= 600 && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "|") && !strings.HasPrefix(t, "<") {
				recs = append(recs, corpus.Record{Text: t, Label: "benign", Category: "readme", Lang: "en",
					Source: rel + " (" + lic + ")", Group: rel})
				n++
			}
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inCode = !inCode
				flush()
				continue
			}
			if inCode {
				continue
			}
			if strings.TrimSpace(l) == "" {
				flush()
				continue
			}
			para = append(para, strings.TrimSpace(l))
		}
		flush()
	}
	return writeJSONL(out, recs)
}

// licence names the module's licence from its LICENSE file, or "".
func licence(dir string) string {
	for _, name := range []string{"LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		t := string(data)
		switch {
		case strings.Contains(t, "Apache License"):
			return "Apache-2.0"
		case strings.Contains(t, "Permission is hereby granted, free of charge"):
			return "MIT"
		case strings.Contains(t, "Redistribution and use in source and binary forms"):
			return "BSD"
		}
	}
	return ""
}

func writeJSONL(path string, recs []corpus.Record) error {
	if err := corpus.WriteJSONL(path, recs); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d records\n", path, len(recs))
	return nil
}
