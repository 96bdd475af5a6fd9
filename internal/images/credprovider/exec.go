package credprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	"k8s.io/utils/clock"
	kjson "sigs.k8s.io/json"
)

const (
	// DefaultExecTimeout bounds one plugin run, upstream's catch-all
	// minute.
	DefaultExecTimeout = time.Minute
	// maxResponseBytes caps a plugin's stdout: a response is a few
	// credentials, and a plugin printing more is killed and fails.
	maxResponseBytes = 1 << 20
	// maxStderrBytes is how much of a plugin's stderr is kept for the
	// error message; the rest is discarded.
	maxStderrBytes = 4 << 10
	// waitDelay bounds the wait for the plugin's output pipes after it
	// exited or was killed (a child it left behind may hold them).
	waitDelay = 5 * time.Second

	requestKind  = "CredentialProviderRequest"
	responseKind = "CredentialProviderResponse"
)

// errResponseTooLarge is the error of a plugin that printed more than
// maxResponseBytes.
var errResponseTooLarge = fmt.Errorf("response is larger than %d bytes", maxResponseBytes)

// execPlugin runs one plugin binary with the exec API version of its
// provider. It has no state; run may be called concurrently.
type execPlugin struct {
	name       string
	path       string // binDir/name
	apiVersion string // credentialprovider.kubelet.k8s.io/<version>
	args       []string
	env        []string // the provider's env, NAME=VALUE, after environ
	environ    func() []string
	timeout    time.Duration
	clock      clock.PassiveClock // times runs for the metrics
	metrics    *metrics           // nil records nothing
}

// run executes the plugin for image, as upstream's ExecPlugin:
//
//	environ + env  <path> args... <request.json >response.json
//
// The request is a CredentialProviderRequest of the provider's apiVersion
// on stdin; stdout must hold a CredentialProviderResponse of the same
// version with no unknown fields. The run ends after timeout; stdout is
// capped at maxResponseBytes. Errors never quote stdout, which may hold
// credentials.
func (e *execPlugin) run(ctx context.Context, image string) (*credentialproviderv1.CredentialProviderResponse, error) {
	// The request has the same fields in v1alpha1, v1beta1 and v1 when no
	// service account token is sent, so the v1 type encodes all three.
	req, err := json.Marshal(&credentialproviderv1.CredentialProviderRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: e.apiVersion, Kind: requestKind},
		Image:    image,
	})
	if err != nil {
		return nil, fmt.Errorf("encode credential provider request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	stdout := &cappedBuffer{max: maxResponseBytes, failOver: true}
	stderr := &cappedBuffer{max: maxStderrBytes}
	cmd := exec.CommandContext(ctx, e.path, e.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req), stdout, stderr
	cmd.Env = append(e.environ(), e.env...) // the provider's env wins
	cmd.WaitDelay = waitDelay
	start := e.clock.Now()
	err = cmd.Run()
	e.metrics.observeRun(e.name, e.clock.Since(start), ctx.Err() != nil || err != nil)
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("exec credential provider plugin %q for image %q: %w", e.name, image, ctx.Err())
	case stdout.over:
		return nil, fmt.Errorf("exec credential provider plugin %q for image %q: %w", e.name, image, errResponseTooLarge)
	case err != nil:
		return nil, fmt.Errorf("exec credential provider plugin %q for image %q: %w: %s", e.name, image, err, stderr.buf.String())
	}
	return decodeResponse(stdout.buf.Bytes(), e.apiVersion)
}

// decodeResponse decodes a plugin's stdout strictly: apiVersion must be
// want, kind CredentialProviderResponse, and no field may be unknown,
// duplicated or mis-cased. The v1 type decodes every version: they have
// the same fields.
func decodeResponse(data []byte, want string) (*credentialproviderv1.CredentialProviderResponse, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		// The error may quote the output, so it is not passed on.
		return nil, errors.New("decode credential provider response: not a JSON object")
	}
	if tm.APIVersion != want {
		return nil, fmt.Errorf("decode credential provider response: apiVersion %q does not match the provider's %q", tm.APIVersion, want)
	}
	if tm.Kind != responseKind {
		return nil, fmt.Errorf("decode credential provider response: kind %q, want %q", tm.Kind, responseKind)
	}
	var resp credentialproviderv1.CredentialProviderResponse
	strict, err := kjson.UnmarshalStrict(data, &resp)
	if err != nil {
		return nil, errors.New("decode credential provider response: does not match the CredentialProviderResponse schema")
	}
	if len(strict) > 0 {
		// Strict errors name fields (unknown, duplicate), never values.
		return nil, fmt.Errorf("decode credential provider response: %w", errors.Join(strict...))
	}
	return &resp, nil
}

// cappedBuffer keeps the first max bytes written to it. Past that it
// fails the write when failOver is set (the copy from the plugin stops and
// its pipe closes), or drops the rest silently.
type cappedBuffer struct {
	buf      bytes.Buffer
	max      int
	failOver bool
	over     bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if len(p) <= room {
		return b.buf.Write(p)
	}
	b.over = true
	b.buf.Write(p[:max(room, 0)])
	if b.failOver {
		return max(room, 0), errResponseTooLarge
	}
	return len(p), nil
}
