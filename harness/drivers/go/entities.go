// createEntity (section 6.1): clients, databases, collections and sessions from the unified format's
// createEntities entries, with every option handed to the driver or refused.
package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
)

// minHeartbeat is the Go driver's floor for heartbeatFrequencyMS (ClientOptions.Validate refuses less).
const minHeartbeat = 500 * time.Millisecond

func (s *scope) createEntity(value any) error {
	entry, ok := value.(bson.D)
	if !ok || len(entry) != 1 {
		return invalidRequest("entity must be a document with one key (client, database, collection, session)")
	}
	kind := entry[0].Key
	args, err := newArguments(kind+" entity", entry[0].Value)
	if err != nil {
		return err
	}
	id, err := args.requiredString("id")
	if err != nil {
		return err
	}
	if _, taken := s.entities[id]; taken {
		return invalidRequest("entity id %q is already taken in this scope", id)
	}
	var entity any
	switch kind {
	case "client":
		entity, err = s.newClient(id, args)
	case "database":
		entity, err = s.newDatabase(args)
	case "collection":
		entity, err = s.newCollection(args)
	case "session":
		entity, err = s.newSession(args)
	default:
		return notImplemented("entity type %q is not implemented", kind)
	}
	if err != nil {
		return err
	}
	return s.put(id, entity)
}

func (s *scope) newClient(id string, args *arguments) (*clientEntity, error) {
	uriOptions, _, err := args.document("uriOptions")
	if err != nil {
		return nil, err
	}
	single := false
	if multiple, ok, err := args.boolean("useMultipleMongoses"); err != nil {
		return nil, err
	} else if ok {
		single = !multiple
	}
	observe, err := args.stringList("observeEvents")
	if err != nil {
		return nil, err
	}
	ignore, err := args.stringList("ignoreCommandMonitoringEvents")
	if err != nil {
		return nil, err
	}
	// observeSensitiveCommands is the harness's to apply (section 7.1): read here so that it is not refused.
	if _, _, err := args.boolean("observeSensitiveCommands"); err != nil {
		return nil, err
	}
	serverAPI, hasServerAPI, err := args.document("serverApi")
	if err != nil {
		return nil, err
	}
	if err := args.unused(); err != nil {
		return nil, err
	}

	uri, err := clientURI(s.uri, uriOptions, single)
	if err != nil {
		return nil, err
	}
	rec, err := newRecorder(id, s.log, observe, ignore)
	if err != nil {
		return nil, err
	}
	opts := options.Client().ApplyURI(uri).SetMonitor(rec.commandMonitor()).SetPoolMonitor(rec.poolMonitor())
	if rec.observesSDAM {
		opts.SetServerMonitor(rec.serverMonitor())
	}
	if s.heartbeatFrequencyMS != nil && !hasKeyFold(uriOptions, "heartbeatFrequencyMS") {
		opts.SetHeartbeatInterval(max(time.Duration(*s.heartbeatFrequencyMS)*time.Millisecond, minHeartbeat))
	}
	if hasServerAPI {
		api, err := serverAPIOptions(serverAPI)
		if err != nil {
			return nil, err
		}
		opts.SetServerAPIOptions(api)
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, err
	}
	return &clientEntity{client: client, recorder: rec}, nil
}

