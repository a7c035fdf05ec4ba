package corpus

import (
	"bytes"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// Written is the data file of the texts written for this project
// (written.yaml): per language, the parts the generator combines
// (writtenRecords) — openers that try to override the reader's task,
// actions (what the attacker wants), whole attacks, addressees, goal
// hijacks — and benign texts. Each part carries its category where it has
// one and its group: the texts built from one group share a split, so
// held-out texts use wordings training never saw.
type Written struct {
	Languages       []Language `yaml:"languages"`
	LookalikeBenign []string   `yaml:"lookalike_benign"` // benign texts full of what the decoders look at: hashes, base64 images, versions
}

// Language is the written parts of one language.
type Language struct {
	Lang        string `yaml:"lang"`
	Openers     []Part `yaml:"openers"`      // combined with every action
	Actions     []Part `yaml:"actions"`      // alone, after each opener and after each addressee
	Whole       []Part `yaml:"whole"`        // complete attacks without an opener
	Addressees  []Part `yaml:"addressees"`   // who an indirect injection speaks to: a reader that is a model
	Hijack      Hijack `yaml:"hijack"`       // a harmless question, a pivot, a new task
	Benign      []Part `yaml:"benign"`       // hard negatives: benign texts that share words or markup with attacks
	PeopleNotes []Part `yaml:"people_notes"` // benign texts that open the way addressees do
	// Reports are benign texts that talk about instructions instead of
	// giving them: a specialist's note about an injection it saw and
	// ignored, a security article quoting an attack, documentation of
	// system prompts, chat templates and HTML event handlers.
	Reports []Part `yaml:"reports"`
}

// Part is one written text with its category and group.
type Part struct {
	Text     string `yaml:"text"`
	Category string `yaml:"category,omitempty"`
	Group    string `yaml:"group,omitempty"`
}

// Hijack holds the goal-hijacking parts of one language; texts are
// grouped by pivot.
type Hijack struct {
	Questions []string `yaml:"questions"`
	Pivots    []Part   `yaml:"pivots"`
	Tasks     []string `yaml:"tasks"`
}

// loadWritten reads the written data file at path.
func loadWritten(path string) (*Written, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w Written
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &w, nil
}
