// What a client observed (section 6.6): command, CMAP and SDAM events through the driver's own monitors,
// kept per family in the order the driver published them, and the count of connections checked out.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver"
)

// poolEventKinds maps the Go driver's pool event types to the unified format's names.
var poolEventKinds = map[string]string{
	event.ConnectionPoolCreated:     "poolCreatedEvent",
	event.ConnectionPoolReady:       "poolReadyEvent",
	event.ConnectionPoolCleared:     "poolClearedEvent",
	event.ConnectionPoolClosed:      "poolClosedEvent",
	event.ConnectionCreated:         "connectionCreatedEvent",
	event.ConnectionReady:           "connectionReadyEvent",
	event.ConnectionClosed:          "connectionClosedEvent",
	event.ConnectionCheckOutStarted: "connectionCheckOutStartedEvent",
	event.ConnectionCheckOutFailed:  "connectionCheckOutFailedEvent",
	event.ConnectionCheckedOut:      "connectionCheckedOutEvent",
	event.ConnectionCheckedIn:       "connectionCheckedInEvent",
}

// recorder keeps one client's events. The driver publishes from its own goroutines, so every list is
// appended under the lock.
type recorder struct {
	mu           sync.Mutex
	observed     map[string]bool // unified event names this client records
	ignored      map[string]bool // commandName -> left out (ignoreCommandMonitoringEvents)
	skipped      map[int64]bool  // request ids whose started event was left out
	events       map[string][]bson.D
	checkedOut   int64
	observesSDAM bool
	// log is the scope's command log and clientID this client's entity id there: every command event goes to
	// it, whatever the client records (section 6.4.2).
	log      *commandLog
	clientID string
}

func newRecorder(clientID string, log *commandLog, observe []string, ignore []string) (*recorder, error) {
	r := &recorder{
		log:      log,
		clientID: clientID,
		observed: map[string]bool{},
		ignored:  map[string]bool{},
		skipped:  map[int64]bool{},
		events:   map[string][]bson.D{},
	}
	for _, name := range observe {
		family, known := eventFamilies[name]
		if !known {
			return nil, notImplemented("observeEvents: event %q is not implemented", name)
		}
		r.observed[name] = true
		if family == "sdam" {
			r.observesSDAM = true
		}
	}
	for _, name := range ignore {
		r.ignored[strings.ToLower(name)] = true
	}
	return r, nil
}

func (r *recorder) add(kind string, event bson.D) {
	if !r.observed[kind] {
		return
	}
	family := eventFamilies[kind]
	r.events[family] = append(r.events[family], append(bson.D{{Key: "kind", Value: kind}}, event...))
}

// list answers an `events` request: a copy, so the recording goes on while the reply is encoded.
func (r *recorder) list(family string) bson.A {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := bson.A{}
	for _, ev := range r.events[family] {
		out = append(out, ev)
	}
	return out
}

func (r *recorder) connectionsCheckedOut() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkedOut
}

// leftOut says whether a started command is not recorded: ignored by name. Sensitive and internal commands are
// recorded as they are; the harness leaves them out (section 7.1).
func (r *recorder) leftOut(name string) bool {
	return r.ignored[strings.ToLower(name)]
}

// commandMonitor builds each event's document once, logs it in the scope's command log, then records it for
// this client unless the client leaves it out.
func (r *recorder) commandMonitor() *event.CommandMonitor {
	return &event.CommandMonitor{
		Started: func(_ context.Context, ev *event.CommandStartedEvent) {
			doc := commonCommandFields(ev.CommandName, ev.DatabaseName, ev.RequestID, ev.ServerConnectionID, ev.ServiceID)
			doc = append(doc, bson.E{Key: "command", Value: ev.Command})
			r.log.add(r.clientID, "commandStartedEvent", doc)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.leftOut(ev.CommandName) {
				r.skipped[ev.RequestID] = true
				return
			}
			r.add("commandStartedEvent", doc)
		},
		Succeeded: func(_ context.Context, ev *event.CommandSucceededEvent) {
			doc := commonCommandFields(ev.CommandName, ev.DatabaseName, ev.RequestID, ev.ServerConnectionID, ev.ServiceID)
			doc = append(doc, bson.E{Key: "reply", Value: ev.Reply}, bson.E{Key: "durationMS", Value: millis(ev.Duration)})
			r.log.add(r.clientID, "commandSucceededEvent", doc)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.skipped[ev.RequestID] {
				delete(r.skipped, ev.RequestID)
				return
			}
			r.add("commandSucceededEvent", doc)
		},
		Failed: func(_ context.Context, ev *event.CommandFailedEvent) {
			doc := commonCommandFields(ev.CommandName, ev.DatabaseName, ev.RequestID, ev.ServerConnectionID, ev.ServiceID)
			doc = append(doc, bson.E{Key: "failure", Value: failureDocument(ev.Failure)}, bson.E{Key: "durationMS", Value: millis(ev.Duration)})
			r.log.add(r.clientID, "commandFailedEvent", doc)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.skipped[ev.RequestID] {
				delete(r.skipped, ev.RequestID)
				return
			}
			r.add("commandFailedEvent", doc)
		},
	}
}

