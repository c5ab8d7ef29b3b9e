// Which `mongodb` release the executor runs: the pinned one in ./node_modules, or another one named by
// `--driver-module SPEC` or the HARNESS_NODE_DRIVER_MODULE environment variable (a package name the
// executor's directory can resolve, or a path to a `node_modules/mongodb` directory), for driver matrices.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** The module specifier the command line or the environment names, or the pinned package. */
export function driverModuleSpec(argv, env) {
  const flag = argv.indexOf('--driver-module');
  if (flag !== -1 && argv[flag + 1]) return argv[flag + 1];
  return env.HARNESS_NODE_DRIVER_MODULE || 'mongodb';
}

/** The version in the package.json of the loaded driver (the release actually loaded, not ours). */
function packageVersion(entryFile) {
  let directory = path.dirname(entryFile);
  while (directory !== path.dirname(directory)) {
    const manifest = path.join(directory, 'package.json');
    if (fs.existsSync(manifest)) {
      const parsed = JSON.parse(fs.readFileSync(manifest, 'utf8'));
      if (parsed.name === 'mongodb') return parsed.version;
    }
    directory = path.dirname(directory);
  }
  throw new Error(`no package.json of the mongodb package above ${entryFile}`);
}

/** The oldest wire version the loaded release supports (an internal constant of the package), or null. */
function minWireVersion(entryFile) {
  try {
    return require(path.join(path.dirname(entryFile), 'cmap', 'wire_protocol', 'constants.js')).MIN_SUPPORTED_WIRE_VERSION ?? null;
  } catch {
    return null;
  }
}

/** `{mongodb, version, minWireVersion}`: the driver module, its release and its oldest wire version. */
export function loadDriver(spec) {
  const isPath = spec.startsWith('.') || path.isAbsolute(spec);
  const entryFile = require.resolve(isPath ? path.resolve(spec) : spec);
  return { mongodb: require(entryFile), version: packageVersion(entryFile), minWireVersion: minWireVersion(entryFile) };
}
