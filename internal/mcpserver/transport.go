package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxFrameBytes is the longest JSON-RPC line specd mcp reads (1 MiB): a
// longer one is answered with an invalid-request error and skipped up to
// its newline (docs/contract.md#mcp-tools).
const MaxFrameBytes = 1 << 20

// LineTransport is an MCP transport over newline-delimited JSON-RPC 2.0
// on In and Out (stdin and stdout for `specd mcp`) that survives bad
// input: the SDK's own stdio transport ends the session on the first line
// it cannot decode. Each line that is not one JSON-RPC 2.0 message is
// answered on Out with a JSON-RPC error and skipped (-32700 for a line
// that is not JSON; -32600 for a batch, a value that is not an object, a
// jsonrpc other than "2.0", an id that is not a string, number or null,
// or a line over MaxFrameBytes); the good ones go to the server, which
// answers invalid params with -32602 itself. See
// docs/contract.md#mcp-tools.
type LineTransport struct {
	In  io.Reader
	Out io.Writer
}

// Connect starts reading In; it cannot fail.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{out: t.Out, lines: make(chan frame), closed: make(chan struct{})}
	go c.readLines(bufio.NewReaderSize(t.In, 64<<10))
	return c, nil
}

// frame is one input line, or the read error that ended the input.
type frame struct {
	data    []byte
	tooLong bool
	err     error
}

type lineConn struct {
	out       io.Writer
	wmu       sync.Mutex // one message per Write, whole
	lines     chan frame
	closed    chan struct{}
	closeOnce sync.Once
}

// readLines sends each line of r (without its newline) to c.lines, the
// part past MaxFrameBytes dropped, and the error that ends r last.
func (c *lineConn) readLines(r *bufio.Reader) {
	for {
		var line []byte
		tooLong := false
		var err error
		for {
			var part []byte
			part, err = r.ReadSlice('\n')
			if !tooLong && len(line)+len(part) <= MaxFrameBytes+1 {
				line = append(line, part...)
			} else {
				tooLong, line = true, nil
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if len(line) > 0 || tooLong {
			select {
			case c.lines <- frame{data: line, tooLong: tooLong}:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			select {
			case c.lines <- frame{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// Read returns the next good message, answering and skipping bad lines.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var f frame
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case f = <-c.lines:
		}
		if f.err != nil {
			return nil, f.err
		}
		msg, id, code, why := decodeLine(f)
		if msg != nil {
			return msg, nil
		}
		if code == 0 {
			continue // a blank line
		}
		if err := c.writeError(id, code, why); err != nil {
			return nil, err
		}
	}
}

// decodeLine is the message of one line, or the id (raw JSON, "null"
// when unknown), code and message of the error that answers it; code 0
// for a blank line.
func decodeLine(f frame) (jsonrpc.Message, json.RawMessage, int64, string) {
	null := json.RawMessage("null")
	if f.tooLong {
		return nil, null, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a message over %d bytes (the limit of specd mcp); it was skipped", MaxFrameBytes)
	}
	data := bytes.TrimSpace(f.data)
	switch {
	case len(data) == 0:
		return nil, nil, 0, ""
	case !json.Valid(data):
		return nil, null, jsonrpc.CodeParseError, "parse error: the line is not JSON; send one JSON-RPC 2.0 object per line"
	case data[0] == '[':
		return nil, null, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one JSON-RPC 2.0 object per line"
	case data[0] != '{':
		return nil, null, jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 object"
	}
	var env struct {
		Version json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(data, &env) // valid JSON, an object
	id := null
	if len(env.ID) > 0 && (env.ID[0] == '"' || env.ID[0] == '-' || env.ID[0] >= '0' && env.ID[0] <= '9') {
		id = env.ID
	}
	switch {
	case string(env.Version) != `"2.0"`:
		return nil, id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	case len(env.ID) > 0 && string(env.ID) != "null" && bytes.Equal(id, null):
		return nil, null, jsonrpc.CodeInvalidRequest, "invalid request: id must be a string or a number"
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	return msg, nil, 0, ""
}

// writeError answers a bad line.
func (c *lineConn) writeError(id json.RawMessage, code int64, message string) error {
	data, err := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

// Write sends one message as one line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Close stops reading; a read of stdin blocked in the kernel stays
// blocked until its next line, which is dropped.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is "": stdio has one session.
func (c *lineConn) SessionID() string { return "" }