func commonCommandFields(name, database string, requestID int64, serverConnectionID *int64, serviceID *bson.ObjectID) bson.D {
	doc := bson.D{{Key: "commandName", Value: name}, {Key: "databaseName", Value: database}, {Key: "requestId", Value: requestID}}
	if serverConnectionID != nil {
		doc = append(doc, bson.E{Key: "serverConnectionId", Value: *serverConnectionID})
	}
	if serviceID != nil {
		doc = append(doc, bson.E{Key: "serviceId", Value: *serviceID})
	}
	return doc
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// failureDocument is a failed event's `failure` (section 6.6): the server's reply as received for a server
// error, else the error's message and Go type.
func failureDocument(failure error) any {
	var server driver.Error
	if errors.As(failure, &server) {
		if len(server.Raw) > 0 {
			return bson.Raw(server.Raw)
		}
		if server.Code != 0 {
			return bson.D{
				{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: server.Message},
				{Key: "code", Value: server.Code}, {Key: "codeName", Value: server.Name},
			}
		}
	}
	message := "unknown failure"
	if failure != nil {
		message = failure.Error()
	}
	return bson.D{{Key: "errmsg", Value: message}, {Key: "errtype", Value: fmt.Sprintf("%T", failure)}}
}

func (r *recorder) poolMonitor() *event.PoolMonitor {
	return &event.PoolMonitor{Event: func(ev *event.PoolEvent) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch ev.Type {
		case event.ConnectionCheckedOut:
			r.checkedOut++
		case event.ConnectionCheckedIn:
			r.checkedOut--
		}
		kind, known := poolEventKinds[ev.Type]
		if !known {
			return
		}
		doc := bson.D{}
		if ev.Reason != "" && (ev.Type == event.ConnectionClosed || ev.Type == event.ConnectionCheckOutFailed) {
			doc = append(doc, bson.E{Key: "reason", Value: ev.Reason})
		}
		if ev.ServiceID != nil {
			doc = append(doc, bson.E{Key: "serviceId", Value: *ev.ServiceID})
		}
		r.add(kind, doc)
	}}
}

func (r *recorder) serverMonitor() *event.ServerMonitor {
	record := func(kind string, doc bson.D) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.add(kind, doc)
	}
	return &event.ServerMonitor{
		ServerDescriptionChanged: func(ev *event.ServerDescriptionChangedEvent) {
			record("serverDescriptionChangedEvent", bson.D{
				{Key: "previousDescription", Value: bson.D{{Key: "type", Value: ev.PreviousDescription.Kind}}},
				{Key: "newDescription", Value: bson.D{{Key: "type", Value: ev.NewDescription.Kind}}},
			})
		},
		TopologyDescriptionChanged: func(ev *event.TopologyDescriptionChangedEvent) {
			record("topologyDescriptionChangedEvent", bson.D{
				{Key: "previousDescription", Value: bson.D{{Key: "type", Value: ev.PreviousDescription.Kind}}},
				{Key: "newDescription", Value: bson.D{{Key: "type", Value: ev.NewDescription.Kind}}},
			})
		},
		TopologyOpening: func(*event.TopologyOpeningEvent) { record("topologyOpeningEvent", bson.D{}) },
		TopologyClosed:  func(*event.TopologyClosedEvent) { record("topologyClosedEvent", bson.D{}) },
		ServerHeartbeatStarted: func(ev *event.ServerHeartbeatStartedEvent) {
			record("serverHeartbeatStartedEvent", bson.D{{Key: "awaited", Value: ev.Awaited}})
		},
		ServerHeartbeatSucceeded: func(ev *event.ServerHeartbeatSucceededEvent) {
			record("serverHeartbeatSucceededEvent", bson.D{{Key: "awaited", Value: ev.Awaited}})
		},
		ServerHeartbeatFailed: func(ev *event.ServerHeartbeatFailedEvent) {
			record("serverHeartbeatFailedEvent", bson.D{{Key: "awaited", Value: ev.Awaited}})
		},
	}
}
