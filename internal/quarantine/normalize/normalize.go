// Package normalize turns untrusted text into the forms the prompt-injection
// detector judges (docs/decisions.md#prompt-injection-detector): one
// canonical form of the text, and one more form for each encoding found
// inside it, decoded. A text is judged by its worst form, so an instruction
// hidden in base64, hex, binary, Morse code, ROT13 or another Caesar shift,
// leetspeak, letter spacing, homoglyphs, fullwidth letters, combining marks,
// HTML entities, URL escapes or zero-width characters is judged as the
// plain instruction it hides.
//
// The canonical form is built in this order:
//
//  1. HTML character references (&lt; &#105;) and URL escapes (%69) are
//     decoded, and invisible characters (zero-width, bidi controls, Unicode
//     tag characters, soft hyphen, word joiners) are removed.
//  2. Unicode NFKC folds compatibility forms: fullwidth "ｉｇｎｏｒｅ",
//     mathematical "𝐢𝐠𝐧𝐨𝐫𝐞", ligatures.
//  3. Combining marks on Latin, Greek and Cyrillic letters are dropped
//     (accents and stacked "zalgo" marks alike: "ïğńöŕé" reads "ignore");
//     marks on other scripts (Japanese dakuten) are kept.
//  4. In a word that mixes ASCII letters with other letters, each other
//     letter whose Unicode confusable skeleton (UTS #39, confusables.txt,
//     through github.com/mtibben/confusables) is ASCII is replaced by it:
//     "іgnоrе" with Cyrillic і, о, е reads "ignore". Words wholly in one
//     script (Russian, Greek prose) are left alone.
//  5. The text is lowered and white space collapsed.
package normalize

import (
	"encoding/base64"
	"encoding/hex"
	"html"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// View is one form of a text: Kind is "text" for the canonical form, or
// the encoding that was decoded to get it ("base64", "hex", "binary",
// "morse", "rot13", "caesar", "spaced", "leet"). Text is normalised as the package doc describes.
type View struct {
	Kind string
	Text string
}

// maxViews bounds the decoded forms judged per text, so a text made of many
// encoded runs costs a bounded time.
const maxViews = 8

// Views returns the canonical form of s first, then one view per encoding
// decoded from it (at most maxViews in all). A blank s gives one empty
// view. Views never fails: what does not decode is left as it is.
func Views(s string) []View {
	base := prepare(s)
	out := []View{{Kind: "text", Text: fold(base)}}
	add := func(kind, t string) {
		if len(out) >= maxViews {
			return
		}
		t = fold(t)
		for _, v := range out {
			if v.Text == t {
				return
			}
		}
		out = append(out, View{Kind: kind, Text: t})
	}
	for _, d := range decodeRuns(base, 2) {
		add(d.Kind, d.Text)
	}
	if t, k, ok := caesar(base); ok {
		kind := "caesar"
		if k == 13 {
			kind = "rot13"
		}
		add(kind, t)
	}
	if t, ok := unspace(base); ok {
		add("spaced", t)
	}
	if t, ok := unleet(out[0].Text); ok {
		add("leet", t)
	}
	return out
}

// Text returns the canonical form of s (the first of Views).
func Text(s string) string { return fold(prepare(s)) }

// Cased returns s after steps 1 and 2 only (references and escapes
// decoded, invisible characters removed, NFKC): case, marks and line
// breaks are kept, for a rule that needs the case a text was written in
// (an upper-case banner such as "<SYSTEM MODE>").
func Cased(s string) string { return prepare(s) }

var (
	// invisibleRE: zero-width characters, bidi embeddings, overrides and
	// isolates, word joiners and invisible operators, soft hyphen, BOM,
	// Mongolian vowel separator, Arabic letter mark and the tag block.
	invisibleRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[\x{00AD}\x{034F}\x{061C}\x{180E}\x{200B}-\x{200F}\x{202A}-\x{202E}\x{2060}-\x{206F}\x{FEFF}\x{E0000}-\x{E007F}]`)
	})
	urlEscRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:%[0-9A-Fa-f]{2})+`) })
)

