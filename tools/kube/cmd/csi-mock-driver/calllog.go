package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// call is one line of the call log, written when the call returns.
// Method is gRPC's full method name ("/csi.v1.Node/NodePublishVolume",
// "/pluginregistration.Registration/GetInfo"); Code is the gRPC code's
// name ("OK", "NotFound") and Error its message. Request and Response are
// protojson with the proto field names (volume_id, target_path,
// volume_context, as the CSI spec spells them; 64-bit integers as strings,
// enums by name; protojson.Unmarshal reads them back into the csi types);
// Response is absent when the call failed. One line, wrapped here:
//
//	{"time":"2026-12-01T23:39:54.362322426Z","method":"/csi.v1.Node/NodePublishVolume",
//	 "request":{"volume_id":"1","staging_target_path":"/tmp/csimock44207882/staging",
//	 "target_path":"/tmp/csimock44207882/pod/mount","volume_capability":{"mount":{"fs_type":"ext4"},
//	 "access_mode":{"mode":"SINGLE_NODE_WRITER"}},"volume_context":{"csi.storage.k8s.io/pod.name":"p"}},
//	 "response":{},"code":"OK"}
type call struct {
	Time     string          `json:"time"`
	Method   string          `json:"method"`
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response,omitempty"`
	Code     string          `json:"code"`
	Error    string          `json:"error,omitempty"`
}

var marshalOptions = protojson.MarshalOptions{UseProtoNames: true}

// callLog appends one call a line to a file. Each line is one write to
// the file, unbuffered, so a reader sees whole lines as soon as calls
// return. A nil *callLog logs only a short line to stderr. Safe for
// concurrent use.
type callLog struct {
	mu sync.Mutex // guards w: one line at a time
	w  io.WriteCloser
}

// openCallLog opens path for appending, nil when path is empty.
func openCallLog(path string) (*callLog, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open call log %q: %w", path, err)
	}
	return &callLog{w: f}, nil
}

// intercept is a unary interceptor: it runs the call, then logs it.
func (c *callLog) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	st := status.Convert(err)
	log.Printf("csi-mock-driver: %s: %s", info.FullMethod, st.Code())
	if c == nil {
		return resp, err
	}
	line := call{
		Time:    time.Now().UTC().Format(time.RFC3339Nano),
		Method:  info.FullMethod,
		Request: marshal(req),
		Code:    st.Code().String(),
		Error:   st.Message(),
	}
	if err == nil {
		line.Response = marshal(resp)
	}
	b, jerr := json.Marshal(line)
	if jerr != nil {
		log.Printf("csi-mock-driver: encode call log line: %v", jerr)
		return resp, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, werr := c.w.Write(append(b, '\n')); werr != nil {
		log.Printf("csi-mock-driver: write call log: %v", werr)
	}
	return resp, err
}

// marshal is m as protojson, or JSON null when m is no message.
func marshal(m any) json.RawMessage {
	pm, ok := m.(proto.Message)
	if !ok {
		return json.RawMessage("null")
	}
	b, err := marshalOptions.Marshal(pm)
	if err != nil {
		b, _ = json.Marshal("protojson: " + err.Error())
	}
	return b
}

// Close closes the file; nil is a no-op.
func (c *callLog) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.Close()
}
