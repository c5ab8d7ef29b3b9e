// Reproduces the Node driver's CS-CURSOR-TIMEOUTS deviation (specs/expectations/drivers/node.yml) with the driver alone,
// outside the harness. Needs a server that accepts failCommand, e.g. SecantusDB with test commands on:
//   python -m secantus --port 27999 --enable-test-commands &   (or the harness's embedded target)
//   NODE_PATH=harness/drivers/node/node_modules node tests/repro/node/cs-cursor-timeouts.cjs mongodb://127.0.0.1:27999/?directConnection=true
// Seen with mongodb 7.9.0: '1 aggregate: no error after ~605 ms', '2 getMore: returned null after ~2003 ms',
// '3 resume error MongoServerError 280 after ~1209 ms': timeoutMS given to watch() bounds none of them.
const { MongoClient } = require('mongodb');
(async () => {
  const uri = process.argv[2];
  const admin = new MongoClient(uri); await admin.connect();
  const client = new MongoClient(uri, { monitorCommands: true }); await client.connect();
  const coll = client.db('repro').collection('timeouts');
  await admin.db('repro').collection('timeouts').insertOne({ x: 1 });
  const fp = (cmd, ms) => admin.db('admin').command({ configureFailPoint: 'failCommand', mode: { times: 1 }, data: { failCommands: [cmd], blockConnection: true, blockTimeMS: ms } });
  await fp('aggregate', 600);
  let t = Date.now();
  const cs = coll.watch([], { timeoutMS: 150 });
  try { await cs.cursor.cursorInit(); console.log('1 aggregate: no error after', Date.now() - t, 'ms'); }
  catch (e) { console.log('1 aggregate error', e.constructor.name, Date.now() - t); }
  const cs2 = coll.watch([], { timeoutMS: 400 }); await cs2.cursor.cursorInit();
  await fp('getMore', 1000); t = Date.now();
  try { const d = await cs2.tryNext(); console.log('2 getMore: returned', d, 'after', Date.now() - t, 'ms'); }
  catch (e) { console.log('2 getMore error', e.constructor.name, e.message, Date.now() - t); }
  await client.close(); await admin.close();
})();
// Case 3 (the resume): getMore and the resuming aggregate each block 600 ms and fail with 280; timeoutMS 1000.
(async () => {
  await new Promise((r) => setTimeout(r, 3000));
  const uri = process.argv[2];
  const admin = new MongoClient(uri); await admin.connect();
  const client = new MongoClient(uri); await client.connect();
  const cs = client.db('repro').collection('timeouts').watch([], { timeoutMS: 1000 }); await cs.cursor.cursorInit();
  await admin.db('admin').command({ configureFailPoint: 'failCommand', mode: { times: 2 }, data: { failCommands: ['getMore', 'aggregate'], blockConnection: true, blockTimeMS: 600, errorCode: 280, errorLabels: ['ResumableChangeStreamError'] } });
  const t = Date.now();
  try { console.log('3 resume: returned', await cs.tryNext()); } catch (e) { console.log('3 resume error', e.constructor.name, e.code, 'after', Date.now() - t, 'ms'); }
  await client.close(); await admin.close();
})();