// prepare is steps 1 and 2: references and escapes decoded, invisible
// characters removed, NFKC. Case is kept (base64 needs it).
func prepare(s string) string {
	if strings.ContainsRune(s, '&') {
		s = html.UnescapeString(s)
	}
	if strings.ContainsRune(s, '%') {
		s = urlEscRE().ReplaceAllStringFunc(s, func(m string) string {
			d, err := url.PathUnescape(m)
			if err != nil || !utf8.ValidString(d) {
				return m
			}
			return d
		})
	}
	if !isASCII(s) {
		s = invisibleRE().ReplaceAllString(s, "")
		s = norm.NFKC.String(s)
	}
	return s
}

// fold is steps 3 to 5.
func fold(s string) string {
	s = stripMarks(s)
	s = foldConfusables(s)
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// stripMarks drops combining marks that follow a Latin, Greek or Cyrillic
// letter, and recomposes.
func stripMarks(s string) string {
	if isASCII(s) {
		return s
	}
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	var base rune
	changed := false
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) && (unicode.In(base, unicode.Latin, unicode.Greek, unicode.Cyrillic) || base < 0x80) {
			changed = true
			continue
		}
		if !unicode.Is(unicode.Mn, r) {
			base = r
		}
		b.WriteRune(r)
	}
	if !changed {
		return s
	}
	return norm.NFC.String(b.String())
}

// foldConfusables is step 4.
func foldConfusables(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	word := func(w string) {
		hasASCII, hasOther := false, false
		for _, r := range w {
			if r < 0x80 && unicode.IsLetter(r) {
				hasASCII = true
			} else if r >= 0x80 {
				hasOther = true
			}
		}
		if !hasASCII || !hasOther {
			b.WriteString(w)
			return
		}
		for _, r := range w {
			if r >= 0x80 {
				// Lowered first: the skeleton of Cyrillic І is "l", of і "i".
				if sk := confusables.Skeleton(string(unicode.ToLower(r))); isASCII(sk) {
					b.WriteString(strings.ToLower(sk))
					continue
				}
			}
			b.WriteRune(r)
		}
	}
	start := -1
	for i, r := range s {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		switch {
		case inWord && start < 0:
			start = i
		case !inWord && start >= 0:
			word(s[start:i])
			start = -1
		}
		if !inWord {
			b.WriteRune(r)
		}
	}
	if start >= 0 {
		word(s[start:])
	}
	return b.String()
}

// isASCII reports whether s is non-empty and all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return s != ""
}

var (
	base64RE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}`) })
	hexRE    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:\\x[0-9A-Fa-f]{2}){8,}|(?:0x[0-9A-Fa-f]{2}[ ,]*){8,}|\b[0-9A-Fa-f]{16,}\b|\b(?:[0-9A-Fa-f]{2}[ :]){7,}[0-9A-Fa-f]{2}\b`)
	})
)

// decodeRuns finds base64, hex, binary and Morse runs in s that decode to text and
// returns s with each run replaced by its decoding (one view per kind),
// looking depth levels deep (base64 inside base64).
func decodeRuns(s string, depth int) []View {
	var out []View
	if depth == 0 {
		return nil
	}
	for _, k := range []struct {
		kind   string
		re     *regexp.Regexp
		dec    func(string) (string, bool)
		likely func(string) bool
	}{{"base64", base64RE(), decodeBase64, likelyBase64}, {"hex", hexRE(), decodeHex, likelyHex},
		{"binary", binaryRE(), decodeBinary, likelyBinary}, {"morse", morseRE(), decodeMorse, likelyMorse}} {
		if !k.likely(s) {
			continue
		}
		found := false
		t := k.re.ReplaceAllStringFunc(s, func(m string) string {
			if d, ok := k.dec(m); ok {
				found = true
				return " " + d + " "
			}
			return m
		})
		if found {
			out = append(out, View{Kind: k.kind, Text: t})
			out = append(out, decodeRuns(t, depth-1)...)
		}
	}
	return out
}