// clientURI is the scope's URI with the client's uriOptions merged in (an option in uriOptions wins) and,
// for useMultipleMongoses: false, only its first host. The driver's own parser then validates it: a value it
// rejects is its error; an option it does not know is refused (it would be ignored silently).
func clientURI(base string, uriOptions bson.D, firstHostOnly bool) (string, error) {
	prefix, query, _ := strings.Cut(base, "?")
	if firstHostOnly && strings.HasPrefix(prefix, "mongodb://") {
		prefix = firstHost(prefix)
	}
	var kept []string
	for _, pair := range strings.Split(query, "&") {
		name, _, _ := strings.Cut(pair, "=")
		if pair != "" && !hasKeyFold(uriOptions, name) {
			kept = append(kept, pair)
		}
	}
	for _, option := range uriOptions {
		text, err := uriOptionText(option.Key, option.Value)
		if err != nil {
			return "", err
		}
		kept = append(kept, url.QueryEscape(option.Key)+"="+url.QueryEscape(text))
	}
	if !strings.Contains(strings.TrimPrefix(strings.TrimPrefix(prefix, "mongodb://"), "mongodb+srv://"), "/") {
		prefix += "/"
	}
	uri := prefix
	if len(kept) > 0 {
		uri += "?" + strings.Join(kept, "&")
	}
	parsed, err := connstring.Parse(uri)
	if err != nil {
		return "", err
	}
	for name := range parsed.UnknownOptions {
		if hasKeyFold(uriOptions, name) {
			return "", notImplemented("uriOptions: %q is not an option the Go driver knows", name)
		}
	}
	for _, name := range parsedNotApplied {
		if hasKeyFold(uriOptions, name) {
			return "", notImplemented("uriOptions: %q is parsed by the Go driver v2 and never applied (the driver "+
				"dropped it for client-side operation timeouts), so a test that relies on it cannot run", name)
		}
	}
	return uri, nil
}

// parsedNotApplied are options the v2 driver's connection-string parser accepts but nothing in the driver reads:
// x/mongo/driver/connstring sets SocketTimeout, and no client option or topology setting uses it (v2.10.0).
// A test that needs one would run without it and fail for a reason that is not the rule it checks.
var parsedNotApplied = []string{"socketTimeoutMS"}

// firstHost keeps the first host of a mongodb:// URI's host list.
func firstHost(prefix string) string {
	rest := strings.TrimPrefix(prefix, "mongodb://")
	hosts, path, hasPath := strings.Cut(rest, "/")
	userinfo := ""
	if at := strings.LastIndex(hosts, "@"); at >= 0 {
		userinfo, hosts = hosts[:at+1], hosts[at+1:]
	}
	first, _, _ := strings.Cut(hosts, ",")
	out := "mongodb://" + userinfo + first
	if hasPath {
		out += "/" + path
	}
	return out
}

// uriOptionText writes one uriOptions value as the connection string spells it.
func uriOptionText(name string, value any) (string, error) {
	switch v := value.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int32, int64:
		return fmt.Sprint(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bson.D:
		pairs := make([]string, 0, len(v))
		for _, element := range v {
			text, err := uriOptionText(name, element.Value)
			if err != nil {
				return "", err
			}
			pairs = append(pairs, element.Key+":"+text)
		}
		return strings.Join(pairs, ","), nil
	}
	return "", notImplemented("uriOptions: %s of type %T is not implemented", name, value)
}

func hasKeyFold(doc bson.D, name string) bool {
	for _, element := range doc {
		if strings.EqualFold(element.Key, name) {
			return true
		}
	}
	return false
}

func serverAPIOptions(doc bson.D) (*options.ServerAPIOptions, error) {
	args, err := newArguments("serverApi", doc)
	if err != nil {
		return nil, err
	}
	version, err := args.requiredString("version")
	if err != nil {
		return nil, err
	}
	api := options.ServerAPI(options.ServerAPIVersion(version))
	if strict, ok, err := args.boolean("strict"); err != nil {
		return nil, err
	} else if ok {
		api.SetStrict(strict)
	}
	if deprecation, ok, err := args.boolean("deprecationErrors"); err != nil {
		return nil, err
	} else if ok {
		api.SetDeprecationErrors(deprecation)
	}
	return api, args.unused()
}

func (s *scope) newDatabase(args *arguments) (*mongo.Database, error) {
	clientID, err := args.requiredString("client")
	if err != nil {
		return nil, err
	}
	name, err := args.requiredString("databaseName")
	if err != nil {
		return nil, err
	}
	client, err := s.client(clientID)
	if err != nil {
		return nil, err
	}
	opts := options.Database()
	if raw, ok := args.lookup("databaseOptions"); ok {
		dbArgs, err := newArguments("databaseOptions", raw)
		if err != nil {
			return nil, err
		}
		if err := readConcernsInto(dbArgs, opts.SetReadConcern, opts.SetWriteConcern, opts.SetReadPreference); err != nil {
			return nil, err
		}
	}
	if err := args.unused(); err != nil {
		return nil, err
	}
	return client.client.Database(name, opts), nil
}

