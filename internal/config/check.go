package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/specd-dev/specd/internal/yamlerr"
)

// FileError is a config file that cannot be used, with every problem
// found in it (docs/configuration.md#errors). Load returns its config
// errors as a *FileError.
type FileError struct {
	Path     string    // the file, as given to Load
	Problems []Problem // at least one, in file order
}

// Problem is one error of a config file.
type Problem struct {
	Line int    // 1-based; 0 when no line shows it
	Msg  string // e.g. `max_parallel: want an integer, got "two"`
}

// Error returns "config PATH:LINE: MSG", one per problem joined by "; ",
// without ":LINE" when it is 0.
func (e *FileError) Error() string {
	ms := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		ms[i] = e.Path
		if p.Line > 0 {
			ms[i] += ":" + strconv.Itoa(p.Line)
		}
		ms[i] += ": " + p.Msg
	}
	return "config " + strings.Join(ms, "; ")
}

// problem is one error found by checkNode: the line, the key path
// ("specialist.timeout"; "" for none) and what is wrong there.
type problem struct {
	line int
	key  string
	msg  string
}

// lineOf returns the line of the key path key ("specialist.timeout",
// "specialist.command[0]") in the document root, 0 when it is not there.
func lineOf(root *yaml.Node, key string) int {
	n := root
	for n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	line := 0
	for _, part := range strings.Split(key, ".") {
		name, _, _ := strings.Cut(part, "[")
		if n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == name {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}

var (
	durationType    = reflect.TypeFor[Duration]()
	sandboxType     = reflect.TypeFor[Sandbox]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
)

// checkNode walks the YAML tree n against the Go type t that Load decodes
// it into and returns every unknown key, with the nearest known one, and
// every value of the wrong type, naming the key and its line, in file
// order. key is n's key path ("" for the document). Values are decoded as
// go-yaml would, so what passes here decodes.
func checkNode(n *yaml.Node, t reflect.Type, key string) []problem {
	for n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // an empty value keeps the default
	}
	bad := func() []problem { return []problem{{n.Line, key, "want " + want(t) + ", got " + got(n)}} }
	switch {
	case t == durationType:
		if n.Kind != yaml.ScalarNode || n.Decode(new(Duration)) != nil {
			return bad()
		}
		return nil
	case t == sandboxType:
		if n.Kind == yaml.ScalarNode {
			if err := n.Decode(new(Sandbox)); err != nil { // its error names the key: `sandbox "x": want on or off`
				return []problem{{n.Line, "", yamlLineRE.ReplaceAllString(err.Error(), "$2")}}
			}
			return nil
		}
		return checkMapping(n, t, key, []string{"mode"})
	case n.Kind == yaml.ScalarNode && reflect.PointerTo(t).Implements(unmarshalerType):
		// A type that reads its own scalars (Size): its error says what it wants.
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			return []problem{{n.Line, key, yamlLineRE.ReplaceAllString(err.Error(), "$2")}}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return checkMapping(n, t, key, nil)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return bad()
		}
		var ps []problem
		for i := 0; i+1 < len(n.Content); i += 2 {
			ps = append(ps, checkNode(n.Content[i+1], t.Elem(), key+"."+n.Content[i].Value)...)
		}
		return ps
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return bad()
		}
		var ps []problem
		for i, c := range n.Content {
			ps = append(ps, checkNode(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i))...)
		}
		return ps
	}
	if n.Kind != yaml.ScalarNode || n.Decode(reflect.New(t).Interface()) != nil {
		return bad()
	}
	return nil
}

// checkMapping checks a mapping n against the struct t: each key one of
// t's yaml keys (or extra), each value as checkNode does.
func checkMapping(n *yaml.Node, t reflect.Type, key string, extra []string) []problem {
	if n.Kind != yaml.MappingNode {
		return []problem{{n.Line, key, "want a mapping, got " + got(n)}}
	}
	known := append(keysOf(t), extra...)
	var ps []problem
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fieldOf(t, k.Value)
		switch {
		case k.ShortTag() == "!!merge": // "<<: *defaults": the decoder checks the merged keys
		case ok:
			ps = append(ps, checkNode(v, f.Type, join(key, k.Value))...)
		case !slices.Contains(extra, k.Value):
			ps = append(ps, problem{k.Line, "", fmt.Sprintf("unknown key %q (did you mean %s?)",
				join(key, k.Value), join(key, yamlerr.Closest(k.Value, known)))})
		}
	}
	return ps
}

// keysOf returns the yaml keys of struct t, sorted.
func keysOf(t reflect.Type) []string {
	var ks []string
	for i := range t.NumField() {
		if k := yamlKey(t.Field(i)); k != "" {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// fieldOf returns the field of struct t whose yaml key is k.
func fieldOf(t reflect.Type, k string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); yamlKey(f) == k {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// yamlKey is f's key in YAML, "" for a field YAML does not read.
func yamlKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if !f.IsExported() || name == "-" {
		return ""
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name
}

// want names what a value of type t is written as.
func want(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration such as 30s, 15m, 36h or 14d"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return "an integer"
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		return fmt.Sprintf("an integer from 0 to %d", uint64(1)<<(t.Bits())-1)
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Slice:
		return "a list"
	}
	return "a mapping"
}

// got names the value n: a short one-line scalar quoted, anything else
// by its kind, so that an error never quotes a long value (a private key
// pasted in the wrong place: docs/operating.md#secrets).
func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if len(n.Value) <= 24 && !strings.ContainsFunc(n.Value, unicode.IsControl) {
		return strconv.Quote(n.Value)
	}
	return fmt.Sprintf("a value of %d bytes", len(n.Value))
}

func join(key, k string) string {
	if key == "" {
		return k
	}
	return key + "." + k
}
