// `run_js`: runs the model's JavaScript in a fresh engine (SpiderMonkey,
// through ComponentizeJS) inside the tool's cell. The cell is the
// boundary: the code sees the workspace's folders as the grant allows, no
// network, no programs, no environment; the host's deadline, memory cap and
// output cap hold whatever the code does. This file runs the code and
// reports what happened.
//
// Args `{"code": "...", "args": ["..."], "stdin": "..."}`; result
// `{stdout, stderr, value, error, cut}` as `run_python`'s:
// - `stdout` / `stderr`: console.log / info / debug, and console.error /
//   warn, each kept to STREAM_BYTES of the answer (`cut` says how many
//   more characters there were);
// - `value`: the completion value of the code (its last expression), shown
//   as JSON where it can be, else as text; null when undefined;
// - `error`: an uncaught exception's name, message and the code's own last
//   frames (`<code>:line:column`).
//
// The engine has no file API of its own, so the code gets a small one over
// the WASI filesystem: `readText(path)`, `readBytes(path)`, `listDir(path)`,
// `writeText(path, text)` (only where the config gives the tool writes).
// `args` and `stdin` are globals.

import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';

// What each printed stream keeps in memory while the code runs, in
// characters; the answer then keeps what fits in STREAM_BYTES.
const STREAM_CAP = 100000;
// Each printed stream's share of the answer, in bytes of its JSON (see
// run_python: the answer stays under the manifest's 256 KiB cap).
const STREAM_BYTES = 100000;
// The value's and the error's share, in bytes of JSON.
const TEXT_BYTES = 20000;
// How many of the code's own frames an error shows (the last ones).
const FRAMES = 5;
// Said after an error that comes from what the cell does not offer.
const CELL_HINT =
  '(run_js runs in a sandbox: only the workspace\'s folders, no network, no programs, no environment variables)';

class ToolError extends Error {
  constructor(tag, message) {
    super(message);
    this.payload = { tag, val: message };
  }
}

/** An error the code's file calls throw, with the cell's limits said. */
class CellError extends Error {
  constructor(message) {
    super(`${message}\n${CELL_HINT}`);
    this.name = 'CellError';
  }
}

// What the answer is built with, taken before any code runs: code that
// replaces `JSON.stringify`, `String.prototype.slice` or `Array.prototype.join`
// changes its own world, not how its answer is reported.
const apply = Reflect.apply;
const stringify = JSON.stringify;
const slice = String.prototype.slice;
const replace = String.prototype.replace;
const join = Array.prototype.join;
const push = Array.prototype.push;
const encode = TextEncoder.prototype.encode;
const encoder = new TextEncoder();
const isPromise = (value) => value instanceof Promise;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function jsonSize(text) {
  return apply(encode, encoder, [apply(stringify, JSON, [text])]).length;
}

/** `text` made sendable (a lone surrogate as U+FFFD) and cut to `budget`
 * bytes of JSON, and how many characters were cut. */
function fitted(text, budget) {
  text = apply(replace, String(text), [LONE_SURROGATE, '\uFFFD']);
  if (jsonSize(text) <= budget) return [text, 0];
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.floor((low + high + 1) / 2);
    if (jsonSize(apply(slice, text, [0, middle])) <= budget) low = middle;
    else high = middle - 1;
  }
  return [apply(slice, text, [0, low]), text.length - low];
}

function shorten(text) {
  const [kept, cut] = fitted(text, TEXT_BYTES);
  return cut ? `${kept}… (${cut} more characters)` : kept;
}

/** `show(thing)`, or a plain word when the code made that fail. */
function safely(show, thing, what) {
  try {
    return show(thing);
  } catch (e) {
    return `(${what} could not be shown)`;
  }
}

class Capped {
  constructor(cap) {
    this.cap = cap;
    this.parts = [];
    this.kept = 0;
    this.dropped = 0;
  }
  write(text) {
    const room = this.cap - this.kept;
    if (room > 0) {
      const part = apply(slice, text, [0, room]);
      apply(push, this.parts, [part]);
      this.kept += part.length;
    }
    this.dropped += Math.max(0, text.length - Math.max(room, 0));
  }
  text() {
    return apply(join, this.parts, ['']);
  }
}

/** How console.log shows one value. */
function shown(value) {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function' || typeof value === 'symbol') return String(value);
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : json;
  } catch {
    return String(value);
  }
}

/** The preopened directory that holds `path`, and the path inside it. */
function resolve(path) {
  if (typeof path !== 'string' || !path) throw new TypeError('a path must be a non-empty string');
  const relative = path.replace(/^\/+/, '') || '.';
  let best = null;
  for (const [dir, name] of getDirectories()) {
    if (name === '.') {
      best ??= [dir, relative];
    } else if (relative === name || relative.startsWith(name + '/')) {
      return [dir, relative.slice(name.length).replace(/^\/+/, '') || '.'];
    }
  }
  if (!best) throw new CellError('run_js was given no file-system access');
  return best;
}

