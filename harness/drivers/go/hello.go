// The handshake (section 4): who the driver is, what the executor can answer. The whole reply is plain JSON.
package main

import (
	"encoding/json"
	"runtime/debug"
	"strings"

	"go.mongodb.org/mongo-driver/v2/version"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// protocolVersion is the version of docs/executor-protocol.md this executor speaks.
const protocolVersion = 1

// driverModule is the module whose release the records name.
const driverModule = "go.mongodb.org/mongo-driver/v2"

// capabilities lists what the executor answers beyond operations (section 4's vocabulary). Log messages are
// not among them: the executor does not map the driver's logger to the unified format's log messages.
// command_log is the scope's command log and run's budgetMS (section 6.4.2: command_log.go, ops_stream.go).
var capabilities = []string{
	"session_lsid", "session_state", "session_pinned_address", "connections_checked_out", "cmap_events", "sdam_events",
	"command_log",
}

// iterationModes are the ways the executor consumes a change stream (section 6.4.1), the default first. Both
// iterate with TryNext: the driver's blocking Next(ctx) can only be stopped at the budget by canceling its
// context, and a canceled context ends the stream for good (ops_stream.go; repro case next-cancel-ends-stream),
// so the next row of 6.4.1 is the non-blocking form here, and the two modes make the same calls.
var iterationModes = []string{"next", "tryNext"}

// driverVersion is the release of the driver module linked into this binary, as the build recorded it (a
// replaced module's replacement version wins); the driver's own constant is the fallback for a build
// without module information.
func driverVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path != driverModule {
				continue
			}
			if dep.Replace != nil && dep.Replace.Version != "" {
				return strings.TrimPrefix(dep.Replace.Version, "v")
			}
			return strings.TrimPrefix(dep.Version, "v")
		}
	}
	return version.Driver
}

func (ex *executor) hello(req *request) (reply, error) {
	if version, ok, err := req.optionalInt("protocolVersion"); err != nil {
		return reply{}, err
	} else if ok && version != protocolVersion {
		logf("the harness speaks protocol %d, this executor %d", version, protocolVersion)
	}
	result := map[string]any{
		"protocolVersion": protocolVersion,
		"driver": map[string]string{
			"name":     "go",
			"version":  driverVersion(),
			"language": "go",
		},
		"capabilities":    capabilities,
		"operations":      operationNames(),
		"fastHeartbeatMS": minHeartbeat.Milliseconds(),
		"minWireVersion":  topology.SupportedWireVersions.Min,
		"iterationModes":  iterationModes,
	}
	text, err := json.Marshal(result)
	if err != nil {
		return reply{}, err
	}
	return reply{ok: true, result: text}, nil
}
