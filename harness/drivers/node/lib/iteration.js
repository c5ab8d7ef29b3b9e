// How the executor consumes a change stream (docs/executor-protocol.md, sections 6.4 and 6.4.1): one
// implementation of `iterateUntilDocumentOrError` and `iterateOnce` per iteration mode, each through the public API
// of the Node driver that the mode names. Cursors that are not change streams are always read the `next` way.
import { invalidRequest } from './codec.js';

/** The modes `hello` declares, the default first (section 4). */
export const ITERATION_MODES = ['next', 'tryNext', 'iterator', 'emitter', 'stream'];

/** The scope's mode from `openScope`'s `iterationMode`: absent or null is the default; an undeclared one is refused. */
export function iterationModeOf(value) {
  if (value === undefined || value === null) return ITERATION_MODES[0];
  if (typeof value !== 'string' || !ITERATION_MODES.includes(value)) {
    throw invalidRequest(
      `iterationMode ${JSON.stringify(value)} is not one of this executor's (${ITERATION_MODES.join(', ')})`,
    );
  }
  return value;
}

const TIMED_OUT = Symbol('timed out');

function timeoutAfter(ms) {
  let timer;
  const promise = new Promise((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

function noChange(message) {
  const error = new Error(message);
  error.kind = 'noChange';
  return error;
}

const budgetSpent = (budgetMS) => noChange(`no document arrived within ${budgetMS / 1000}s`);

/** One turn of the event loop: what the driver delivers through promise callbacks has landed by then. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------------------------------------------------------
// `next` and `tryNext`: the driver's non-blocking `tryNext()`, in a loop under the budget (section 6.4). Node's
// `next` mode is iterated with `tryNext()` as section 6.4.1's table asks of a driver that has a non-blocking form, so
// the two modes make the same calls.

/**
 * An iteration the budget gave up on keeps running (a promise cannot be cancelled); it is kept here per stream or
 * cursor until its outcome is taken, by the next iteration first, so a change it brings is not lost (section 6.4:
 * a stream that ran out of budget stays usable).
 */
const unfinished = new WeakMap();

/**
 * The next document of a change stream or cursor after at most one getMore, or null; with `timeout` (a promise
 * of TIMED_OUT), TIMED_OUT when that comes first, the iteration then left running for the next call.
 */
async function tryNext(target, timeout = null) {
  let attempt = unfinished.get(target);
  if (attempt === undefined) {
    attempt = target.tryNext();
    unfinished.set(target, attempt);
  }
  let next;
  try {
    next = await (timeout === null ? attempt : Promise.race([attempt, timeout]));
  } catch (error) {
    unfinished.delete(target);
    throw error;
  }
  if (next !== TIMED_OUT) unfinished.delete(target);
  return next ?? null;
}

async function tryNextUntilDocumentOrError(target, budgetMS) {
  const deadline = Date.now() + budgetMS;
  while (true) {
    const remaining = deadline - Date.now();
    const timer = timeoutAfter(Math.max(0, remaining));
    let next;
    try {
      next = await tryNext(target, timer.promise);
    } finally {
      timer.cancel();
    }
    if (next !== null && next !== TIMED_OUT) return next;
    // Section 6.4: a stream or cursor the server closed (cursor id 0, after an invalidate) has nothing more to give.
    const closed = next === null && target.closed === true;
    if (closed || next === TIMED_OUT || Date.now() >= deadline) {
      throw noChange(closed ? 'the server closed the cursor' : `no document arrived within ${budgetMS / 1000}s`);
    }
  }
}

const TRY_NEXT = {
  untilDocumentOrError: (stream, budgetMS) => tryNextUntilDocumentOrError(stream, budgetMS),
  once: (stream) => tryNext(stream),
};

// ---------------------------------------------------------------------------------------------------------------
// Watching the getMores of one change stream through its client's command monitoring: `iterateOnce` in the modes
// where the driver, not the executor, decides when to send one (emitter and stream) answers after the first getMore
// the stream sends once the call has begun.

/** client -> the watches waiting for a getMore of one of its streams. */
const watchesByClient = new WeakMap();

function watchesOf(client) {
  let watches = watchesByClient.get(client);
  if (watches === undefined) {
    watches = new Set();
    watchesByClient.set(client, watches);
    client.on('commandStarted', (event) => {
      if (event.commandName !== 'getMore') return;
      for (const watch of watches) watch.started(event);
    });
    const finished = (event, ok) => {
      if (event.commandName !== 'getMore') return;
      for (const watch of watches) watch.finished(event, ok);
    };
    client.on('commandSucceeded', (event) => finished(event, true));
    client.on('commandFailed', (event) => finished(event, false));
  }
  return watches;
}

/**
 * Watches for the first getMore of `stream` that starts from now on; `outcome` is `{ok, count}` once it has succeeded
 * (`count`: the documents of its batch) or failed, and `onDone` is called then. A getMore already under way when the
 * watch begins does not count: it may have been sent before a write the caller wants to see. Call `cancel` when done.
 */
function nextGetMore(client, stream, onDone) {
  const watches = watchesOf(client);
  let requestId = null;
  const watch = {
    outcome: null,
    started(event) {
      const cursorId = stream.cursor?.id;
      if (requestId !== null || cursorId == null) return;
      if (String(event.command?.getMore) === String(cursorId)) requestId = event.requestId;
    },
    finished(event, ok) {
      if (this.outcome !== null || requestId === null || event.requestId !== requestId) return;
      const batch = event.reply?.cursor?.nextBatch;
      this.outcome = { ok, count: ok && Array.isArray(batch) ? batch.length : 0 };
      watches.delete(watch);
      onDone();
    },
    cancel() {
      watches.delete(watch);
    },
  };
  watches.add(watch);
  return watch;
}

// ---------------------------------------------------------------------------------------------------------------
// `iterator`: `for await (const change of stream)`, i.e. one async iterator per stream, stepped with `next()`.

class IteratorConsumer {
  constructor(stream) {
    this.stream = stream;
    this.iterator = null;
    /** A step the budget gave up on (a promise cannot be cancelled): its outcome is the next call's. */
    this.pending = null;
  }

  step() {
    if (this.pending === null) {
      // One iterator for the stream's life: a new one per call would close the stream when the old one is dropped.
      this.iterator ??= this.stream[Symbol.asyncIterator]();
      this.pending = this.iterator.next();
      // Its rejection is taken by whoever awaits the step; a step nobody awaits any more must not be "unhandled".
      this.pending.catch(() => undefined);
    }
    return this.pending;
  }

  /** The step's outcome: the change, or null when the iterator has finished (the stream is closed). */
  async take(step) {
    let outcome;
    try {
      outcome = await step;
    } finally {
      this.pending = null;
    }
    return outcome.done ? null : outcome.value;
  }

  async untilDocumentOrError(budgetMS) {
    const step = this.step();
    const settled = step.then(
      () => 'step',
      () => 'step',
    );
    const timer = timeoutAfter(budgetMS);
    let what;
    try {
      what = await Promise.race([settled, timer.promise]);
    } finally {
      timer.cancel();
    }
    if (what === TIMED_OUT) throw budgetSpent(budgetMS);
    const change = await this.take(step);
    // The async iterator has ended (the stream was closed, also by the iterator after an error): nothing can come.
    if (change === null) throw noChange('the change stream is closed: its iterator has finished');
    return change;
  }

  /**
   * Section 6.4.1: `iterateOnce` is `next`'s, the driver's `tryNext()`. A step left running by a spent budget is
   * iterating already (two iterations at once would race on the cursor): its outcome is taken instead, waiting for it
   * up to the budget, then answering null with the step still running for the next call.
   */
  async once(budgetMS) {
    if (this.pending === null) return tryNext(this.stream);
    const step = this.pending;
    const settled = step.then(
      () => 'step',
      () => 'step',
    );
    const timer = timeoutAfter(budgetMS);
    try {
      if ((await Promise.race([settled, timer.promise])) === TIMED_OUT) return null;
    } finally {
      timer.cancel();
    }
    return this.take(step);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// `emitter` and `stream`: the driver pushes changes (a `'change'` listener, or `'data'` on `stream.stream()`), and
// the executor buffers them, with the errors, in arrival order; the iteration operations take from that buffer.

class BufferedConsumer {
  constructor(stream, client, mode) {
    this.stream = stream;
    this.client = client;
    this.mode = mode;
    /** `{change}` or `{error}`, in the order the driver delivered them. */
    this.items = [];
    this.started = false;
    /** Stream mode: the readable has ended or been destroyed. */
    this.readableDone = false;
    this.wakers = new Set();
  }

  push(item) {
    this.items.push(item);
    this.notify();
  }

  notify() {
    for (const wake of this.wakers) wake();
    this.wakers.clear();
  }

  /** Resolves at the next delivery or state change, or after `ms`. */
  changed(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms));
      this.wakers.add(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Start consuming, at the stream's first iteration: `createChangeStream` has opened it (the aggregate's reply is
   * in), and the driver's mode is still unset, so the listener switches it to emitter mode and starts its flow.
   */
  start() {
    if (this.started) return;
    const { stream } = this;
    if (this.mode === 'emitter') {
      stream.on('error', (error) => this.push({ error }));
      stream.on('close', () => this.notify());
      stream.on('end', () => this.notify());
      stream.on('change', (change) => this.push({ change }));
    } else {
      const readable = stream.stream(); // The driver refuses a closed stream: that error is the operation's.
      readable.on('error', (error) => this.push({ error }));
      readable.on('end', () => {
        this.readableDone = true;
        this.notify();
      });
      readable.on('close', () => {
        this.readableDone = true;
        this.notify();
      });
      readable.on('data', (change) => this.push({ change }));
      this.readable = readable;
    }
    this.started = true;
  }

  /**
   * No change can come any more: the stream was closed (by `close`, or by the driver after the error it delivered),
   * the server closed its cursor (id 0 in a reply, after an invalidate: not a cursor the driver killed) and its batch
   * is drained, or (stream mode) the readable ended. Not while the driver resumes: it kills the old cursor (its id
   * becomes 0 too) before it opens the new one, so the public `closed` is briefly true then, and the stream's own
   * flag is read instead.
   */
  closed() {
    const { stream } = this;
    if (stream.isClosed ?? stream.closed) return true;
    if (this.mode === 'stream' && this.readableDone) return true;
    const cursor = stream.cursor;
    const serverClosed = cursor?.id != null && cursor.id.isZero?.() === true && !cursor.killed;
    return serverClosed && cursor.bufferedCount() === 0;
  }

  take() {
    const item = this.items.shift();
    if (item.error !== undefined) throw item.error;
    return item.change;
  }

  async untilDocumentOrError(budgetMS) {
    this.start();
    const deadline = Date.now() + budgetMS;
    while (true) {
      if (this.items.length > 0) return this.take();
      if (this.closed()) {
        await settle();
        if (this.items.length > 0) continue;
        throw noChange('the change stream is closed');
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw budgetSpent(budgetMS);
      await this.changed(remaining);
    }
  }

  /**
   * Section 6.4.1: the first buffered change or error; else what the stream's next getMore (one sent after this
   * call began, seen in the client's command events) brought; else null once that getMore came back empty. A
   * getMore that failed is either followed by the driver's error (an `'error'` event, then taken here) or by a resume
   * (emitter mode), after which the next getMore is awaited. The budget bounds the wait: a getMore that never comes
   * back answers null.
   */
  async once(budgetMS) {
    let watch = nextGetMore(this.client, this.stream, () => this.notify());
    try {
      this.start();
      const deadline = Date.now() + budgetMS;
      while (true) {
        if (this.items.length > 0) return this.take();
        if (this.closed()) {
          await settle();
          return this.items.length > 0 ? this.take() : null;
        }
        if (watch.outcome !== null) {
          if (watch.outcome.ok && watch.outcome.count === 0) {
            await settle();
            return this.items.length > 0 ? this.take() : null;
          }
          if (!watch.outcome.ok) {
            await settle();
            if (this.items.length > 0) continue;
            watch = nextGetMore(this.client, this.stream, () => this.notify());
          }
          // A batch with documents: they are on their way to the listener.
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0) {
          console.error(`executor: iterateOnce (${this.mode} mode): no getMore came back within ${budgetMS / 1000}s`);
          return null;
        }
        await this.changed(remaining);
      }
    } finally {
      watch.cancel();
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------

/** change stream -> its consumer in the scope's mode (emitter, stream, iterator), made at its first iteration. */
const consumers = new WeakMap();

function consumerOf(scope, stream) {
  let consumer = consumers.get(stream);
  if (consumer === undefined) {
    const { iterationMode } = scope;
    consumer =
      iterationMode === 'iterator'
        ? new IteratorConsumer(stream)
        : new BufferedConsumer(stream, clientOf(scope, stream), iterationMode);
    consumers.set(stream, consumer);
  }
  return consumer;
}

/** The MongoClient a change stream was opened on (for its command events). */
function clientOf(scope, stream) {
  const { MongoClient } = scope.driver.mongodb;
  const parent = stream.parent;
  return parent instanceof MongoClient ? parent : parent.client;
}

/** The change stream or cursor is iterated the `next` way: cursors always, change streams in `next`/`tryNext`. */
function byTryNext(scope, target) {
  const mode = scope.iterationMode ?? ITERATION_MODES[0];
  return mode === 'next' || mode === 'tryNext' || !(target instanceof scope.driver.mongodb.ChangeStream);
}

/**
 * The budget of one `iterateUntilDocumentOrError`: the request's `budgetMS` on a change stream (section 6.4.2, a
 * slice of the harness's), else the scope's `iterationTimeoutMS`. On another cursor `budgetMS` is an unknown field,
 * ignored; on a change stream one that is not a positive integer is refused, not silently widened to the scope's.
 */
function budgetOf(scope, target, budgetMS) {
  if (budgetMS == null || !(target instanceof scope.driver.mongodb.ChangeStream)) return scope.iterationTimeoutMS;
  if (!Number.isInteger(budgetMS) || budgetMS <= 0) {
    throw invalidRequest(`budgetMS must be a positive integer, got ${JSON.stringify(budgetMS)}`);
  }
  return budgetMS;
}

/**
 * `iterateUntilDocumentOrError` (section 6.4) in the scope's iteration mode: the next change, or throws. Every mode
 * takes its budget as an argument, so a slice's `budgetMS` holds to all of section 6.4's rules there as well.
 */
export async function untilDocumentOrError(scope, target, requestedBudgetMS = null) {
  const budgetMS = budgetOf(scope, target, requestedBudgetMS);
  if (byTryNext(scope, target)) return TRY_NEXT.untilDocumentOrError(target, budgetMS);
  return consumerOf(scope, target).untilDocumentOrError(budgetMS);
}

/** `iterateOnce` (section 6.4) in the scope's iteration mode: a change or null. */
export async function once(scope, target) {
  if (byTryNext(scope, target)) return TRY_NEXT.once(target);
  return consumerOf(scope, target).once(scope.iterationTimeoutMS);
}
