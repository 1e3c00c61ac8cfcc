// Builds {{name}}.wasm from tool.js: `node build.mjs` (or `npm run build`).
//
// The tool's world is `tool-component` of wit/tool.wit, extended with the
// WASI filesystem imports that tool.js uses. Their WIT (WASI 0.2.12) comes
// from the copy bundled in @bytecodealliance/jco, which componentize-js
// depends on. Everything is assembled in a temporary folder; wit/ is not
// changed.
import { componentize } from '@bytecodealliance/componentize-js';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, 'package.json'));
// jco's package.json is not exported: find its root from its main module.
const jco = require.resolve('@bytecodealliance/jco').replace(/[\\/]dist[\\/][^\\/]*$/, '');
const wasiWit = join(jco, 'lib', 'wit', 'builtin', '0.2.12');

const wit = await mkdtemp(join(tmpdir(), '{{name}}-wit-'));
try {
  const toolWit = await readFile(join(here, 'wit', 'tool.wit'), 'utf8');
  await writeFile(join(wit, 'tool.wit'), toolWit);
  const pkg = toolWit.match(/^\s*package\s+([^;]+);/m)[1];
  await writeFile(
    join(wit, 'js.wit'),
    `package ${pkg};
world tool-component-js {
  include tool-component;
  import wasi:filesystem/preopens@0.2.12;
  import wasi:filesystem/types@0.2.12;
}
`,
  );
  for (const p of ['filesystem', 'io', 'clocks']) {
    await cp(join(wasiWit, `wasi-${p}`), join(wit, 'deps', p), { recursive: true });
  }

  const { component } = await componentize({
    sourcePath: join(here, 'tool.js'),
    witPath: wit,
    worldName: 'tool-component-js',
    // No outgoing HTTP (`fetch`) and no incoming-request handler: the tool
    // reads files only. Keep 'stdio' (console.log and uncaught errors go to
    // the logs), 'random' and 'clocks'.
    disableFeatures: ['http', 'fetch-event'],
  });
  await writeFile(join(here, '{{name}}.wasm'), component);
  console.log(`wrote {{name}}.wasm (${component.length} bytes)`);
} finally {
  await rm(wit, { recursive: true, force: true });
}
