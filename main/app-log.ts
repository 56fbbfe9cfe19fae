import fs from 'node:fs';
import path from 'node:path';

import { app } from 'electron';

import { lineLogger, type Logger } from '../server/logger.js';

/** Largest log kept before the next start moves it aside to main.old.log. */
const MAX_LOG_BYTES = 5_000_000;

/**
 * The desktop app's log: every line to stdout (for `npm start`) and appended to
 * `<logs>/main.log`, since an app started from the desktop has no terminal, each as
 * `LEVEL [component] message` (lineLogger). The file is closed when the app quits.
 */
export function setupAppLog(): Logger {
  const dir = app.getPath('logs');
  const file = path.join(dir, 'main.log');
  fs.mkdirSync(dir, { recursive: true });
  try {
    if (fs.statSync(file).size > MAX_LOG_BYTES) fs.renameSync(file, path.join(dir, 'main.old.log'));
  } catch {
    // no log yet
  }
  const stream = fs.createWriteStream(file, { flags: 'a', mode: 0o600 });
  stream.on('error', () => undefined);
  app.once('will-quit', () => stream.end());
  return lineLogger((line) => {
    console.log(line);
    if (stream.writable) stream.write(`${new Date().toISOString()} ${line}\n`);
  });
}