// likelyBase64 reports whether s has a run of 16 base64 characters, the
// least base64RE matches: a fast filter before the regexp.
func likelyBase64(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-' {
			if run++; run >= 16 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// likelyHex reports whether s has what hexRE needs: \x or 0x escapes, or
// 16 hex digits in a row when single spaces and colons are skipped.
func likelyHex(s string) bool {
	if strings.Contains(s, `\x`) || strings.Contains(s, "0x") {
		return true
	}
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			if run++; run >= 16 {
				return true
			}
		case (c == ' ' || c == ':') && run > 0:
		default:
			run = 0
		}
	}
	return false
}

func decodeBase64(m string) (string, bool) {
	trim := strings.TrimRight(m, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if d, err := enc.DecodeString(trim); err == nil {
			return readable(d)
		}
	}
	return "", false
}

func decodeHex(m string) (string, bool) {
	m = strings.NewReplacer(`\x`, "", "0x", "", " ", "", ":", "", ",", "").Replace(m)
	d, err := hex.DecodeString(m)
	if err != nil {
		return "", false
	}
	return readable(d)
}

// readable accepts decoded bytes that are text: valid UTF-8, at least 8
// bytes, nearly all printable, and with a space or mostly letters of
// scripts written without spaces (Chinese, Japanese) — random bytes are
// seldom valid UTF-8 of that kind.
func readable(d []byte) (string, bool) {
	if len(d) < 8 || !utf8.Valid(d) {
		return "", false
	}
	s := string(d)
	n, bad, cjk, space := 0, 0, 0, false
	for _, r := range s {
		n++
		switch {
		case r == ' ':
			space = true
		case r == '\n' || r == '\t':
		case !unicode.IsPrint(r):
			bad++
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			cjk++
		}
	}
	if bad*20 > n || !space && cjk*2 < n {
		return "", false
	}
	return s, true
}

// commonWords are function words of English, German, Spanish, French and
// Portuguese; a text whose Caesar shift has clearly more of them than the
// text itself was shifted (caesar).
var commonWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and you your to of is are this that with for all now a in it be do not me what
		der die das und ist nicht du ich ein eine mit alle deine
		el la los las que y de en es tu todas con por para
		le les et est pas tu de des une toutes ta ton pour
		o os as que e de em um uma você todas seu sua com para`) {
		commonWords[w] = true
	}
}

// ROT13 rotates the ASCII letters of s by 13 places; other runes stay.
func ROT13(s string) string { return shift(s, 13) }

// shift rotates the ASCII letters of s by k places; other runes stay.
func shift(s string, k int) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+rune(k))%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+rune(k))%26
		}
		return r
	}, s)
}

// shiftedCommon maps each common word shifted by k (1–25) to the shifts
// that turn it back into a common word: one lookup per word of a text
// tells which Caesar shift, if any, makes it read as language.
var shiftedCommon = sync.OnceValue(func() map[string][]int {
	m := map[string][]int{}
	for w := range commonWords {
		for k := 1; k < 26; k++ {
			e := shift(w, k)
			m[e] = append(m[e], 26-k)
		}
	}
	return m
})

// caesar returns s with its ASCII letters shifted back by the Caesar shift
// (ROT13 is the shift 13) that makes clearly more of its words of two or
// more letters common words of English, German, Spanish, French or
// Portuguese than s has (at least three, and two more), and that shift;
// false when no shift does.
func caesar(s string) (string, int, bool) {
	var votes [26]int
	sc := shiftedCommon()
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) < 2 {
			continue // every letter is some shift of "a", "e", "o" or "y"
		}
		if commonWords[w] {
			votes[0]++
		}
		for _, k := range sc[w] {
			votes[k]++
		}
	}
	best := 0
	for k := 1; k < 26; k++ {
		if votes[k] > votes[best] {
			best = k
		}
	}
	if best == 0 || votes[best] < 3 || votes[best] < votes[0]+2 {
		return "", 0, false
	}
	return shift(s, best), best, true
}

var (
	// binaryRE is eight or more bytes written as groups of eight binary
	// digits, separated by spaces or not.
	binaryRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:[01]{8}\s?){8,}`) })
	// morseRE is Morse code: eight or more letters of dots and dashes,
	// separated by white space, with "/" or a gap of two or more spaces
	// (or a line break) between words. The run is found in the text
	// before its white space is collapsed (Views decodes prepare's form),
	// so the wider gap is still there.
	morseRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:[.-]{1,7}(?:\s+/\s+|\s+|$)){8,}`) })
	// morseGapRE is a gap between two words of Morse code.
	morseGapRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\s*/\s*|[ \t]*[\n\r][ \t\n\r]*|[ \t]{2,}`) })
)

