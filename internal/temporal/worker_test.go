package temporal

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/specd-dev/specd/internal/config"
	"github.com/specd-dev/specd/internal/nofollow"
	"github.com/specd-dev/specd/internal/preset"
	"github.com/specd-dev/specd/internal/specialist"
)

// hostileWorker is a worker on a checkout with one run directory, and a
// directory outside the checkout that nothing may touch.
func hostileWorker(t *testing.T) (w *Worker, outside string) {
	t.Helper()
	root := t.TempDir()
	outside = t.TempDir()
	for _, d := range []string{".git", ".opencode/specs/001_x/reports"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &Worker{Root: root, Specialist: config.Specialist{Preset: config.PresetCommand, Command: []string{"true"}}}, outside
}

// task is a well-formed task for run 001_x of w's checkout.
func task(w *Worker) (Task, specialist.Input) {
	run := filepath.Join(w.Root, ".opencode/specs/001_x")
	in := specialist.Input{ReportPath: filepath.Join(run, "reports/001_t.md"), Topic: "t", SpecDir: run,
		RequestFile: filepath.Join(run, "REQUEST.md"), ProjectRoot: w.Root, ResultPath: filepath.Join(run, "reports/.results/001_t.json")}
	logs := ".opencode/specs/001_x/reports/.logs/001"
	return Task{ID: "x", Root: w.Root, Argv: []string{"true"}, Stdin: in.JSON(),
		Stdout: logs + ".stdout", Stderr: logs + ".stderr", Lock: logs + ".lock",
		Inputs:  map[string][]byte{".opencode/specs/001_x/REQUEST.md": []byte("# Request\n")},
		Outputs: []string{".opencode/specs/001_x/reports/001_t.md"}}, in
}

func withInput(t Task, in specialist.Input) Task {
	t.Stdin, _ = json.Marshal(in)
	return t
}

// empty fails when dir holds anything: nothing was written outside.
func empty(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("%s holds %v: a task wrote outside the worker's run directory", dir, ents)
	}
}

// TestWorkerRefusesHostileTasks sends a worker the tasks a hostile
// Temporal client would (docs/operating.md#security): each is refused
// with an error naming what it asked for, the checkout's .git/config is
// unchanged and nothing is written outside it.
func TestWorkerRefusesHostileTasks(t *testing.T) {
	w, outside := hostileWorker(t)
	good, in := task(w)
	job, s, err := w.job(good)
	defer s.Release()
	if err != nil {
		t.Fatalf("a well-formed task: %v", err)
	}
	var got specialist.Input
	if err := json.Unmarshal(job.Stdin, &got); err != nil || got.ProjectRoot != w.Root || got.ReportPath != in.ReportPath {
		t.Errorf("the specialist's input: %+v, %v", got, err)
	}

	cases := map[string]func(Task, specialist.Input) Task{
		"inputs naming .git/config": func(t Task, _ specialist.Input) Task {
			t.Inputs = map[string][]byte{".git/config": []byte("[core]\n\tfsmonitor = touch " + outside + "/ran\n")}
			return t
		},
		"inputs naming .git inside the run": func(t Task, _ specialist.Input) Task {
			t.Inputs = map[string][]byte{".opencode/specs/001_x/.git/config": []byte("x")}
			return t
		},
		"inputs naming the config": func(t Task, _ specialist.Input) Task {
			t.Inputs = map[string][]byte{".opencode/specd.yaml": []byte("specialist: {preset: command, command: [sh]}\n")}
			return t
		},
		"project_root outside": func(t Task, in specialist.Input) Task {
			in.ProjectRoot = outside
			return withInput(t, in)
		},
		"report_path outside": func(t Task, in specialist.Input) Task {
			in.ReportPath = filepath.Join(outside, "report.md")
			return withInput(t, in)
		},
		"report_path climbing out": func(t Task, in specialist.Input) Task {
			in.ReportPath = filepath.Join(in.SpecDir, "../../../../", filepath.Base(outside), "report.md")
			return withInput(t, in)
		},
		"spec_dir not a run of this tree": func(t Task, in specialist.Input) Task {
			in.SpecDir = w.Root
			return withInput(t, in)
		},
		"stdout outside": func(t Task, _ specialist.Input) Task {
			t.Stdout = "../" + filepath.Base(outside) + "/stdout"
			return t
		},
		"outputs outside the run": func(t Task, _ specialist.Input) Task {
			t.Outputs = []string{".git/config"}
			return t
		},
	}
	for name, mk := range cases {
		bad := mk(good, in)
		if _, _, err := w.job(bad); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.Root, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q: written by a task", b)
	}
	if _, err := os.Stat(filepath.Join(w.Root, ".opencode", "specd.yaml")); err == nil {
		t.Error("a task wrote the config")
	}
	empty(t, outside)
}

