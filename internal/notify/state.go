package notify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// StateFile is the notifier's state in the spec tree, written by the
// daemon that holds the tree's lock (temp file, fsync, rename).
const StateFile = ".specd.notify.json"

// sentMax bounds the IDs kept per sink: enough for every event of the
// runs a daemon restart can meet again.
const sentMax = 512

// State is the content of StateFile.
type State struct {
	// Sinks is the last delivery per sink name.
	Sinks map[string]Delivery `json:"sinks"`
	// Pending are events queued and not yet delivered to all their
	// sinks: a restart delivers them to the sinks named.
	Pending []Pending `json:"pending,omitempty"`
	// Sent are the IDs each sink got or gave up on, oldest first
	// (at most sentMax): an event is never sent to a sink twice.
	Sent map[string][]string `json:"sent"`
}

// Pending is one queued event and the sinks it is still due to.
type Pending struct {
	Event Event    `json:"event"`
	Sinks []string `json:"sinks"`
}

// Delivery is how one delivery to a sink ended.
type Delivery struct {
	Event    string    `json:"event"`
	ID       string    `json:"id"`
	Run      string    `json:"run,omitempty"` // the run's number
	At       time.Time `json:"at"`
	OK       bool      `json:"ok"`
	Status   string    `json:"status"` // "HTTP 200", "exit 0", "skipped: no session bus", "HTTP 500"…
	Error    string    `json:"error,omitempty"`
	Attempts int       `json:"attempts"`
}

// ReadState reads the state file of treeDir; a missing file is an empty
// state. Errors name the file.
func ReadState(treeDir string) (State, error) {
	st := State{Sinks: map[string]Delivery{}, Sent: map[string][]string{}}
	p := filepath.Join(treeDir, StateFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		return State{Sinks: map[string]Delivery{}, Sent: map[string][]string{}}, fmt.Errorf("notify state %s: %w", p, err)
	}
	if st.Sinks == nil {
		st.Sinks = map[string]Delivery{}
	}
	if st.Sent == nil {
		st.Sent = map[string][]string{}
	}
	return st, nil
}

// sent reports whether id went to sink, or is queued for it.
func (st *State) sent(sink, id string) bool {
	if slices.Contains(st.Sent[sink], id) {
		return true
	}
	for _, p := range st.Pending {
		if p.Event.ID == id && slices.Contains(p.Sinks, sink) {
			return true
		}
	}
	return false
}

// queue records that ev is due to sinks.
func (st *State) queue(ev Event, sinks []string) {
	for i, p := range st.Pending {
		if p.Event.ID == ev.ID {
			st.Pending[i].Sinks = append(st.Pending[i].Sinks, sinks...)
			return
		}
	}
	st.Pending = append(st.Pending, Pending{Event: ev, Sinks: sinks})
}

// done records that the delivery of id to sink ended (d), or with d nil
// that it was dropped undelivered.
func (st *State) done(sink, id string, d *Delivery) {
	for i := 0; i < len(st.Pending); i++ {
		p := &st.Pending[i]
		if p.Event.ID != id {
			continue
		}
		p.Sinks = slices.DeleteFunc(p.Sinks, func(s string) bool { return s == sink })
		if len(p.Sinks) == 0 {
			st.Pending = slices.Delete(st.Pending, i, i+1)
			i--
		}
	}
	ids := append(st.Sent[sink], id)
	if len(ids) > sentMax {
		ids = ids[len(ids)-sentMax:]
	}
	st.Sent[sink] = ids
	if d != nil {
		st.Sinks[sink] = *d
	}
}

// String is the delivery as `specd status` shows it after the sink's
// name: "ok run_finished run 003, HTTP 200, 2m ago" or "FAILED … (3
// attempts): error".
func (d Delivery) String(now time.Time) string {
	what := d.Event
	if d.Run != "" {
		what += " run " + d.Run
	}
	ago := now.Sub(d.At).Round(time.Second)
	if !d.OK {
		s := fmt.Sprintf("FAILED %s, %s after %d attempts, %s ago", what, d.Status, d.Attempts, ago)
		if d.Error != "" && !strings.Contains(d.Status, d.Error) {
			s += ": " + d.Error
		}
		return s
	}
	return fmt.Sprintf("ok %s, %s, %s ago", what, d.Status, ago)
}
