package natsremote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// The variable natsremote.Main serves for is the one pool.Main refuses.
func TestEnvURLIsTheSeams(t *testing.T) {
	assert.Equal(t, seam.EnvNodeURL, EnvURL)
}

// Every setting a node takes from its environment reaches its options.
func TestOptionsFromEnv(t *testing.T) {
	t.Parallel()
	o, err := optionsFromEnv(env(map[string]string{
		EnvPool: "images", EnvName: "gpu-box", EnvWorkers: "6", EnvIsolation: "subprocess",
		EnvHeartbeat: "2s", EnvDrain: "30s", EnvMemoryLimit: "512MiB", EnvTerminateGrace: "250ms",
		EnvMaxTasksPerWorker: "1000", EnvLogLevel: "warn",
	}))
	require.NoError(t, err)
	assert.Equal(t, "images", o.Pool)
	assert.Equal(t, "gpu-box", o.Name)
	assert.Equal(t, 6, o.Local.Workers)
	assert.Equal(t, pool.Subprocess, o.Local.Isolation)
	assert.Equal(t, 2*time.Second, o.Heartbeat)
	assert.Equal(t, 30*time.Second, o.Drain)
	assert.Equal(t, pool.SubprocessOptions{MemoryLimit: 512 << 20, TerminateGrace: 250 * time.Millisecond, MaxTasksPerWorker: 1000}, o.Local.Subprocess)
	require.NotNil(t, o.Logger)
	assert.False(t, o.Logger.Enabled(t.Context(), slog.LevelInfo))
	assert.True(t, o.Logger.Enabled(t.Context(), slog.LevelWarn))
	require.NoError(t, o.fillDefaults(), "the options are valid")
	local, err := pool.New(o.Local)
	require.NoError(t, err, "and so is the node's pool")
	require.NoError(t, local.Close())

	o, err = optionsFromEnv(env(nil))
	require.NoError(t, err)
	assert.Equal(t, ServeOptions{Pool: "offload"}, o, "the defaults")

	for k, v := range map[string]string{
		EnvWorkers: "six", EnvIsolation: "remote", EnvHeartbeat: "1", EnvDrain: "soon", EnvMemoryLimit: "lots",
		EnvTerminateGrace: "-", EnvMaxTasksPerWorker: "1e3", EnvLogLevel: "loud",
	} {
		_, err := optionsFromEnv(env(map[string]string{k: v}))
		require.Error(t, err, "%s=%s", k, v)
		assert.Contains(t, err.Error(), k)
	}
	o, err = optionsFromEnv(env(map[string]string{EnvMemoryLimit: "1GiB"}))
	require.NoError(t, err)
	_, err = pool.New(o.Local)
	assert.Error(t, err, "a memory limit on an in-process node is refused (by pool.New, as Serve makes the node's pool)")
}

// A node drains DefaultDrain unless told otherwise: OFFLOAD_NATS_DRAIN
// unset or 0 means the default, "none" no drain, and ServeOptions.Drain
// reads the same.
func TestDrainSettings(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 25*time.Second, DefaultDrain, "under Kubernetes' 30 s grace")
	for v, want := range map[string]time.Duration{"": DefaultDrain, "0": DefaultDrain, "0s": DefaultDrain, "none": NoDrain, "None": NoDrain, "2s": 2 * time.Second} {
		o, err := optionsFromEnv(env(map[string]string{EnvDrain: v}))
		require.NoError(t, err, "%q", v)
		require.NoError(t, o.fillDefaults(), "%q", v)
		assert.Equal(t, want, o.Drain, "%s=%q", EnvDrain, v)
	}
	for _, v := range []string{"-1s", "-1", "soon", "never"} {
		_, err := optionsFromEnv(env(map[string]string{EnvDrain: v}))
		require.Error(t, err, "%q", v)
		assert.Contains(t, err.Error(), "none", "the error says how to turn the drain off")
	}
	o := ServeOptions{Pool: "p", Drain: -time.Second}
	assert.ErrorContains(t, o.fillDefaults(), "NoDrain", "NoDrain is the one negative Drain")
}

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"0": 0, "4096": 4096, "512MiB": 512 << 20, "2 GiB": 2 << 30, "10KB": 10_000, "3MB": 3e6, "7B": 7} {
		got, err := parseBytes(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "-1", "1.5GiB", "MiB", "99999999999GiB"} {
		_, err := parseBytes(in)
		assert.Error(t, err, in)
	}
}

