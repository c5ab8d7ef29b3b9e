// Change streams (section 6.4). The Go driver's Watch sends the aggregate before it returns, so a stream is
// open when createChangeStream replies. Iteration uses the driver's TryNext (one getMore, or the buffer), so
// the scope's iteration budget is checked between getMores and the driver never sees a deadline the
// test did not ask for.
//
// Iteration modes (section 6.4.1): the driver offers Next(ctx), which blocks, and TryNext(ctx). Both the `next`
// mode (the default) and the `tryNext` mode iterate with TryNext, as the `next` row of 6.4.1 says for a driver
// with a non-blocking form, because Next cannot be held to the budget without changing the stream: a deadline on
// its context makes the iteration CSOT (section 6.4), and a context canceled when the budget ends fails the
// running getMore, which the driver takes as resumable, so it resumes under the same canceled context, fails,
// and keeps that error: Next and TryNext return false for ever after (repro case next-cancel-ends-stream).
// Running Next on a goroutine of its own and leaving it running after the budget is no way either: a
// ChangeStream is not safe for concurrent use, and close (or closeScope) would race the Next still running on
// an idle stream, which never returns by itself.
package main

import (
	"bytes"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func init() {
	register(map[string]operation{
		"createChangeStream":          createChangeStream,
		"iterateUntilDocumentOrError": iterateUntilDocumentOrError,
		"iterateOnce":                 iterateOnce,
		"close":                       closeStream,
		"getResumeToken":              getResumeToken,
	})
}

func createChangeStream(c *call) (outcome, error) {
	pipeline, ok := c.args.data("pipeline")
	if !ok {
		pipeline = bson.A{}
	}
	opts := options.ChangeStream()
	o := &optionReader{args: c.args}
	int32Option(o, "batchSize", opts.SetBatchSize)
	collationOption(o, func(c *options.Collation) *options.ChangeStreamOptionsBuilder { return opts.SetCollation(*c) })
	dataOption(o, "comment", opts.SetComment)
	stringOption(o, "fullDocument", func(v string) *options.ChangeStreamOptionsBuilder {
		return opts.SetFullDocument(options.FullDocument(v))
	})
	stringOption(o, "fullDocumentBeforeChange", func(v string) *options.ChangeStreamOptionsBuilder {
		return opts.SetFullDocumentBeforeChange(options.FullDocument(v))
	})
	msOption(o, "maxAwaitTimeMS", opts.SetMaxAwaitTime)
	dataOption(o, "resumeAfter", opts.SetResumeAfter)
	dataOption(o, "startAfter", opts.SetStartAfter)
	boolOption(o, "showExpandedEvents", opts.SetShowExpandedEvents)
	if value, ok := c.args.lookup("startAtOperationTime"); ok {
		timestamp, isTimestamp := value.(bson.Timestamp)
		if !isTimestamp {
			o.fail(invalidRequest("startAtOperationTime must be a Timestamp, got %T", value))
		}
		opts.SetStartAtOperationTime(&timestamp)
	}
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	var stream *mongo.ChangeStream
	var err error
	switch target := c.target.(type) {
	case *clientEntity:
		stream, err = target.client.Watch(c.ctx, pipeline, opts)
	case *mongo.Database:
		stream, err = target.Watch(c.ctx, pipeline, opts)
	case *mongo.Collection:
		stream, err = target.Watch(c.ctx, pipeline, opts)
	default:
		return outcome{}, c.wrongTarget()
	}
	if err != nil {
		return outcome{}, err
	}
	c.scope.freshStreams[stream] = true
	return entityOf(stream)
}

// tryNext is one iteration as the unified format defines iterateOnce: the next buffered document, else one
// getMore. A stream's first TryNext after Watch only consumes the aggregate's first batch (the driver's batch
// cursor hands it out once, without a round trip); when that batch was empty nothing was asked of the server,
// so the one getMore the iteration owes is the driver's next TryNext.
func (s *scope) tryNext(c *call, stream *mongo.ChangeStream) bool {
	fresh := s.freshStreams[stream]
	delete(s.freshStreams, stream)
	if stream.TryNext(c.ctx) {
		return true
	}
	if fresh && stream.Err() == nil && stream.ID() != 0 {
		return stream.TryNext(c.ctx)
	}
	return false
}

// current copies the stream's current document (the driver reuses its batch's memory).
func current(stream *mongo.ChangeStream) bson.Raw {
	return append(bson.Raw(nil), stream.Current...)
}

func iterateUntilDocumentOrError(c *call) (outcome, error) {
	stream, err := c.changeStream()
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	budget, err := c.iterationBudget()
	if err != nil {
		return outcome{}, err
	}
	deadline := time.Now().Add(budget)
	for {
		if c.scope.tryNext(c, stream) {
			return valueOf(current(stream))
		}
		if err := stream.Err(); err != nil {
			return outcome{}, err
		}
		if stream.ID() == 0 {
			return outcome{}, protocolError("noChange", "the change stream's cursor is closed (id 0): no document can arrive")
		}
		if !time.Now().Before(deadline) {
			return outcome{}, protocolError("noChange", fmt.Sprintf("no document arrived within %gs", budget.Seconds()))
		}
	}
}

// iterationBudget is how long iterateUntilDocumentOrError waits for a change: the request's budgetMS when it
// carries one (a slice of the harness's early no-change verdict, section 6.4.2), else the scope's
// iterationTimeoutMS. Either is checked the same way, between TryNexts, in every iteration mode.
func (c *call) iterationBudget() (time.Duration, error) {
	if c.budgetMS == nil || string(bytes.TrimSpace(c.budgetMS)) == "null" {
		return c.scope.iterationTimeout, nil
	}
	ms, ok := plainInt(c.budgetMS)
	if !ok || ms <= 0 {
		return 0, invalidRequest("params.budgetMS must be a positive integer, got %s", c.budgetMS)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func iterateOnce(c *call) (outcome, error) {
	stream, err := c.changeStream()
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	if c.scope.tryNext(c, stream) {
		return valueOf(current(stream))
	}
	if err := stream.Err(); err != nil {
		return outcome{}, err
	}
	return valueOf(nil)
}

func closeStream(c *call) (outcome, error) {
	stream, err := c.changeStream()
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	// The unified format's runner suppresses every error of close (a failed killCursors among them);
	// the Go driver's Close passes that error on, so it is dropped here, and logged (docs/executor-protocol.md,
	// section 6.4, close).
	if err := stream.Close(c.ctx); err != nil {
		logf("close: the driver's error is swallowed: %v", err)
	}
	return valueOf(nil)
}

func getResumeToken(c *call) (outcome, error) {
	stream, err := c.changeStream()
	if err != nil {
		return outcome{}, err
	}
	if err := c.args.unused(); err != nil {
		return outcome{}, err
	}
	token := stream.ResumeToken()
	if token == nil {
		return valueOf(nil)
	}
	return valueOf(append(bson.Raw(nil), token...))
}
