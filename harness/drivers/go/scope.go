// Scopes (section 5): one test's entities by id, closed in reverse order of creation, whatever state
// they are in.
package main

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// closeTimeout bounds each driver object's close, so EOF handling fits the harness's 5 s (section 1).
const closeTimeout = 2 * time.Second

// clientEntity is a client with what it observes.
type clientEntity struct {
	client   *mongo.Client
	recorder *recorder
}

// sessionEntity is a session and its lsid, remembered at creation (section 6.1).
type sessionEntity struct {
	session *mongo.Session
	lsid    bson.Raw
	ended   bool
}

// scope is one test's set of entities; ids are per scope.
type scope struct {
	uri                  string
	iterationTimeout     time.Duration
	heartbeatFrequencyMS *int64
	// iterationMode is how every change stream of the scope is consumed (section 6.4.1, iterationModes).
	iterationMode string
	entities      map[string]any
	order         []string // creation order, for closing in reverse
	// freshStreams are change streams not iterated since Watch (see tryNext).
	freshStreams map[*mongo.ChangeStream]bool
	// log is every command event of the scope's clients (section 6.4.2), kept until the scope closes.
	log *commandLog
}

func newScope(uri string, iterationTimeout time.Duration, heartbeat *int64, iterationMode string) *scope {
	return &scope{
		uri: uri, iterationTimeout: iterationTimeout, heartbeatFrequencyMS: heartbeat, iterationMode: iterationMode,
		entities: map[string]any{}, freshStreams: map[*mongo.ChangeStream]bool{}, log: newCommandLog(),
	}
}

func (s *scope) put(id string, entity any) error {
	if _, taken := s.entities[id]; taken {
		return invalidRequest("entity id %q is already taken in this scope", id)
	}
	s.entities[id] = entity
	s.order = append(s.order, id)
	return nil
}

func (s *scope) get(id string) (any, error) {
	entity, ok := s.entities[id]
	if !ok {
		return nil, invalidRequest("unknown entity %q", id)
	}
	return entity, nil
}

func (s *scope) client(id string) (*clientEntity, error) {
	entity, err := s.get(id)
	if err != nil {
		return nil, err
	}
	client, ok := entity.(*clientEntity)
	if !ok {
		return nil, invalidRequest("entity %q is not a client", id)
	}
	return client, nil
}

func (s *scope) database(id string) (*mongo.Database, error) {
	entity, err := s.get(id)
	if err != nil {
		return nil, err
	}
	database, ok := entity.(*mongo.Database)
	if !ok {
		return nil, invalidRequest("entity %q is not a database", id)
	}
	return database, nil
}

func (s *scope) session(id string) (*sessionEntity, error) {
	entity, err := s.get(id)
	if err != nil {
		return nil, err
	}
	session, ok := entity.(*sessionEntity)
	if !ok {
		return nil, invalidRequest("entity %q is not a session", id)
	}
	return session, nil
}

// close closes change streams and cursors, ends sessions, then disconnects clients; errors are dropped
// because closeScope must succeed for a half-broken scope (section 5).
func (s *scope) close() {
	kinds := []func(any) bool{closeCursor, endSession, disconnectClient}
	for _, closeOne := range kinds {
		for i := len(s.order) - 1; i >= 0; i-- {
			if entity, ok := s.entities[s.order[i]]; ok && closeOne(entity) {
				delete(s.entities, s.order[i])
			}
		}
	}
	s.entities = map[string]any{}
	s.order = nil
}

func withCloseTimeout(do func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	do(ctx)
}

func closeCursor(entity any) bool {
	switch cursor := entity.(type) {
	case *mongo.ChangeStream:
		withCloseTimeout(func(ctx context.Context) { _ = cursor.Close(ctx) })
	case *mongo.Cursor:
		withCloseTimeout(func(ctx context.Context) { _ = cursor.Close(ctx) })
	default:
		return false
	}
	return true
}

func endSession(entity any) bool {
	session, ok := entity.(*sessionEntity)
	if ok && !session.ended {
		session.ended = true
		withCloseTimeout(func(ctx context.Context) { session.session.EndSession(ctx) })
	}
	return ok
}

func disconnectClient(entity any) bool {
	client, ok := entity.(*clientEntity)
	if ok {
		withCloseTimeout(func(ctx context.Context) { _ = client.client.Disconnect(ctx) })
	}
	return ok
}
