// Reproduces, with the Node driver alone and outside the harness, how two of its public ways to consume a change stream
// break rules of the change-streams spec that `await stream.next()` / `tryNext()` / `for await` keep (found by
// `harness run --driver node --iteration-mode emitter|stream`, docs/executor-protocol.md section 6.4.1).
// Needs a replica-set server that accepts failCommand, e.g. SecantusDB with test commands on:
//   python -m secantus --port 27999 --storage-path :memory: --enable-test-commands &
//   NODE_PATH=harness/drivers/node/node_modules node tests/repro/node/cs-iteration-modes.cjs mongodb://127.0.0.1:27999/?directConnection=true
// Cases 3 and 4 need a change that arrives without its `_id`, which a modern server refuses to send: the script puts a
// small wire proxy (below) between the driver and the server that deletes `_id` from every change in a cursor batch.
// Seen with mongodb 7.9.0 (read lib/change_stream.js):
//   1 stream(): a resumable getMore error (280 + ResumableChangeStreamError) is not resumed: the readable emits the
//     error and ends; aggregates sent: 1. With on('change') or next(), the same error is resumed (aggregates: 2) and
//     the change written afterwards arrives. ChangeStream.stream() returns the cursor's own readable
//     (`this.cursor.stream()`), outside the resume logic of `_processErrorStreamMode`; its JSDoc says so ("the stream
//     will NOT automatically resume"). Spec: "A change stream MUST attempt to resume a single time if it encounters
//     any resumable error".
//   2 stream(): the cached resume token (stream.resumeToken) is not the `_id` of the last change delivered: the
//     readable bypasses `_processChange`, which is what calls `cursor.cacheResumeToken(change._id)`. Spec ("Updating
//     the Cached Resume Token"): returning a document caches its `_id`.
//   3 on('change'): a change without `_id` is reported through 'error' ("A change stream document has been received
//     that lacks a resume token (_id).") but the stream is not closed: `_streamEvents`' 'data' handler catches the
//     error of `_processChange`, emits it and goes on, so the stream keeps sending getMores and delivers the next
//     change too (with next(), the same error closes the stream). Spec: "Drivers MUST raise an error on the first
//     document received without a resume token ..., and close the change stream."
//   4 stream(): a change without `_id` is delivered as a change, with no error at all (no `_processChange`).
const net = require('node:net');
const { MongoClient, BSON } = require('mongodb');

const uri = process.argv[2] ?? 'mongodb://127.0.0.1:27999/?directConnection=true';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts the aggregates and getMores a client sends. */
function counting(client) {
  const counts = { aggregate: 0, getMore: 0 };
  client.on('commandStarted', (event) => {
    if (event.commandName in counts) counts[event.commandName] += 1;
  });
  return counts;
}

/** Opens a collection stream the way the harness does (the aggregate is sent before anything else). */
async function open(client, name, pipeline = []) {
  const stream = client.db('repro_modes').collection(name).watch(pipeline, { maxAwaitTimeMS: 200 });
  await stream.cursor.cursorInit();
  return stream;
}

/** Consumes `stream` in `mode` for `ms`, collecting what arrives (changes as their documentKey, errors by message). */
async function consume(stream, mode, ms) {
  const seen = [];
  const change = (c) => seen.push(`change ${JSON.stringify(c.documentKey ?? c)}${c._id ? '' : ' (no _id)'}`);
  const error = (e) => seen.push(`error ${e.code ?? ''} ${e.message.slice(0, 90)}`);
  const deadline = Date.now() + ms;
  if (mode === 'emitter') {
    stream.on('error', error);
    stream.on('change', change);
    await sleep(ms);
  } else if (mode === 'stream') {
    const readable = stream.stream();
    readable.on('error', error);
    readable.on('end', () => seen.push('end'));
    readable.on('data', change);
    await sleep(ms);
  } else {
    while (Date.now() < deadline && !stream.closed) {
      try {
        const next = await stream.tryNext();
        if (next !== null) change(next);
      } catch (e) {
        error(e);
      }
    }
  }
  return seen;
}

