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
		m := mongo.NewUpdateOneModel()
		dataOption(o, "filter", m.SetFilter)
		dataOption(o, "update", m.SetUpdate)
		boolOption(o, "upsert", m.SetUpsert)
		arrayOption(o, "arrayFilters", m.SetArrayFilters)
		collationOption(o, m.SetCollation)
		dataOption(o, "hint", m.SetHint)
		model = m
	case "updateMany":
		m := mongo.NewUpdateManyModel()
		dataOption(o, "filter", m.SetFilter)
		dataOption(o, "update", m.SetUpdate)
		boolOption(o, "upsert", m.SetUpsert)
		arrayOption(o, "arrayFilters", m.SetArrayFilters)
		collationOption(o, m.SetCollation)
		dataOption(o, "hint", m.SetHint)
		model = m
	case "replaceOne":
		m := mongo.NewReplaceOneModel()
		dataOption(o, "filter", m.SetFilter)
		dataOption(o, "replacement", m.SetReplacement)
		boolOption(o, "upsert", m.SetUpsert)
		collationOption(o, m.SetCollation)
		dataOption(o, "hint", m.SetHint)
		model = m
	case "deleteOne":
		m := mongo.NewDeleteOneModel()
		dataOption(o, "filter", m.SetFilter)
		collationOption(o, m.SetCollation)
		dataOption(o, "hint", m.SetHint)
		model = m
	case "deleteMany":
		m := mongo.NewDeleteManyModel()
		dataOption(o, "filter", m.SetFilter)
		collationOption(o, m.SetCollation)
		dataOption(o, "hint", m.SetHint)
		model = m
	default:
		return nil, notImplemented("bulkWrite: request %q is not implemented", entry[0].Key)
	}
	return model, o.done()
}
