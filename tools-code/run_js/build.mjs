// Builds run_js.wasm from tool.js with ComponentizeJS: `node build.mjs`
// in a folder that holds this file, tool.js, wit/tool.wit (the tool
// contract, tools-wasm/wit/tool.wit) and node_modules with the pinned
// packages, as install.sh lays it out. The world is the tool world with the
// WASI filesystem imports tool.js uses; their WIT comes from the copy
// bundled in @bytecodealliance/jco.
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

const wit = await mkdtemp(join(tmpdir(), 'run_js-wit-'));
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
    // No outgoing HTTP and no request handler: the code has no network.
    disableFeatures: ['http', 'fetch-event'],
  });
  await writeFile(join(here, 'run_js.wasm'), component);
  console.error(`wrote run_js.wasm (${component.length} bytes)`);
} finally {
  await rm(wit, { recursive: true, force: true });
}