async function case1(admin) {
  for (const mode of ['next', 'emitter', 'stream']) {
    const client = new MongoClient(uri, { monitorCommands: true });
    await client.connect();
    const counts = counting(client);
    const stream = await open(client, 'resume');
    await admin.db('admin').command({
      configureFailPoint: 'failCommand',
      mode: { times: 1 },
      data: { failCommands: ['getMore'], errorCode: 280, errorLabels: ['ResumableChangeStreamError'] },
    });
    const consuming = consume(stream, mode, 1500);
    await sleep(500);
    await admin.db('repro_modes').collection('resume').insertOne({ mode });
    const seen = await consuming;
    console.log(`1 ${mode.padEnd(7)} aggregates ${counts.aggregate}: ${seen.join('; ') || 'nothing'}`);
    await stream.close().catch(() => undefined);
    await client.close();
  }
}

async function case2(admin) {
  for (const mode of ['next', 'emitter', 'stream']) {
    const client = new MongoClient(uri);
    await client.connect();
    const stream = await open(client, 'tokens');
    const tokens = [];
    const record = (c) => tokens.push(JSON.stringify(c._id) === JSON.stringify(stream.resumeToken));
    if (mode === 'emitter') stream.on('change', record);
    // (The readable outlives stream.close(): its getMore in flight then fails, so it needs an 'error' listener.)
    else if (mode === 'stream') stream.stream().on('error', () => undefined).on('data', record);
    await admin.db('repro_modes').collection('tokens').insertMany([{ n: 1 }, { n: 2 }]);
    if (mode === 'next') for (let i = 0; i < 2; i += 1) record(await stream.next());
    else await sleep(1000);
    console.log(`2 ${mode.padEnd(7)} resumeToken equals the delivered change's _id: ${tokens.join(', ')}`);
    await stream.close().catch(() => undefined);
    await client.close();
  }
}

/** A wire proxy that deletes `_id` from the changes of every cursor batch the server sends (OP_MSG, kind-0 body). */
function idStrippingProxy(target) {
  const [host, port] = new URL(target.replace(/^mongodb:/, 'http:')).host.split(':');
  const server = net.createServer((downstream) => {
    const upstream = net.connect(Number(port), host);
    downstream.pipe(upstream);
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
        const length = pending.readInt32LE(0);
        downstream.write(rewrite(pending.subarray(0, length)));
        pending = pending.subarray(length);
      }
    });
    const end = () => {
      downstream.destroy();
      upstream.destroy();
    };
    upstream.on('error', end).on('close', end);
    downstream.on('error', end).on('close', end);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function rewrite(message) {
  if (message.readInt32LE(12) !== 2013 || message.readUInt32LE(16) !== 0 || message[20] !== 0) return message;
  const body = BSON.deserialize(message.subarray(21), { promoteValues: false, promoteLongs: false });
  const batch = body.cursor?.nextBatch ?? body.cursor?.firstBatch;
  if (!Array.isArray(batch) || !batch.some((change) => change.operationType !== undefined)) return message;
  for (const change of batch) delete change._id;
  const rewritten = Buffer.from(BSON.serialize(body));
  const header = Buffer.from(message.subarray(0, 21));
  header.writeInt32LE(21 + rewritten.length, 0);
  return Buffer.concat([header, rewritten]);
}

async function cases3and4(admin) {
  const proxy = await idStrippingProxy(uri);
  const proxied = `mongodb://127.0.0.1:${proxy.address().port}/?directConnection=true`;
  for (const mode of ['next', 'emitter', 'stream']) {
    const client = new MongoClient(proxied, { monitorCommands: true });
    await client.connect();
    const counts = counting(client);
    const stream = await open(client, 'noid');
    const consuming = consume(stream, mode, 1500);
    await sleep(300);
    await admin.db('repro_modes').collection('noid').insertOne({ _id: `${mode}-1` });
    await sleep(300);
    await admin.db('repro_modes').collection('noid').insertOne({ _id: `${mode}-2` });
    const seen = await consuming;
    const getMores = counts.getMore;
    await sleep(600);
    console.log(
      `${mode === 'stream' ? 4 : 3} ${mode.padEnd(7)} ${seen.join('; ') || 'nothing'} | closed: ${stream.closed}, ` +
        `getMores still sent afterwards: ${counts.getMore - getMores}`,
    );
    await stream.close().catch(() => undefined);
    await client.close();
  }
  proxy.close();
}

(async () => {
  const admin = new MongoClient(uri);
  await admin.connect();
  await case1(admin);
  await case2(admin);
  await cases3and4(admin);
  await admin.close();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
