// Reproductions of the Go driver's known deviations (specs/expectations/drivers/go.yml) with the driver alone,
// outside the harness. Each case prints what the driver did; the expectations file quotes the output.
//
// Needs a server that accepts failCommand, e.g. SecantusDB with test commands on:
//
//	python -m secantus --host 127.0.0.1 --port 27999 --storage-path :memory: --enable-test-commands &
//	cd tests/repro/go && go run . -uri mongodb://127.0.0.1:27999/ CASE
//
// CASE is one of the names in `cases` (no CASE runs them all).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// cases maps each reproduction's name to its function.
var cases = map[string]func(uri string) error{
	"cursor-all-empty-batch":  cursorAllEmptyBatch,
	"cursor-timeouts":         cursorTimeouts,
	"missing-resume-token":    missingResumeToken,
	"resume-operation-time":   resumeOperationTime,
	"resume-keeps-startafter": resumeKeepsStartAfter,
}

func main() {
	uri := flag.String("uri", "mongodb://127.0.0.1:27017/", "a server that accepts configureFailPoint")
	flag.Parse()
	names := flag.Args()
	if len(names) == 0 {
		for name := range cases {
			names = append(names, name)
		}
		sort.Strings(names)
	}
	failed := false
	for _, name := range names {
		run, ok := cases[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown case %q\n", name)
			os.Exit(2)
		}
		fmt.Printf("== %s\n", name)
		if err := run(*uri); err != nil {
			fmt.Printf("   repro error: %v\n", err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// commandLog records the commands a client starts, for printing what was sent.
type commandLog struct {
	mu      sync.Mutex
	started []bson.Raw
	replies map[int64]bson.Raw
	order   []int64
}

func newCommandLog() *commandLog { return &commandLog{replies: map[int64]bson.Raw{}} }

func (l *commandLog) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{
		Started: func(_ context.Context, ev *event.CommandStartedEvent) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.started = append(l.started, append(bson.Raw(nil), ev.Command...))
			l.order = append(l.order, ev.RequestID)
		},
		Succeeded: func(_ context.Context, ev *event.CommandSucceededEvent) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.replies[ev.RequestID] = append(bson.Raw(nil), ev.Reply...)
		},
	}
}

// names lists the commands started so far, in order.
func (l *commandLog) names() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.started))
	for _, command := range l.started {
		elements, _ := command.Elements()
		if len(elements) > 0 {
			out = append(out, elements[0].Key())
		}
	}
	return strings.Join(out, ", ")
}

// commands returns the started commands named name, with their replies (nil when none arrived).
func (l *commandLog) commands(name string) (sent []bson.Raw, replies []bson.Raw) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, command := range l.started {
		elements, _ := command.Elements()
		if len(elements) > 0 && elements[0].Key() == name {
			sent = append(sent, command)
			replies = append(replies, l.replies[l.order[i]])
		}
	}
	return sent, replies
}

// connect opens a client on uri with a command log; extra options are applied last.
func connect(uri string, extra ...*options.ClientOptions) (*mongo.Client, *commandLog, error) {
	log := newCommandLog()
	opts := options.Client().ApplyURI(uri).SetMonitor(log.monitor())
	client, err := mongo.Connect(append([]*options.ClientOptions{opts}, extra...)...)
	return client, log, err
}

// failPoint arms failCommand through a client of its own.
func failPoint(uri string, data bson.D) error {
	admin, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer func() { _ = admin.Disconnect(context.Background()) }()
	command := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}}, {Key: "data", Value: data}}
	return admin.Database("admin").RunCommand(context.Background(), command).Err()
}

// changeStreamStage is the $changeStream stage of an aggregate command.
func changeStreamStage(command bson.Raw) bson.Raw {
	stage, _ := command.Lookup("pipeline", "0", "$changeStream").DocumentOK()
	return stage
}

// freshCollection drops and returns repro.<name>, created so a stream can watch it.
func freshCollection(client *mongo.Client, name string) (*mongo.Collection, error) {
	ctx := context.Background()
	coll := client.Database("repro").Collection(name)
	_ = coll.Drop(ctx)
	return coll, client.Database("repro").CreateCollection(ctx, name)
}
