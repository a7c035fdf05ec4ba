package agents

import "strings"

// Description is the read-only research-specialist's description, as
// its definitions give it.
const Description = "Read-only web research specialist for specd. Returns one WebResearcherResult JSON object."

// Prompt returns the instructions of the read-only research-specialist:
// the body of its definition, without the front matter.
func Prompt() string {
	def := Definition("")
	_, body, _ := strings.Cut(string(def[len("---"):]), "\n---\n")
	return strings.TrimLeft(body, "\n")
}
