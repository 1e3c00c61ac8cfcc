// `{{name}}`: counts the lines, words and bytes of a UTF-8 text file of the
// workspace. Args `{"path": "notes/todo.md"}`; result
// `{"path": ..., "lines": N, "words": N, "bytes": N}`.
//
// ComponentizeJS (StarlingMonkey) has no file API of its own (no `fs`), so the
// tool reads files through the WASI filesystem imports directly: build.mjs
// adds `wasi:filesystem/preopens` and `wasi:filesystem/types` to the world.
// The workspace root is the preopened directory `.` (further roots appear
// under their names); a path outside them (`../x`, `/etc/passwd`) is refused
// by the sandbox.
//
// Errors: throwing an object that has a `payload` property makes the call
// return `err(payload)`, where payload is the WIT `error` variant as
// `{ tag: 'not-found', val: 'message' }`. Any other Error thrown would trap,
// so `call` turns unexpected errors into `failed`.

import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';

class ToolError extends Error {
  constructor(tag, message) {
    super(message);
    this.payload = { tag, val: message };
  }
}

/** The preopened directory that holds `path`, and the path inside it. */
function resolve(path) {
  let best = null;
  for (const [dir, name] of getDirectories()) {
    if (name === '.') {
      best ??= [dir, path];
    } else if (path === name || path.startsWith(name + '/')) {
      return [dir, path.slice(name.length).replace(/^\/+/, '') || '.'];
    }
  }
  if (!best) throw new ToolError('denied', 'the tool was given no file-system access');
  return best;
}

/** The whole file as bytes, or a ToolError. */
function readFile(path) {
  try {
    const [dir, rel] = resolve(path);
    const fd = dir.openAt({ symlinkFollow: true }, rel, {}, { read: true });
    const stat = fd.stat();
    if (stat.type === 'directory') throw new ToolError('failed', `${path} is a directory, not a file`);
    const size = Number(stat.size);
    const data = new Uint8Array(size);
    let offset = 0;
    for (;;) {
      const [chunk, eof] = fd.read(BigInt(Math.max(size - offset, 65536)), BigInt(offset));
      if (offset + chunk.length > size) throw new ToolError('failed', `${path}: changed while being read`);
      data.set(chunk, offset);
      offset += chunk.length;
      if (eof || chunk.length === 0 || offset === size) break;
    }
    return data.subarray(0, offset);
  } catch (e) {
    if (e instanceof ToolError) throw e;
    // Errors of WASI imports carry the `error-code` as `payload`.
    const code = e?.payload ?? String(e);
    switch (code) {
      case 'no-entry':
        throw new ToolError('not-found', `${path}: no such file (paths are relative to the workspace root)`);
      case 'not-permitted':
      case 'access':
        throw new ToolError('denied', `${path}: not accessible: paths are relative to the workspace root and cannot leave it`);
      default:
        throw new ToolError('failed', `${path}: cannot read it: ${code}`);
    }
  }
}

function count(path) {
  if (typeof path !== 'string') throw new ToolError('invalid-args', '`path` must be a string');
  if (!path.trim()) {
    throw new ToolError('invalid-args', '`path` is empty: give a workspace-relative file path, e.g. notes/todo.md');
  }
  const data = readFile(path);
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw new ToolError('invalid-args', `${path} is not UTF-8 text`);
  }
  // Lines: newlines, plus one for a last line without one. Words: runs of
  // characters other than ASCII whitespace (space, \t, \n, \r, \v, \f), like
  // the Rust and Python templates. The engine's own regular expressions do
  // the scanning: a loop over bytes in JavaScript would run in its
  // interpreter, several times slower.
  const newlines = text.match(/\n/g)?.length ?? 0;
  const lines = newlines + (text.length > 0 && !text.endsWith('\n') ? 1 : 0);
  const words = text.match(/[^ \t\n\r\v\f]+/g)?.length ?? 0;
  return { path, lines, words, bytes: data.length };
}

export const tool = {
  call(args) {
    try {
      let parsed;
      try {
        parsed = JSON.parse(args);
      } catch (e) {
        throw new ToolError('invalid-args', `the arguments are not JSON: ${e.message}`);
      }
      return JSON.stringify(count(parsed?.path));
    } catch (e) {
      if (e instanceof ToolError) throw e;
      throw new ToolError('failed', `unexpected error: ${e?.message ?? e}`);
    }
  },
};
