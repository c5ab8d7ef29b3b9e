// The harness's shared vocabulary (docs/executor-protocol.md section 12), read once at start-up: the file the
// harness names in HARNESS_VOCABULARY, else the one beside this executor in the harness's tree (a run by hand).
import { readFileSync } from 'node:fs';

const path = process.env.HARNESS_VOCABULARY || new URL('../../../core/vocabulary.json', import.meta.url);

/** The whole file: `operations`, `argumentTypes`, `commands`, `events`... */
export const VOCABULARY = JSON.parse(readFileSync(path, 'utf8'));

/** The unified format's event name -> its family (`command`, `cmap`, `sdam`), as an `events` request names it. */
export const EVENT_FAMILY = Object.fromEntries(
  Object.entries(VOCABULARY.events).flatMap(([family, names]) => names.map((name) => [name, family])),
);