// TestWorkerRefusesLinks: a link a specialist planted in its run directory
// (the logs directory pointing out of the checkout) makes the next task of
// that run fail with an error naming the link; nothing is written through it.
func TestWorkerRefusesLinks(t *testing.T) {
	w, outside := hostileWorker(t)
	if err := os.Symlink(outside, filepath.Join(w.Root, ".opencode/specs/001_x/reports/.logs")); err != nil {
		t.Fatal(err)
	}
	good, _ := task(w)
	if _, _, err := w.job(good); !nofollow.IsLink(err) || !strings.Contains(err.Error(), ".logs") {
		t.Errorf("a task through a planted link: %v, want a link error naming .logs", err)
	}
	empty(t, outside)
}

// TestKeyedWorkerRefusesClearPayload: with codec keys set, a payload in
// clear (a task from a client without the keys) does not decode into a
// Task, while a sealed one does.
func TestKeyedWorkerRefusesClearPayload(t *testing.T) {
	c, err := ParseCodecKeys("k1 " + strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	dc := Options{Codec: c}.dataConverter()
	plain, err := Options{}.dataConverter().ToPayloads(Task{ID: "evil", Inputs: map[string][]byte{".git/config": nil}})
	if err != nil {
		t.Fatal(err)
	}
	var got Task
	if err := dc.FromPayloads(plain, &got); !errors.Is(err, ErrNotSealed) {
		t.Errorf("a clear payload to a keyed worker: %v, want ErrNotSealed", err)
	}
	if got.ID != "" {
		t.Errorf("the clear task was read: %+v", got)
	}
	sealed, err := dc.ToPayloads(Task{ID: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if err := dc.FromPayloads(sealed, &got); err != nil || got.ID != "ok" {
		t.Errorf("a sealed task: %+v, %v", got, err)
	}
	if _, err := c.Decode([]*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`{}`)}}); !errors.Is(err, ErrNotSealed) {
		t.Errorf("Decode of a clear payload: %v", err)
	}
}

// TestWorkerRunsFallbackModel: a worker runs the daemon's attempt with
// its own specialist.fallback_model as --model (the daemon's fallback
// attempt), and refuses any other model.
func TestWorkerRunsFallbackModel(t *testing.T) {
	w, _ := hostileWorker(t)
	w.Specialist = config.Specialist{Preset: config.PresetClaude, Binary: "/bin/true", Agent: config.AgentCLIDefault, Model: "primary", FallbackModel: "fallback"}
	good, in := task(w)
	for _, tc := range []struct {
		model string
		ok    bool
	}{{"primary", true}, {"fallback", true}, {"other", false}} {
		sp := w.Specialist
		sp.Model = tc.model
		argv, err := preset.Argv(sp, w.Exe, in)
		if err != nil {
			t.Fatal(err)
		}
		asked := good
		asked.Argv = argv
		job, s, err := w.job(asked)
		s.Release()
		switch {
		case tc.ok && (err != nil || !slices.Equal(job.Argv, argv)):
			t.Errorf("--model %s: %v, argv %q; want the asked command run", tc.model, err, job.Argv)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "refused")):
			t.Errorf("--model %s: %v, want a refusal", tc.model, err)
		}
	}
}
