package temporal_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/plans"
	"github.com/specd-dev/specd/specs"
)

// TestSecureCluster runs Temporal mode against a cluster that requires
// mTLS: the dev server behind a TLS-terminating proxy of the test that
// demands a client certificate signed by the test's CA
// (docs/operating.md#security). The daemon and a worker connect with
// their certificates and the payload codec on and finish a run; a worker
// without a certificate is refused; the workflow histories, read with the
// temporal CLI straight from the dev server, hold no topic text, and
// read through `specd-temporal codec-server` they do.
func TestSecureCluster(t *testing.T) {
	server := os.Getenv("SPECD_TEMPORAL")
	if server == "" {
		t.Skip("SPECD_TEMPORAL is not set: the Temporal end-to-end tests are skipped")
	}
	tmp := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	specd := filepath.Join(tmp, "specd")
	if out, err := exec.Command("go", "build", "-o", tmp+"/", "../../cmd/specd", "../../cmd/specd-temporal").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	plain := fmt.Sprintf("127.0.0.1:%d", port)
	start(t, "temporal server", server, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", fmt.Sprint(port),
		"--db-filename", filepath.Join(tmp, "temporal.db"), "--log-level", "warn")
	eventually(t, "the Temporal dev server", 60*time.Second, func() bool {
		return exec.Command(server, "operator", "cluster", "health", "--address", plain).Run() == nil
	})

	pki := newPKI(t, tmp)
	secure := mtlsProxy(t, pki, plain)

	keys := filepath.Join(tmp, "codec.keys")
	must(t, os.WriteFile(keys, []byte("# rotate: new key first\nk2 "+strings.Repeat("ab", 32)+"\nk1 "+strings.Repeat("cd", 32)+"\n"), 0o600))
	script := filepath.Join(tmp, "sleeper.sh")
	must(t, os.WriteFile(script, []byte(sleeper), 0o755))
	starts := filepath.Join(tmp, "notes", "starts") // the specialists write it: notes/ is in their sandbox.writable
	must(t, os.MkdirAll(filepath.Dir(starts), 0o755))
	configure := func(root string, cert bool) {
		must(t, os.MkdirAll(filepath.Join(root, ".opencode", "specs"), 0o755))
		cfg := fmt.Sprintf("specialist:\n  preset: command\n  command: [%q]\n  env: {STARTS: %q, SLEEP: \"0\"}\nsandbox:\n  writable: [%q]\ntemporal:\n  tls_ca_file: %q\n  codec_key_file: %q\n",
			script, starts, filepath.Dir(starts), pki.ca, keys)
		if cert {
			cfg += fmt.Sprintf("  tls_cert_file: %q\n  tls_key_file: %q\n", pki.cert, pki.key)
		}
		must(t, os.WriteFile(filepath.Join(root, ".opencode", "specd.yaml"), []byte(cfg), 0o644))
		if out, err := exec.Command(specd, "trust", "--yes", "--root", root).CombinedOutput(); err != nil {
			t.Fatalf("specd trust: %v\n%s", err, out)
		}
	}

	// A worker without a client certificate is refused by the cluster.
	anon := filepath.Join(tmp, "anon")
	configure(anon, false)
	out, err := exec.Command("timeout", "60", specd, "worker", "--temporal", secure, "--root", anon).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "specd: temporal "+secure) {
		t.Errorf("a worker without a client certificate: %v\n%s", err, out)
	}

	wroot, root := filepath.Join(tmp, "worker"), filepath.Join(tmp, "project")
	configure(wroot, true)
	configure(root, true)
	start(t, "worker", specd, "worker", "--temporal", secure, "--root", wroot, "--identity", "secure-worker")
	start(t, "daemon", specd, "run", "--root", root, "--temporal", secure)
	const secret = "Zanzibar cormorant migration routes"
	dir := filepath.Join(root, ".opencode", "specs", "001_secure")
	must(t, os.MkdirAll(filepath.Join(dir, "reports"), 0o755))
	p := &plans.Plan{Status: plans.StatusComplete, Topics: []plans.Topic{{Index: 0, Title: secret, ReportPath: "001_secure.md"}}}
	must(t, os.WriteFile(filepath.Join(dir, "reports", ".plan.tmp"), plans.Format(p), 0o644))
	must(t, os.Rename(filepath.Join(dir, "reports", ".plan.tmp"), filepath.Join(dir, "reports", specs.PlanFile)))
	var rs specs.RunState
	eventually(t, "the run to finish", 2*time.Minute, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "reports", specs.RunStateFile))
		_ = json.Unmarshal(b, &rs)
		return rs.State == specs.StateFinished
	})
	if rs.Verdict != specs.VerdictSuccess || rs.Topics[0].Worker != "secure-worker" {
		t.Fatalf("run over mTLS: verdict %s, worker %q", rs.Verdict, rs.Topics[0].Worker)
	}

	// The histories as the cluster holds them: sealed payloads only.
	history := func(extra ...string) string {
		t.Helper()
		ids, err := exec.Command(server, "workflow", "list", "--address", plain, "-o", "json").Output()
		must(t, err)
		var list []struct {
			Execution struct {
				WorkflowID string `json:"workflowId"`
			} `json:"execution"`
		}
		must(t, json.Unmarshal(ids, &list))
		if len(list) == 0 {
			t.Fatalf("no workflow in the cluster: %s", ids)
		}
		var all bytes.Buffer
		for _, w := range list {
			args := append([]string{"workflow", "show", "-w", w.Execution.WorkflowID, "--address", plain, "-o", "json"}, extra...)
			b, err := exec.Command(server, args...).Output()
			must(t, err)
			all.Write(b)
		}
		return all.String() + decodedStrings(all.Bytes())
	}
	raw := history()
	if strings.Contains(raw, "Zanzibar") || strings.Contains(raw, "REPORT_CREATED") {
		t.Errorf("the cluster's history holds research text in clear")
	}
	if !strings.Contains(raw, "binary/encrypted") || !strings.Contains(raw, "k2") {
		t.Errorf("the history shows no payload sealed with key k2; the test did not see payloads:\n%.2000s", raw)
	}

	// Through the codec server, a reader with the keys sees the text.
	cport := freePort(t)
	start(t, "codec server", filepath.Join(tmp, "specd-temporal"), "codec-server", "--root", root, "--listen", fmt.Sprintf("127.0.0.1:%d", cport))
	eventually(t, "the codec server", 10*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", cport))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if clear := history("--codec-endpoint", fmt.Sprintf("http://127.0.0.1:%d", cport)); !strings.Contains(clear, "Zanzibar") {
		t.Errorf("through the codec server the history still hides the topic:\n%.2000s", clear)
	}
}