// likelyBinary reports whether s has 64 binary digits in a row, white
// space skipped: a fast filter before binaryRE.
func likelyBinary(s string) bool { return longRun(s, "01", " \n\r\t", 64) }

// likelyMorse reports whether s has sixteen dots and dashes with only
// white space and slashes between them: a fast filter before morseRE.
func likelyMorse(s string) bool { return longRun(s, ".-", " /\n\r\t", 16) }

// longRun reports whether s has n bytes of in, in a row where only bytes
// of skip come between them.
func longRun(s, in, skip string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		switch {
		case strings.IndexByte(in, s[i]) >= 0:
			if run++; run >= n {
				return true
			}
		case strings.IndexByte(skip, s[i]) >= 0:
		default:
			run = 0
		}
	}
	return false
}

// decodeBinary decodes groups of eight binary digits into bytes, and
// accepts them when they are text (readable).
func decodeBinary(m string) (string, bool) {
	digits := strings.Join(strings.Fields(m), "")
	if len(digits)%8 != 0 {
		return "", false
	}
	d := make([]byte, 0, len(digits)/8)
	for i := 0; i < len(digits); i += 8 {
		var b byte
		for _, c := range digits[i : i+8] {
			b = b<<1 | byte(c-'0')
		}
		d = append(d, b)
	}
	return readable(d)
}

// morseCode is the International Morse code of letters, digits and
// punctuation.
var morseCode = map[string]rune{
	".-": 'a', "-...": 'b', "-.-.": 'c', "-..": 'd', ".": 'e', "..-.": 'f', "--.": 'g', "....": 'h',
	"..": 'i', ".---": 'j', "-.-": 'k', ".-..": 'l', "--": 'm', "-.": 'n', "---": 'o', ".--.": 'p',
	"--.-": 'q', ".-.": 'r', "...": 's', "-": 't', "..-": 'u', "...-": 'v', ".--": 'w', "-..-": 'x',
	"-.--": 'y', "--..": 'z', "-----": '0', ".----": '1', "..---": '2', "...--": '3', "....-": '4',
	".....": '5', "-....": '6', "--...": '7', "---..": '8', "----.": '9',
	".-.-.-": '.', "--..--": ',', "..--..": '?', "-.-.--": '!', "-..-.": '/', "---...": ':',
	"-.-.-.": ';', "-...-": '=', ".----.": '\'', ".-..-.": '"', "-....-": '-', ".--.-.": '@',
	"-.--.": '(', "-.--.-": ')', ".-...": '&', ".-.-.": '+', "..--.-": '_',
}

// decodeMorse decodes Morse code, "/", a line break or a wider gap
// between words, and accepts it when at most one group in ten is not in
// morseCode (such a group is dropped) and the result has a space.
func decodeMorse(m string) (string, bool) {
	var b strings.Builder
	groups, unknown := 0, 0
	for i, word := range morseGapRE().Split(m, -1) {
		if i > 0 {
			b.WriteByte(' ')
		}
		for _, g := range strings.Fields(word) {
			groups++
			r, ok := morseCode[g]
			if !ok {
				unknown++
				continue
			}
			b.WriteRune(r)
		}
	}
	t := strings.Join(strings.Fields(b.String()), " ")
	if unknown*10 > groups || !strings.Contains(t, " ") {
		return "", false
	}
	return t, true
}

