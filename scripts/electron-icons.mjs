// Renders the desktop app's icons from SVG: build/icon.png (512×512, electron-builder derives
// the .ico and .icns from it) and the tray icons for each queue state at 1× and 2×.
// Run after changing the artwork: node scripts/electron-icons.mjs
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

// Viewfinder corners around a shutter: reads as "screenshot" at every size.
const corners = (stroke, width) =>
  `<g fill="none" stroke="${stroke}" stroke-width="${width}" stroke-linecap="round" stroke-linejoin="round">` +
  '<path d="M112 176V136a24 24 0 0 1 24-24h40"/><path d="M336 112h40a24 24 0 0 1 24 24v40"/>' +
  '<path d="M400 336v40a24 24 0 0 1-24 24h-40"/><path d="M176 400h-40a24 24 0 0 1-24-24v-40"/></g>';

const appIcon =
  '<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">' +
  '<defs><linearGradient id="bg" x1="0" y1="0" x2="1" y2="1">' +
  '<stop offset="0" stop-color="#4f46e5"/><stop offset="1" stop-color="#0ea5e9"/></linearGradient></defs>' +
  '<rect x="16" y="16" width="480" height="480" rx="104" fill="url(#bg)"/>' +
  corners('#ffffff', 28) +
  '<circle cx="256" cy="256" r="72" fill="#ffffff"/><circle cx="256" cy="256" r="34" fill="#4f46e5"/>' +
  '</svg>';

// Tray glyphs are drawn on the same 512 grid and scaled down; strokes are thick so 16 px stays legible.
const trayCenter = {
  idle: (color) => `<circle cx="256" cy="256" r="56" fill="none" stroke="${color}" stroke-width="40"/>`,
  capturing: (color) => `<circle cx="256" cy="256" r="92" fill="${color}"/>`,
  paused: (color) =>
    `<rect x="196" y="170" width="44" height="172" rx="14" fill="${color}"/>` +
    `<rect x="272" y="170" width="44" height="172" rx="14" fill="${color}"/>`,
};
const trayColor = { idle: '#64748b', capturing: '#2563eb', paused: '#d97706' };

const traySvg = (state) =>
  '<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="64 64 384 384">' +
  corners(trayColor[state], 44) +
  trayCenter[state](trayColor[state]) +
  '</svg>';

async function render(svg, size, file) {
  await sharp(Buffer.from(svg), { density: 300 }).resize(size, size).png().toFile(path.join(root, file));
  console.log(`wrote ${file} (${size}×${size})`);
}

await mkdir(path.join(root, 'build', 'tray'), { recursive: true });
await render(appIcon, 512, 'build/icon.png');
for (const state of Object.keys(trayCenter)) {
  await render(traySvg(state), 16, `build/tray/${state}.png`);
  await render(traySvg(state), 32, `build/tray/${state}@2x.png`);
}