/** Runs a WASI file operation on `path`, its errors said plainly. */
function onFile(path, what, operation) {
  const [dir, rel] = resolve(path);
  try {
    return operation(dir, rel);
  } catch (e) {
    const code = e?.payload ?? String(e);
    const why = {
      'no-entry': 'no such file or folder',
      'not-permitted': 'not permitted (outside the workspace, or read-only)',
      access: 'not permitted (outside the workspace, or read-only)',
      'read-only': 'the workspace is read-only for run_js',
      'is-directory': 'it is a folder',
      'not-directory': 'it is not a folder',
      exist: 'it already exists',
    }[code] ?? code;
    throw new CellError(`cannot ${what} ${path}: ${why}`);
  }
}

function readBytes(path) {
  return onFile(path, 'read', (dir, rel) => {
    const fd = dir.openAt({ symlinkFollow: true }, rel, {}, { read: true });
    const size = Number(fd.stat().size);
    const data = new Uint8Array(size);
    let offset = 0;
    while (offset < size) {
      const [chunk, eof] = fd.read(BigInt(size - offset), BigInt(offset));
      data.set(chunk.subarray(0, size - offset), offset);
      offset += chunk.length;
      if (eof || chunk.length === 0) break;
    }
    return data.subarray(0, Math.min(offset, size));
  });
}

function readText(path) {
  return new TextDecoder('utf-8').decode(readBytes(path));
}

function listDir(path = '.') {
  return onFile(path, 'list', (dir, rel) => {
    const folder = rel === '.' ? dir : dir.openAt({ symlinkFollow: true }, rel, { directory: true }, { read: true });
    const stream = folder.readDirectory();
    const names = [];
    for (let entry = stream.readDirectoryEntry(); entry; entry = stream.readDirectoryEntry()) {
      names.push(entry.name);
    }
    return names.sort();
  });
}

function writeText(path, text) {
  const data = new TextEncoder().encode(String(text));
  return onFile(path, 'write', (dir, rel) => {
    const fd = dir.openAt({ symlinkFollow: false }, rel, { create: true, truncate: true }, { write: true });
    let offset = 0;
    while (offset < data.length) {
      offset += Number(fd.write(data.subarray(offset), BigInt(offset)));
    }
    return data.length;
  });
}

/** The exception's text with the code's own last frames. */
function described(error) {
  if (!(error instanceof Error)) return `Uncaught ${shown(error)}`;
  const frames = String(error.stack ?? '')
    .split('\n')
    .filter((line) => line.includes('> eval:'))
    .map((line) => {
      const at = line.indexOf('@');
      const fn = at > 0 ? line.slice(0, at) : '';
      const place = line.slice(at + 1).replace(/^.*> eval:/, '<code>:');
      return fn ? `  at ${fn} (${place})` : `  at ${place}`;
    });
  // A syntax error has no frames of the code, only its place.
  if (!frames.length && error instanceof SyntaxError && typeof error.lineNumber === 'number') {
    frames.push(`  at <code>:${error.lineNumber}:${error.columnNumber}`);
  }
  return apply(join, [`${error.name}: ${error.message}`, ...frames.slice(0, FRAMES)], ['\n']);
}

export const tool = {
  call(argsText) {
    let parsed;
    try {
      parsed = JSON.parse(argsText);
    } catch (e) {
      throw new ToolError('invalid-args', `the arguments are not JSON: ${e.message}`);
    }
    const code = parsed?.code;
    if (typeof code !== 'string' || !code.trim()) {
      throw new ToolError('invalid-args', '`code` must be JavaScript source text, e.g. 1 + 1');
    }
    const stdout = new Capped(STREAM_CAP);
    const stderr = new Capped(STREAM_CAP);
    const line = (stream) => (...values) => stream.write(values.map(shown).join(' ') + '\n');
    globalThis.console = {
      log: line(stdout),
      info: line(stdout),
      debug: line(stdout),
      error: line(stderr),
      warn: line(stderr),
    };
    Object.assign(globalThis, {
      args: Array.isArray(parsed.args) ? parsed.args.map(String) : [],
      stdin: typeof parsed.stdin === 'string' ? parsed.stdin : '',
      readText,
      readBytes,
      listDir,
      writeText,
      // The engine has `fetch`; the cell has no network: said at once.
      fetch() {
        throw new CellError('fetch: no network');
      },
    });
    let value = null;
    let error = null;
    try {
      // Indirect eval: the code runs as a script of its own, in the global
      // scope, and its completion value is its last expression's.
      const result = (0, eval)(code);
      if (isPromise(result)) {
        value = 'a Promise: run_js does not wait for async code (the call ends when the script does); write it without await';
      } else if (result !== undefined) {
        value = safely(shown, result, 'the value');
      }
    } catch (e) {
      error = safely(described, e, 'the error');
    }
    const answer = { stdout: '', stderr: '', value: null, error: null, cut: null };
    const cut = {};
    for (const [name, stream] of [['stdout', stdout], ['stderr', stderr]]) {
      const [text, more] = fitted(safely(() => stream.text(), null, name), STREAM_BYTES);
      answer[name] = text;
      if (stream.dropped + more) cut[name] = stream.dropped + more;
    }
    if (value !== null) answer.value = shorten(value);
    if (error !== null) answer.error = shorten(error);
    if (cut.stdout || cut.stderr) answer.cut = cut;
    return apply(stringify, JSON, [answer]);
  },
};
