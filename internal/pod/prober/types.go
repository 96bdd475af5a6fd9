package prober

// ProbeType is the kind of probe a worker runs.
type ProbeType int

const (
	Liveness ProbeType = iota
	Readiness
	Startup
)

// String returns upstream's probe type name, used in events and metrics.
func (t ProbeType) String() string {
	switch t {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	}
	return "Unknown"
}

// Result is a probe verdict about one container instance, after
// thresholds (upstream's results.Result).
type Result int

const (
	// Unknown: not probed yet (the initial startup result).
	Unknown Result = iota
	Success
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "UNKNOWN"
}

// initialResult is the result a new container instance starts with:
// readiness Failure, liveness Success, startup Unknown (as upstream).
func initialResult(t ProbeType) Result {
	switch t {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	}
	return Unknown
}

// outcome is what one handler run says (upstream's probe.Result).
type outcome int

const (
	outcomeSuccess outcome = iota
	outcomeWarning
	outcomeFailure
	outcomeUnknown
)

func (o outcome) String() string {
	switch o {
	case outcomeSuccess:
		return "success"
	case outcomeWarning:
		return "warning"
	case outcomeFailure:
		return "failure"
	}
	return "unknown"
}
