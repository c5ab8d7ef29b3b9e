// The scope's command log (section 6.4.2, capability command_log): every command event of every client of the
// scope, whatever the client observes, in one list in the order the driver published them, so the harness can
// tell from the commands sent and the replies received when waiting longer for a change cannot help.
package main

import (
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// commandLog is one scope's log. Each client's recorder appends to it from the driver's goroutines, so the
// whole list is appended under one lock: that lock's order is the publication order across the clients.
// Sensitive commands are logged as the driver published them: the harness blanks them (section 7.1).
type commandLog struct {
	mu      sync.Mutex
	entries []bson.D
}

func newCommandLog() *commandLog {
	return &commandLog{}
}

// add logs one event: the event document of section 6.6 with its kind and the client that published it.
func (l *commandLog) add(client, kind string, doc bson.D) {
	l.mu.Lock()
	defer l.mu.Unlock()
	entry := append(bson.D{{Key: "kind", Value: kind}, {Key: "client", Value: client}}, doc...)
	l.entries = append(l.entries, entry)
}

// from answers a commandLog request: the entries from index `from` to the end, a copy, so the log goes on
// growing while the reply is encoded. An index past the end is a count the harness lost: refused (ok false),
// never answered with an empty array that would hide the entries it missed.
func (l *commandLog) from(index int64) (bson.A, int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if index > int64(len(l.entries)) {
		return nil, len(l.entries), false
	}
	out := bson.A{}
	for i := index; i < int64(len(l.entries)); i++ {
		out = append(out, l.entries[i])
	}
	return out, len(l.entries), true
}

func (ex *executor) commandLog(req *request) (reply, error) {
	s, err := ex.scopeOf(req)
	if err != nil {
		return reply{}, err
	}
	from, ok, err := req.optionalInt("from")
	if err != nil {
		return reply{}, err
	}
	if !ok || from < 0 {
		return reply{}, invalidRequest("commandLog needs params.from, an integer >= 0")
	}
	entries, length, within := s.log.from(from)
	if !within {
		return reply{}, invalidRequest("commandLog: from %d is past the log's end (%d entries)", from, length)
	}
	return valueReply(entries, "")
}