// A node's connection takes an NKey seed file and TLS files from its
// environment: with them it connects to a server that asks for them, and
// without them it does not.
func TestConnectOptionsFromEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	user, err := nkeys.CreateUser()
	require.NoError(t, err)
	seed, err := user.Seed()
	require.NoError(t, err)
	public, err := user.PublicKey()
	require.NoError(t, err)
	seedFile := filepath.Join(dir, "node.nk")
	require.NoError(t, os.WriteFile(seedFile, seed, 0o600))
	files := writeTLSFiles(t, dir)

	serverCert, err := tls.LoadX509KeyPair(files.serverCert, files.serverKey)
	require.NoError(t, err)
	s, err := embedded.Start(embedded.Options{
		Listen: true,
		Users:  []embedded.User{{NKey: public, Publish: []string{">"}, Subscribe: []string{">"}}},
		TLS:    &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: files.pool},
	})
	require.NoError(t, err)
	t.Cleanup(s.Shutdown)

	all := map[string]string{EnvNKey: seedFile, EnvTLSCA: files.ca, EnvTLSCert: files.clientCert, EnvTLSKey: files.clientKey}
	opts, err := connectOptionsFromEnv(env(all))
	require.NoError(t, err)
	nc, err := nats.Connect(s.ClientURL(), opts...)
	require.NoError(t, err, "the node's NKey and certificate")
	nc.Close()

	for _, missing := range []string{EnvNKey, EnvTLSCA} {
		some := map[string]string{}
		for k, v := range all {
			if k != missing {
				some[k] = v
			}
		}
		opts, err := connectOptionsFromEnv(env(some))
		require.NoError(t, err)
		_, err = nats.Connect(s.ClientURL(), append(opts, nats.MaxReconnects(0), nats.Timeout(2*time.Second))...)
		assert.Error(t, err, "without %s", missing)
	}

	_, err = connectOptionsFromEnv(env(map[string]string{EnvTLSCert: files.clientCert}))
	assert.ErrorContains(t, err, "go together")
	_, err = connectOptionsFromEnv(env(map[string]string{EnvNKey: filepath.Join(dir, "none")}))
	assert.ErrorContains(t, err, EnvNKey)
}

type tlsFiles struct {
	ca, serverCert, serverKey, clientCert, clientKey string
	pool                                             *x509.CertPool
}

// writeTLSFiles makes a CA, a server certificate for 127.0.0.1 and a
// client certificate, both signed by the CA, as PEM files in dir.
func writeTLSFiles(t *testing.T, dir string) tlsFiles {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "offload test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	f := tlsFiles{ca: filepath.Join(dir, "ca.pem"), pool: x509.NewCertPool()}
	f.pool.AddCert(ca)
	writePEM(t, f.ca, "CERTIFICATE", caDER)

	leaf := func(serial int64, usage x509.ExtKeyUsage, certFile, keyFile *string, name string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		*certFile, *keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		writePEM(t, *certFile, "CERTIFICATE", der)
		writePEM(t, *keyFile, "EC PRIVATE KEY", keyDER)
	}
	leaf(2, x509.ExtKeyUsageServerAuth, &f.serverCert, &f.serverKey, "server")
	leaf(3, x509.ExtKeyUsageClientAuth, &f.clientCert, &f.clientKey, "node")
	return f
}

func writePEM(t *testing.T, file, kind string, der []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
}
