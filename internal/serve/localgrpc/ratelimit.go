package localgrpc

import (
	"context"
	"sync"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"
)

// ErrLimitExceeded is what a request over the rate limit gets, as
// upstream's ErrorLimitExceeded.
var ErrLimitExceeded = status.Error(codes.ResourceExhausted, "rejected by rate limit")

// Limiter is a token bucket of qps tokens a second holding at most burst,
// as upstream's (golang.org/x/time/rate), read at the injected clock's
// time. Safe for concurrent use.
type Limiter struct {
	clock  clock.PassiveClock
	mu     sync.Mutex // guards bucket (rate.Limiter is safe, but AllowN's time must not go back)
	bucket *rate.Limiter
}

// NewLimiter returns a full bucket.
func NewLimiter(clk clock.PassiveClock, qps, burst int) *Limiter {
	return &Limiter{clock: clk, bucket: rate.NewLimiter(rate.Limit(qps), burst)}
}

// Allow takes a token if there is one.
func (l *Limiter) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bucket.AllowN(l.clock.Now(), 1)
}

// RateLimit is upstream's LimiterUnaryServerInterceptor: a unary call
// without a token fails with ErrLimitExceeded before its handler runs.
// Streams are not limited (upstream limits only unary calls).
func RateLimit(l *Limiter) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if !l.Allow() {
			return nil, ErrLimitExceeded
		}
		return handler(ctx, req)
	}
}
