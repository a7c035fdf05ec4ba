package temporal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Payload metadata of an encrypted payload (docs/operating.md#security).
const (
	encryptedEncoding = "binary/encrypted"  // metadata "encoding"
	metaKeyID         = "encryption-key-id" // the key that sealed it
)

// Codec is the payload codec of docs/operating.md#security: every payload
// the daemon and its workers hand to Temporal (the task with its topic and
// files, the outcome with the report, heartbeats) is sealed with
// AES-256-GCM under the first key, its key ID in the payload's metadata;
// any key of the set opens it, so keys rotate by adding the new one first
// and keeping the old ones until no history needs them. It is a
// converter.PayloadCodec.
type Codec struct {
	ids  []string // in file order; ids[0] encrypts
	keys map[string]cipher.AEAD
}

var _ converter.PayloadCodec = (*Codec)(nil)

// ParseCodecKeys reads a key set: one "KEY_ID KEY" per line, KEY 32 bytes
// written as 64 hex digits or in standard base64; blank lines and lines
// starting with # are skipped. Errors name the line; no key is an error.
func ParseCodecKeys(text string) (*Codec, error) {
	c := &Codec{keys: map[string]cipher.AEAD{}}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("codec keys line %d: want \"KEY_ID KEY\"", n+1)
		}
		key, err := hex.DecodeString(f[1])
		if err != nil {
			key, err = base64.StdEncoding.DecodeString(f[1])
		}
		if err != nil || len(key) != 32 {
			// The line is not quoted: it may be a secret of another kind.
			return nil, fmt.Errorf("codec keys line %d: the key must be 32 bytes in hex (64 digits) or base64, e.g. from 'openssl rand -hex 32'", n+1)
		}
		if _, dup := c.keys[f[0]]; dup {
			return nil, fmt.Errorf("codec keys line %d: its key ID is given twice", n+1)
		}
		block, _ := aes.NewCipher(key) // cannot fail: 32 bytes
		aead, _ := cipher.NewGCM(block)
		c.ids, c.keys[f[0]] = append(c.ids, f[0]), aead
	}
	if len(c.ids) == 0 {
		return nil, fmt.Errorf("codec keys: none given (want \"KEY_ID KEY\" lines)")
	}
	return c, nil
}

// Encode seals each payload under the first key.
func (c *Codec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	id := c.ids[0]
	aead := c.keys[id]
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(encryptedEncoding), metaKeyID: []byte(id)},
			Data:     aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

// ErrNotSealed is returned by Decode for a payload that is not encrypted:
// with codec keys set, the daemon and its workers take none in clear
// (docs/operating.md#security), so that whoever can start a workflow on
// the cluster without the keys cannot hand a worker a task.
var ErrNotSealed = errors.New("payload is not encrypted, and this codec takes only sealed payloads")

// Decode opens each sealed payload with the key its metadata names.
// Errors: ErrNotSealed (wrapped, with the payload's encoding) for a
// payload in clear; a key ID not in the set, naming it; a payload that
// does not open.
func (c *Codec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if enc := string(p.GetMetadata()[converter.MetadataEncoding]); enc != encryptedEncoding {
			return nil, fmt.Errorf("%w (encoding %q): give the sender the codec keys (docs/operating.md#security)", ErrNotSealed, enc)
		}
		id := string(p.GetMetadata()[metaKeyID])
		aead, ok := c.keys[id]
		if !ok {
			return nil, fmt.Errorf("payload sealed with key %q, which is not in this codec key set (keep old keys after the new one while histories need them)", id)
		}
		data := p.GetData()
		if len(data) < aead.NonceSize() {
			return nil, fmt.Errorf("payload sealed with key %q is too short", id)
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], nil)
		if err != nil {
			return nil, fmt.Errorf("payload sealed with key %q: %w", id, err)
		}
		q := &commonpb.Payload{}
		if err := proto.Unmarshal(plain, q); err != nil {
			return nil, err
		}
		out[i] = q
	}
	return out, nil
}
