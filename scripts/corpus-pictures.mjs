#!/usr/bin/env node
// Side-by-side pictures of corpus cases for docs/fidelity.md: the service's capture on the left,
// the reference's on the right, each scaled to 360 px wide (a full page cut to its first
// `rows` device pixels first), labelled, as a small palette PNG.
// `CORPUS_PICTURES=dir npx vitest run test/capture/corpus-conformance.test.ts` keeps every
// case's two pictures in dir; then
// `node scripts/corpus-pictures.mjs dir docs/img/fidelity CASE[:rows] ...`, where CASE is a file
// name without .service.png, e.g. handbook-ja_mobile_viewport or git_mobile_full_page:7600.
import fs from 'node:fs';
import path from 'node:path';

import sharp from 'sharp';

const [from, to, ...cases] = process.argv.slice(2);
if (!from || !to || cases.length === 0) {
  console.error('usage: node scripts/corpus-pictures.mjs PICTURES_DIR OUT_DIR CASE[:rows] ...');
  process.exit(1);
}
const WIDTH = 360;
const GAP = 12;
const LABEL = 28;

async function side(file, rows) {
  const image = sharp(file, { limitInputPixels: false });
  const { width, height } = await image.metadata();
  // A reference wider than the service's picture (a phone's full page) is scaled to the same
  // width so that both show the same part of the page.
  const cut = rows ? Math.min(height, Math.round((rows * width) / 1170)) : height;
  return sharp(file, { limitInputPixels: false }).extract({ left: 0, top: 0, width, height: cut }).resize({ width: WIDTH }).png().toBuffer();
}

const label = (text) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${LABEL}"><rect width="100%" height="100%" fill="#fff"/>` +
      `<text x="4" y="20" font-family="DejaVu Sans, sans-serif" font-size="16" fill="#000">${text}</text></svg>`,
  );

fs.mkdirSync(to, { recursive: true });
for (const spec of cases) {
  const [name, rowsText] = spec.split(':');
  const rows = rowsText ? Number(rowsText) : undefined;
  const [service, reference] = await Promise.all(
    ['service', 'reference'].map((s) => side(path.join(from, `${name}.${s}.png`), rows)),
  );
  const heights = await Promise.all([service, reference].map(async (b) => (await sharp(b).metadata()).height));
  const out = path.join(to, `${name.replaceAll('_', '-')}.png`);
  await sharp({ create: { width: 2 * WIDTH + GAP, height: LABEL + Math.max(...heights), channels: 3, background: '#bbb' } })
    .composite([
      { input: label('service'), left: 0, top: 0 },
      { input: label('reference (plain playwright)'), left: WIDTH + GAP, top: 0 },
      { input: service, left: 0, top: LABEL },
      { input: reference, left: WIDTH + GAP, top: LABEL },
    ])
    .png({ palette: true, colours: 64, compressionLevel: 9 })
    .toFile(out);
  console.log(`${out}: ${Math.round(fs.statSync(out).size / 1024)} KiB`);
}
