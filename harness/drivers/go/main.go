// The Go driver's executor for the change-stream conformance harness (docs/executor-protocol.md, version 1).
//
// It reads requests from stdin one line at a time and answers each, in order, on stdout; everything else
// goes to stderr. EOF closes every scope and exits 0.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"time"
)

// exitTimeout keeps the EOF close within the harness's 5 s wait (section 1).
const exitTimeout = 4 * time.Second

type executor struct {
	scopes map[string]*scope
	out    *replyWriter
}

func main() {
	if err := loadVocabulary(); err != nil {
		logf("cannot read the vocabulary: %v", err)
		os.Exit(1)
	}
	ex := &executor{scopes: map[string]*scope{}, out: newReplyWriter()}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			ex.handleLine(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				logf("reading stdin: %v", err)
			}
			break
		}
	}
	ex.closeAll()
	os.Exit(0)
}

// handleLine answers one line: exactly one reply for a request with an integer id, nothing for any other line.
func (ex *executor) handleLine(line []byte) {
	req, notRequest, malformed := parseRequest(line)
	if notRequest != nil {
		logf("ignoring a line that is not a request (%v): %.200s", notRequest, line)
		return
	}
	if malformed != nil {
		ex.out.write(req.id, reply{err: asProtoErr(malformed)})
		return
	}
	ex.out.write(req.id, ex.dispatch(req))
}

// dispatch runs one request; a panic in the driver or the executor becomes an `internal` error, so the
// request still gets its one reply.
func (ex *executor) dispatch(req *request) (answer reply) {
	defer func() {
		if recovered := recover(); recovered != nil {
			logf("panic in %s: %v\n%s", req.method, recovered, debug.Stack())
			answer = reply{err: protocolError("internal", fmt.Sprintf("panic in %s: %v", req.method, recovered))}
		}
	}()
	handler, known := methods[req.method]
	if !known {
		return reply{err: notImplemented("method %q is not implemented", req.method)}
	}
	result, err := handler(ex, req)
	if err != nil {
		answer = reply{err: asProtoErr(err)}
		answer.nested = result.nested
		return answer
	}
	return result
}

type method func(*executor, *request) (reply, error)

// methods is every request the executor answers, by the protocol's method name.
var methods = map[string]method{
	"hello":                 (*executor).hello,
	"openScope":             (*executor).openScope,
	"closeScope":            (*executor).closeScope,
	"createEntity":          (*executor).createEntity,
	"run":                   (*executor).run,
	"setEntity":             (*executor).setEntity,
	"events":                (*executor).events,
	"sessionLsid":           (*executor).sessionLsid,
	"sessionState":          (*executor).sessionState,
	"sessionPinnedAddress":  (*executor).sessionPinnedAddress,
	"connectionsCheckedOut": (*executor).connectionsCheckedOut,
	"commandLog":            (*executor).commandLog,
	"echo":                  (*executor).echo,
}

func (ex *executor) scopeOf(req *request) (*scope, error) {
	id, err := req.requiredString("scope")
	if err != nil {
		return nil, err
	}
	s, ok := ex.scopes[id]
	if !ok {
		return nil, invalidRequest("unknown scope %q", id)
	}
	return s, nil
}

// valueReply encodes a BSON result in canonical Extended JSON.
func valueReply(value any, kind string) (reply, error) {
	text, err := encodeValue(value)
	if err != nil {
		return reply{}, protocolError("internal", "cannot encode the result: "+err.Error())
	}
	return reply{ok: true, result: text, resultKind: kind}, nil
}

func (ex *executor) openScope(req *request) (reply, error) {
	id, err := req.requiredString("scope")
	if err != nil {
		return reply{}, err
	}
	uri, err := req.requiredString("uri")
	if err != nil {
		return reply{}, err
	}
	budget, hasBudget, err := req.optionalInt("iterationTimeoutMS")
	if err != nil {
		return reply{}, err
	}
	if !hasBudget {
		budget = 10000
	}
	heartbeat, hasHeartbeat, err := req.optionalInt("heartbeatFrequencyMS")
	if err != nil {
		return reply{}, err
	}
	var heartbeatMS *int64
	if hasHeartbeat {
		heartbeatMS = &heartbeat
	}
	mode, err := iterationMode(req)
	if err != nil {
		return reply{}, err
	}
	if _, taken := ex.scopes[id]; taken {
		return reply{}, invalidRequest("scope %q is already open (closeScope it first)", id)
	}
	ex.scopes[id] = newScope(uri, time.Duration(budget)*time.Millisecond, heartbeatMS, mode)
	return reply{ok: true}, nil
}

// iterationMode is openScope's iterationMode: one of iterationModes, the first when absent or null (section 5).
func iterationMode(req *request) (string, error) {
	mode, err := req.plainString("iterationMode")
	if err != nil {
		return "", err
	}
	if raw, given := req.params["iterationMode"]; !given || string(raw) == "null" {
		return iterationModes[0], nil
	}
	if !slices.Contains(iterationModes, mode) {
		return "", invalidRequest("openScope: iterationMode %q is not one of the Go executor's iteration modes %q", mode, iterationModes)
	}
	return mode, nil
}

