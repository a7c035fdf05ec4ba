// Package specialist holds the contract between specd and a specialist
// process: what goes in (environment variables and one JSON object on stdin)
// and what comes out (the report at a pre-calculated path, and the stdout
// signals REPORT_CREATED, ERROR_CONTEXT and TASK_ERROR); see
// docs/contract.md#specialists.
package specialist

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
)

// LocalIndexDir is where the built-in local specialist keeps its index of
// a project, relative to the project's root
// (docs/local-specialist.md#the-index). It is here, not in the index's
// package, so that the sandbox, which lets the specialist write it, does
// not link the index.
const LocalIndexDir = ".opencode/cache/local-index"

// Input is what a specialist is told about its topic. specd passes it twice:
// as SPECD_* environment variables (see Env) and as one JSON object on stdin.
// Paths are absolute.
type Input struct {
	ReportPath string `json:"report_path"` // where the report must be written (temp + rename)
	// ReportDir is the directory the report is moved to once checked
	// (the run's reports/): relative links in the report resolve from
	// there, not from ReportPath's directory (docs/contract.md#output-directory).
	// "" means ReportPath's directory.
	ReportDir          string `json:"report_dir,omitempty"`
	Topic              string `json:"topic"`               // the topic text, verbatim from the plan
	TopicIndex         int    `json:"topic_index"`         // 0-based index in the plan
	TopicCount         int    `json:"topic_count"`         // number of topics in the plan
	SpecDir            string `json:"spec_dir"`            // the NNN_slug directory
	RequestFile        string `json:"request_file"`        // REQUEST.md, or "" when the plan came without one
	ResearchComplexity int    `json:"research_complexity"` // 1–4, from REQUEST.md; 2 by default
	WorkflowID         string `json:"workflow_id"`         // the run's workflow_id
	ProjectRoot        string `json:"project_root"`        // the project directory (the specialist's working directory)
	Guidance           string `json:"guidance,omitempty"`  // what to improve on a re-run, e.g. a source gap to close
	// ResultPath is where a specialist may write a structured result
	// instead of the report (docs/contract.md#structured-results):
	// reports/.results/<report stem>.json for the web research JSON; the
	// same stem with .md for a research or analysis envelope. specd then
	// checks it and writes the report itself.
	ResultPath string `json:"result_path"`
	// CorrelationID is the run's workflow_id, to be echoed as an envelope's
	// correlation_id; an envelope naming another one is invalid.
	CorrelationID string `json:"correlation_id"`
	// AnalysisDepth is the plan's analysis depth: execution_only, focused or
	// comprehensive ("" when the plan names none: comprehensive).
	AnalysisDepth string `json:"analysis_depth,omitempty"`
}

// Environment variable names of the input contract.
const (
	EnvReportPath         = "SPECD_REPORT_PATH"
	EnvReportDir          = "SPECD_REPORT_DIR"
	EnvTopic              = "SPECD_TOPIC"
	EnvTopicIndex         = "SPECD_TOPIC_INDEX"
	EnvTopicCount         = "SPECD_TOPIC_COUNT"
	EnvSpecDir            = "SPECD_SPEC_DIR"
	EnvRequestFile        = "SPECD_REQUEST_FILE"
	EnvResearchComplexity = "SPECD_RESEARCH_COMPLEXITY"
	EnvWorkflowID         = "SPECD_WORKFLOW_ID"
	EnvProjectRoot        = "SPECD_PROJECT_ROOT"
	EnvGuidance           = "SPECD_GUIDANCE"
	EnvResultPath         = "SPECD_RESULT_PATH"
	EnvCorrelationID      = "SPECD_CORRELATION_ID"
	EnvAnalysisDepth      = "SPECD_ANALYSIS_DEPTH"
)

// Env returns the input as NAME=value pairs, ready to append to a child's
// environment.
func (in Input) Env() []string {
	return []string{
		EnvReportPath + "=" + in.ReportPath,
		EnvReportDir + "=" + in.ReportDir,
		EnvTopic + "=" + in.Topic,
		EnvTopicIndex + "=" + strconv.Itoa(in.TopicIndex),
		EnvTopicCount + "=" + strconv.Itoa(in.TopicCount),
		EnvSpecDir + "=" + in.SpecDir,
		EnvRequestFile + "=" + in.RequestFile,
		EnvResearchComplexity + "=" + strconv.Itoa(in.ResearchComplexity),
		EnvWorkflowID + "=" + in.WorkflowID,
		EnvProjectRoot + "=" + in.ProjectRoot,
		EnvGuidance + "=" + in.Guidance,
		EnvResultPath + "=" + in.ResultPath,
		EnvCorrelationID + "=" + in.CorrelationID,
		EnvAnalysisDepth + "=" + in.AnalysisDepth,
	}
}

// JSON returns the input as the one-line JSON object written to stdin.
func (in Input) JSON() []byte {
	b, _ := json.Marshal(in) // cannot fail: strings and ints only
	return append(b, '\n')
}

// ReadInput is how a specialist process gets its input
// (docs/contract.md#specialists): from the environment (InputFromEnv),
// or, when that is incomplete, from the JSON object on stdin (at most
// 1 MiB). ProjectRoot defaults to the working directory. The error names
// the missing variable and says stdin held no input either.
func ReadInput(stdin io.Reader) (Input, error) {
	in, err := InputFromEnv()
	if err != nil {
		b, rerr := io.ReadAll(io.LimitReader(stdin, 1<<20))
		if rerr != nil || json.Unmarshal(b, &in) != nil || in.ReportPath == "" {
			return in, fmt.Errorf("no input: %w, and stdin holds no input JSON", err)
		}
	}
	if in.ProjectRoot == "" {
		in.ProjectRoot, _ = os.Getwd()
	}
	return in, nil
}

// InputFromEnv reads the input from the process environment, as a
// specialist does. It returns an error naming the first missing or
// malformed variable; SPECD_REQUEST_FILE may be empty.
func InputFromEnv() (Input, error) {
	var in Input
	var err error
	str := func(name string, dst *string, required bool) {
		if err != nil {
			return
		}
		v := os.Getenv(name)
		if v == "" && required {
			err = fmt.Errorf("%s is not set", name)
		}
		*dst = v
	}
	num := func(name string, dst *int) {
		if err != nil {
			return
		}
		v := os.Getenv(name)
		n, e := strconv.Atoi(v)
		if e != nil {
			err = fmt.Errorf("%s=%q: not an integer", name, v)
		}
		*dst = n
	}
	str(EnvReportPath, &in.ReportPath, true)
	str(EnvReportDir, &in.ReportDir, false)
	str(EnvTopic, &in.Topic, true)
	num(EnvTopicIndex, &in.TopicIndex)
	num(EnvTopicCount, &in.TopicCount)
	str(EnvSpecDir, &in.SpecDir, true)
	str(EnvRequestFile, &in.RequestFile, false)
	num(EnvResearchComplexity, &in.ResearchComplexity)
	str(EnvWorkflowID, &in.WorkflowID, false)
	str(EnvProjectRoot, &in.ProjectRoot, false)
	str(EnvGuidance, &in.Guidance, false)
	str(EnvResultPath, &in.ResultPath, false)
	str(EnvCorrelationID, &in.CorrelationID, false)
	str(EnvAnalysisDepth, &in.AnalysisDepth, false)
	return in, err
}