func (s *scope) newCollection(args *arguments) (*mongo.Collection, error) {
	databaseID, err := args.requiredString("database")
	if err != nil {
		return nil, err
	}
	name, err := args.requiredString("collectionName")
	if err != nil {
		return nil, err
	}
	database, err := s.database(databaseID)
	if err != nil {
		return nil, err
	}
	opts := options.Collection()
	if raw, ok := args.lookup("collectionOptions"); ok {
		collArgs, err := newArguments("collectionOptions", raw)
		if err != nil {
			return nil, err
		}
		if err := readConcernsInto(collArgs, opts.SetReadConcern, opts.SetWriteConcern, opts.SetReadPreference); err != nil {
			return nil, err
		}
	}
	if err := args.unused(); err != nil {
		return nil, err
	}
	return database.Collection(name, opts), nil
}

// readConcernsInto hands an options document's readConcern, writeConcern and readPreference to the driver's
// setters and refuses anything else in it.
func readConcernsInto[T any](args *arguments,
	setRC func(*readconcern.ReadConcern) T, setWC func(*writeconcern.WriteConcern) T, setRP func(*readpref.ReadPref) T,
) error {
	if raw, ok := args.lookup("readConcern"); ok {
		rc, err := readConcernOf(args.owner, raw)
		if err != nil {
			return err
		}
		setRC(rc)
	}
	if raw, ok := args.lookup("writeConcern"); ok {
		wc, err := writeConcernOf(args.owner, raw)
		if err != nil {
			return err
		}
		setWC(wc)
	}
	if raw, ok := args.lookup("readPreference"); ok {
		rp, err := readPreferenceOf(args.owner, raw)
		if err != nil {
			return err
		}
		setRP(rp)
	}
	return args.unused()
}

func (s *scope) newSession(args *arguments) (*sessionEntity, error) {
	clientID, err := args.requiredString("client")
	if err != nil {
		return nil, err
	}
	client, err := s.client(clientID)
	if err != nil {
		return nil, err
	}
	opts := options.Session()
	if raw, ok := args.lookup("sessionOptions"); ok {
		sessionArgs, err := newArguments("sessionOptions", raw)
		if err != nil {
			return nil, err
		}
		if causal, ok, err := sessionArgs.boolean("causalConsistency"); err != nil {
			return nil, err
		} else if ok {
			opts.SetCausalConsistency(causal)
		}
		if snapshot, ok, err := sessionArgs.boolean("snapshot"); err != nil {
			return nil, err
		} else if ok {
			opts.SetSnapshot(snapshot)
		}
		if raw, ok := sessionArgs.lookup("defaultTransactionOptions"); ok {
			txnArgs, err := newArguments("defaultTransactionOptions", raw)
			if err != nil {
				return nil, err
			}
			txn, err := transactionOptions(txnArgs)
			if err != nil {
				return nil, err
			}
			opts.SetDefaultTransactionOptions(txn)
		}
		if err := sessionArgs.unused(); err != nil {
			return nil, err
		}
	}
	if err := args.unused(); err != nil {
		return nil, err
	}
	session, err := client.client.StartSession(opts)
	if err != nil {
		return nil, err
	}
	return &sessionEntity{session: session, lsid: append(bson.Raw(nil), session.ID()...)}, nil
}

// transactionOptions reads a transaction's options (startTransaction, withTransaction, a session's defaults)
// and refuses any other argument left unread.
func transactionOptions(args *arguments) (*options.TransactionOptionsBuilder, error) {
	opts := options.Transaction()
	if err := readConcernsInto(args, opts.SetReadConcern, opts.SetWriteConcern, opts.SetReadPreference); err != nil {
		return nil, err
	}
	return opts, nil
}