func (ex *executor) closeScope(req *request) (reply, error) {
	id, err := req.requiredString("scope")
	if err != nil {
		return reply{}, err
	}
	if s, ok := ex.scopes[id]; ok {
		delete(ex.scopes, id)
		s.close()
	}
	return reply{ok: true}, nil
}

// closeAll closes every open scope at EOF, all at once, for at most exitTimeout.
func (ex *executor) closeAll() {
	var wg sync.WaitGroup
	for id, s := range ex.scopes {
		delete(ex.scopes, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.close()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(exitTimeout):
		logf("scopes still closing after %s at EOF; exiting", exitTimeout)
	}
}

func (ex *executor) createEntity(req *request) (reply, error) {
	s, err := ex.scopeOf(req)
	if err != nil {
		return reply{}, err
	}
	entity, ok, err := req.bsonParam("entity")
	if err != nil {
		return reply{}, err
	}
	if !ok {
		return reply{}, invalidRequest("createEntity needs params.entity")
	}
	if err := s.createEntity(entity); err != nil {
		return reply{}, err
	}
	return reply{ok: true}, nil
}

func (ex *executor) run(req *request) (reply, error) {
	s, err := ex.scopeOf(req)
	if err != nil {
		return reply{}, err
	}
	operation, ok, err := req.bsonParam("operation")
	if err != nil {
		return reply{}, err
	}
	if !ok {
		return reply{}, invalidRequest("run needs params.operation")
	}
	runner := &operationRunner{scope: s, requestID: req.id, budgetMS: req.params["budgetMS"]}
	result, entity, err := runner.run(context.Background(), operation)
	if err != nil {
		return reply{nested: result.nested}, err
	}
	if result.kind == "entity" {
		return reply{ok: true, resultKind: "entity", entity: entity, nested: result.nested}, nil
	}
	answer, err := valueReply(result.value, result.kind)
	answer.nested = result.nested
	return answer, err
}

func (ex *executor) setEntity(req *request) (reply, error) {
	s, err := ex.scopeOf(req)
	if err != nil {
		return reply{}, err
	}
	newID, err := req.requiredString("id")
	if err != nil {
		return reply{}, err
	}
	oldID, err := req.requiredString("entity")
	if err != nil {
		return reply{}, err
	}
	entity, err := s.get(oldID)
	if err != nil {
		return reply{}, err
	}
	if err := s.put(newID, entity); err != nil {
		return reply{}, err
	}
	return reply{ok: true}, nil
}

func (ex *executor) events(req *request) (reply, error) {
	client, err := ex.clientOf(req)
	if err != nil {
		return reply{}, err
	}
	family, err := req.requiredString("eventType")
	if err != nil {
		return reply{}, err
	}
	switch family {
	case "command", "cmap", "sdam":
	default:
		return reply{}, notImplemented("event family %q is not implemented", family)
	}
	return valueReply(client.recorder.list(family), "")
}

func (ex *executor) sessionOf(req *request) (*sessionEntity, error) {
	s, err := ex.scopeOf(req)
	if err != nil {
		return nil, err
	}
	id, err := req.requiredString("session")
	if err != nil {
		return nil, err
	}
	return s.session(id)
}

// clientOf is the client entity a request names in params.client.
func (ex *executor) clientOf(req *request) (*clientEntity, error) {
	s, err := ex.scopeOf(req)
	if err != nil {
		return nil, err
	}
	id, err := req.requiredString("client")
	if err != nil {
		return nil, err
	}
	return s.client(id)
}

// sessionAnswer answers a capability call about the session a request names with what `read` finds.
func (ex *executor) sessionAnswer(req *request, read func(*sessionEntity) (any, error)) (reply, error) {
	session, err := ex.sessionOf(req)
	if err != nil {
		return reply{}, err
	}
	value, err := read(session)
	if err != nil {
		return reply{}, err
	}
	return valueReply(value, "")
}

func (ex *executor) sessionLsid(req *request) (reply, error) {
	return ex.sessionAnswer(req, func(session *sessionEntity) (any, error) { return session.lsid, nil })
}

func (ex *executor) sessionState(req *request) (reply, error) {
	return ex.sessionAnswer(req, func(session *sessionEntity) (any, error) { return sessionState(session) })
}

func (ex *executor) sessionPinnedAddress(req *request) (reply, error) {
	return ex.sessionAnswer(req, func(session *sessionEntity) (any, error) { return sessionPinnedAddress(session) })
}

func (ex *executor) connectionsCheckedOut(req *request) (reply, error) {
	client, err := ex.clientOf(req)
	if err != nil {
		return reply{}, err
	}
	return valueReply(int32(client.recorder.connectionsCheckedOut()), "")
}

func (ex *executor) echo(req *request) (reply, error) {
	value, ok, err := req.bsonParam("value")
	if err != nil {
		return reply{}, err
	}
	if !ok {
		return reply{}, invalidRequest("echo needs params.value")
	}
	return valueReply(value, "")
}
