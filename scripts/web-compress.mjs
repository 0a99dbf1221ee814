// Writes a brotli (.br) and a gzip (.gz) copy beside each text file of the built web app, at the
// highest levels, once per build: the service then sends them by Accept-Encoding without
// compressing per request (src/system/web-app.ts). Uncompressed, the first page was 950 KB of
// JavaScript and CSS, a white page for 5 s on a slow mobile link (issue 42).
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** Text formats; images and fonts of the build are compressed already. */
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|map|webmanifest)$/;

const dir = resolve(
  process.argv[2] ??
    process.env.WEB_OUT_DIR ??
    join(dirname(fileURLToPath(import.meta.url)), '../web/dist'),
);

function* files(folder) {
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else yield path;
  }
}

let before = 0;
let after = 0;
for (const file of [...files(dir)]) {
  if (!COMPRESSIBLE.test(file)) continue;
  const content = readFileSync(file);
  const variants = {
    br: brotliCompressSync(content, {
      params: {
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: content.length,
      },
    }),
    gz: gzipSync(content, { level: 9 }),
  };
  for (const [extension, compressed] of Object.entries(variants)) {
    // A copy no smaller than the file is not worth a header: the file is sent as it is.
    if (compressed.length < content.length) writeFileSync(`${file}.${extension}`, compressed);
    else rmSync(`${file}.${extension}`, { force: true });
  }
  before += content.length;
  after += Math.min(variants.br.length, content.length);
}
console.log(
  `web app: precompressed ${(before / 1024).toFixed(0)} KB of text to ` +
    `${(after / 1024).toFixed(0)} KB with brotli (gzip beside it)`,
);
