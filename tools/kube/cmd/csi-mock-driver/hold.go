package main

import (
	"context"
	"os"
	"time"

	"google.golang.org/grpc"
)

// holdPoll is how often a held call looks at its hold file again.
const holdPoll = 100 * time.Millisecond

// holdPublish returns an interceptor that holds every NodePublishVolume
// while the file hold exists, before the mock sees it: a test makes the
// file, waits for <hold>.held (written as a call starts waiting) to know
// the kubelet is inside the publish, does what it tests (kills the
// kubelet, say), and removes the file to let the call go on. With hold
// empty it holds nothing.
func holdPublish(hold string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if hold == "" || info.FullMethod != "/csi.v1.Node/NodePublishVolume" {
			return handler(ctx, req)
		}
		marked := false
		for {
			if _, err := os.Stat(hold); os.IsNotExist(err) {
				break
			}
			if !marked {
				_ = os.WriteFile(hold+".held", nil, 0o644)
				marked = true
			}
			time.Sleep(holdPoll)
		}
		return handler(ctx, req)
	}
}