// decodedStrings returns, one per line, every base64 string value of the
// JSON document b decoded, and within those that are JSON again (payload
// data and metadata appear base64-encoded, a Task's Stdin once more).
func decodedStrings(b []byte) string {
	var out strings.Builder
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return out.String()
		}
		if s, ok := tok.(string); ok {
			if d, err := base64.StdEncoding.DecodeString(s); err == nil {
				out.Write(d)
				out.WriteByte('\n')
				if json.Valid(d) { // a payload's JSON holds []byte fields as base64 again
					out.WriteString(decodedStrings(d))
				}
			}
		}
	}
}

// pki is a test CA with a server certificate for 127.0.0.1 and a client
// certificate, as PEM files.
type pki struct {
	ca, cert, key string // CA certificate, client certificate and key files
	server        tls.Certificate
	pool          *x509.CertPool
}

func newPKI(t *testing.T, dir string) pki {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "specd test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(t, err)
	caCert, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, name string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		must(t, err)
		return der, k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
		return p
	}
	var out pki
	out.ca = write("ca.pem", "CERTIFICATE", caDER)
	cDER, cKey := issue(2, "specd client", x509.ExtKeyUsageClientAuth)
	out.cert = write("client.pem", "CERTIFICATE", cDER)
	kDER, _ := x509.MarshalECPrivateKey(cKey)
	out.key = write("client.key", "EC PRIVATE KEY", kDER)
	sDER, sKey := issue(3, "127.0.0.1", x509.ExtKeyUsageServerAuth)
	out.server = tls.Certificate{Certificate: [][]byte{sDER}, PrivateKey: sKey}
	out.pool = x509.NewCertPool()
	out.pool.AddCert(caCert)
	return out
}

// mtlsProxy listens with TLS on 127.0.0.1, requires a client certificate
// of p's CA, and pipes each connection to backend; it returns its address.
func mtlsProxy(t *testing.T, p pki, backend string) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{p.server},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.pool, NextProtos: []string{"h2"}})
	must(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if err := c.(*tls.Conn).Handshake(); err != nil {
					return // no or a wrong client certificate
				}
				b, err := net.Dial("tcp", backend)
				if err != nil {
					return
				}
				defer b.Close()
				go io.Copy(b, c)
				io.Copy(c, b)
			}()
		}
	}()
	return l.Addr().String()
}
