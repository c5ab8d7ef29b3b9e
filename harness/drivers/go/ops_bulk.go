// bulkWrite: the unified format's requests as the driver's write models, and its result shape.
package main

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func init() {
	register(map[string]operation{"bulkWrite": bulkWrite})
}

func bulkWrite(c *call) (outcome, error) {
	coll, err := c.collection()
	if err != nil {
		return outcome{}, err
	}
	requests, _, err := c.args.array("requests")
	if err != nil {
		return outcome{}, err
	}
	models := make([]mongo.WriteModel, 0, len(requests))
	for _, request := range requests {
		model, err := writeModel(request)
		if err != nil {
			return outcome{}, err
		}
		models = append(models, model)
	}
	opts := options.BulkWrite()
	o := &optionReader{args: c.args}
	boolOption(o, "ordered", opts.SetOrdered)
	dataOption(o, "comment", opts.SetComment)
	dataOption(o, "let", opts.SetLet)
	boolOption(o, "bypassDocumentValidation", opts.SetBypassDocumentValidation)
	if err := o.done(); err != nil {
		return outcome{}, err
	}
	result, err := coll.BulkWrite(c.ctx, models, opts)
	if err != nil {
		return outcome{}, err
	}
	return valueOf(bulkWriteResult(result))
}

// bulkWriteResult is the unified format's bulkWrite result. The Go driver does not report inserted ids, so
// insertedIds is left out (section 6.6: never a made-up value).
func bulkWriteResult(result *mongo.BulkWriteResult) bson.D {
	upserted := bson.D{}
	for index, id := range result.UpsertedIDs {
		upserted = append(upserted, bson.E{Key: strconv.FormatInt(index, 10), Value: id})
	}
	return bson.D{
		{Key: "deletedCount", Value: result.DeletedCount},
		{Key: "insertedCount", Value: result.InsertedCount},
		{Key: "matchedCount", Value: result.MatchedCount},
		{Key: "modifiedCount", Value: result.ModifiedCount},
		{Key: "upsertedCount", Value: result.UpsertedCount},
		{Key: "upsertedIds", Value: upserted},
	}
}

// writeModel turns one request ({insertOne: {...}}, {updateOne: {...}}, ...) into the driver's model.
func writeModel(request any) (mongo.WriteModel, error) {
	entry, ok := request.(bson.D)
	if !ok || len(entry) != 1 {
		return nil, invalidRequest("bulkWrite: each request is a document with one key, got %v", request)
	}
	args, err := newArguments("bulkWrite "+entry[0].Key, entry[0].Value)
	if err != nil {
		return nil, err
	}
	o := &optionReader{args: args}
	var model mongo.WriteModel
	switch entry[0].Key {
	case "insertOne":
		document, err := args.requiredData("document")
		if err != nil {
			return nil, err
		}
		model = mongo.NewInsertOneModel().SetDocument(document)
	case "updateOne":
		m := readModelMatch(o, mongo.NewUpdateOneModel())
		model = readModelUpdate(o, m, m.SetUpdate, m.SetArrayFilters)
	case "updateMany":
		m := readModelMatch(o, mongo.NewUpdateManyModel())
		model = readModelUpdate(o, m, m.SetUpdate, m.SetArrayFilters)
	case "replaceOne":
		m := readModelMatch(o, mongo.NewReplaceOneModel())
		dataOption(o, "replacement", m.SetReplacement)
		boolOption(o, "upsert", m.SetUpsert)
		model = m
	case "deleteOne":
		model = readModelMatch(o, mongo.NewDeleteOneModel())
	case "deleteMany":
		model = readModelMatch(o, mongo.NewDeleteManyModel())
	default:
		return nil, notImplemented("bulkWrite: request %q is not implemented", entry[0].Key)
	}
	return model, o.done()
}

// matchModel is what every bulk write model that matches documents takes: a filter, a collation and a hint.
type matchModel[M any] interface {
	SetFilter(any) M
	SetCollation(*options.Collation) M
	SetHint(any) M
}

func readModelMatch[M matchModel[M]](o *optionReader, m M) M {
	dataOption(o, "filter", m.SetFilter)
	collationOption(o, m.SetCollation)
	dataOption(o, "hint", m.SetHint)
	return m
}

// readModelUpdate reads an update model's own arguments (update, upsert, arrayFilters) into it.
func readModelUpdate[M interface{ SetUpsert(bool) M }](o *optionReader, m M, update func(any) M, filters func([]any) M) M {
	dataOption(o, "update", update)
	boolOption(o, "upsert", m.SetUpsert)
	arrayOption(o, "arrayFilters", filters)
	return m
}
