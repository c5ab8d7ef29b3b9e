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
type commandLog struct {
	mu      sync.Mutex
	entries []bson.D
	// sensitive are the started commands (client, request id) whose reply or failure is logged empty too.
	sensitive map[logKey]bool
}

// logKey pairs a succeeded or failed event with its started one; request ids are the driver's, so the client
// is part of the key.
type logKey struct {
	client    string
	requestID int64
}

func newCommandLog() *commandLog {
	return &commandLog{sensitive: map[logKey]bool{}}
}

// started logs a started event (its document as the recorder builds it); a security-sensitive command is
// logged without its command, and its reply or failure will be too.
func (l *commandLog) started(client string, requestID int64, doc bson.D, sensitive bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sensitive {
		l.sensitive[logKey{client, requestID}] = true
		doc = withoutPayload(doc)
	}
	l.append(client, "commandStartedEvent", doc)
}

// finished logs a succeeded or failed event, empty of its reply or failure when its command was sensitive.
func (l *commandLog) finished(client, kind string, requestID int64, doc bson.D) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := logKey{client, requestID}
	if l.sensitive[key] {
		delete(l.sensitive, key)
		doc = withoutPayload(doc)
	}
	l.append(client, kind, doc)
}

// append adds one entry: the event document of section 6.6 with its kind and the client that published it.
// The caller holds the lock.
func (l *commandLog) append(client, kind string, doc bson.D) {
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

// withoutPayload is a sensitive command's document with `command`, `reply` and `failure` empty: the log says
// that it happened, never what it carried. It is a copy: the recorder may keep the original (a client that
// observes sensitive commands).
func withoutPayload(doc bson.D) bson.D {
	out := make(bson.D, len(doc))
	copy(out, doc)
	for i, element := range out {
		switch element.Key {
		case "command", "reply", "failure":
			out[i].Value = bson.D{}
		}
	}
	return out
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