// unspace joins runs of three or more single letters separated by one
// space, dot, dash, underscore or asterisk ("i g n o r e" reads "ignore");
// a wider gap between two such runs stays a space.
func unspace(s string) (string, bool) {
	rs := []rune(s)
	var b strings.Builder
	changed := false
	isSep := func(r rune) bool { return r == ' ' || r == '.' || r == '-' || r == '_' || r == '*' }
	for i := 0; i < len(rs); {
		// a run: letter (sep letter){3,}, with each letter standing alone
		j, n := i, 0
		if unicode.IsLetter(rs[i]) && (i == 0 || !unicode.IsLetter(rs[i-1])) {
			n = 1
			for j+2 < len(rs) && isSep(rs[j+1]) && unicode.IsLetter(rs[j+2]) && (j+3 >= len(rs) || !unicode.IsLetter(rs[j+3])) {
				j += 2
				n++
			}
		}
		if n >= 3 {
			for k := i; k <= j; k += 2 {
				b.WriteRune(rs[k])
			}
			changed = true
			i = j + 1
			continue
		}
		b.WriteRune(rs[i])
		i++
	}
	return b.String(), changed
}

var leetMap = map[rune]rune{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's', '|': 'l', '!': 'i'}

// unleet reads leetspeak ("1gn0r3 7h3 ru735" reads "ignore the rules")
// in a text with at least one word of 4 to 24 bytes that mixes two or
// more letters with two or more digits or symbols: then every word that
// mixes letters with them is read. A text without such a word ("Stripe
// v3", "mp4 files") has no leet form.
func unleet(s string) (string, bool) {
	words := strings.Fields(s)
	count := func(w string) (letters, leet int) {
		for _, r := range w {
			if unicode.IsLetter(r) {
				letters++
			} else if _, ok := leetMap[r]; ok {
				leet++
			}
		}
		return
	}
	strong := false
	for _, w := range words {
		if l, d := count(w); l >= 2 && d >= 2 && len(w) >= 4 && len(w) <= 24 {
			strong = true
			break
		}
	}
	if !strong {
		return "", false
	}
	for i, w := range words {
		if l, d := count(w); l == 0 || d == 0 || len(w) > 24 {
			continue
		}
		words[i] = strings.Map(func(r rune) rune {
			if l, ok := leetMap[r]; ok {
				return l
			}
			return r
		}, w)
	}
	return strings.Join(words, " "), true
}

// sentenceEndRE ends a sentence: . ! ? ; or a line break followed by white
// space, or a CJK full stop, exclamation or question mark.
var sentenceEndRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[.!?;:]\s+|\n+|[。！？；]\s*`) })

// Sentences returns the sentences of a normalised text, split after . ! ?
// ; : followed by white space, at line breaks and after CJK full stops,
// exclamation and question marks.
func Sentences(s string) []string {
	idx := sentenceEndRE().FindAllStringIndex(s, -1)
	var sents []string
	start := 0
	for _, l := range idx {
		if t := strings.TrimSpace(s[start:l[1]]); t != "" {
			sents = append(sents, t)
		}
		start = l[1]
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		sents = append(sents, t)
	}
	return sents
}

// Segments returns the parts of a normalised text a detector judges on
// their own, so an instruction appended to harmless prose is not drowned
// by it: each sentence, and each pair of neighbouring sentences. A text of
// one sentence has no segments (judge the text itself).
func Segments(s string) []string {
	sents := Sentences(s)
	if len(sents) < 2 {
		return nil
	}
	out := append([]string(nil), sents...)
	for i := 1; i < len(sents); i++ {
		out = append(out, sents[i-1]+" "+sents[i])
	}
	return out
}
