import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const NAME = 'screenshot-appliance';

/**
 * `screenshot-appliance <version>`, the version of the package the service runs from (its
 * package.json, found above this file whether it runs from `server/` or `dist/server/`): what an
 * evidence bundle names as the software that made it.
 */
export function serviceSoftware(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === NAME && manifest.version) return `${NAME} ${manifest.version}`;
    } catch {
      // not here: one level up
    }
    dir = path.dirname(dir);
  }
  return NAME;
}
