package modelserver

import "slices"

// toolNames returns the names of the tools an OpenAI request offers, sorted.
func (r oaRequest) toolNames() []string {
	out := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		out = append(out, t.Function.Name)
	}
	slices.Sort(out)
	return out
}

// toolNames returns the names of the tools an Anthropic request offers, sorted.
func (r anRequest) toolNames() []string {
	out := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

// Offered returns the distinct tool lists the requests for topic offered
// the model, in the order first seen; requests that offered no tools (a
// CLI's side calls) are left out. Tests compare them with a CLI's allowlist.
func (s *Server) Offered(topic string) [][]string {
	var out [][]string
	for _, r := range s.Requests() {
		if r.Topic != topic || len(r.Names) == 0 {
			continue
		}
		if !slices.ContainsFunc(out, func(l []string) bool { return slices.Equal(l, r.Names) }) {
			out = append(out, r.Names)
		}
	}
	return out
}
