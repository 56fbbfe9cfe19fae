import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a corpus page shows that fixture pages rarely do. */
export type CorpusTrait =
  | 'no-viewport'
  | 'rtl'
  | 'cjk'
  | 'web-fonts'
  | 'sticky'
  | 'search-worker'
  | 'long'
  | 'content-visibility'
  | 'scroll-at-load'
  | 'sphinx'
  | 'mdbook';

/** One page of the corpus, as scripts/corpus.json lists it. */
export interface CorpusPage {
  /** Short name used in tables and test names. */
  id: string;
  /** The Debian package it comes from. */
  package: string;
  /** Its address on the corpus server: the path it has once the package is unpacked. */
  path: string;
  traits: CorpusTrait[];
}

interface CorpusList {
  packages: Array<{ name: string; tested: string; asset?: boolean; extract?: string[] }>;
  pages: CorpusPage[];
}

/** scripts/corpus.json, found from this module's place in the source tree or in dist/ (the benchmark). */
function corpusListFile(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'scripts', 'corpus.json');
    if (fs.existsSync(file)) return file;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('scripts/corpus.json not found above test/helpers/corpus.ts');
    dir = parent;
  }
}

/** The pinned list of packages and pages (scripts/corpus.json), read from the source tree. */
export function corpusList(): CorpusList {
  return JSON.parse(fs.readFileSync(corpusListFile(), 'utf8')) as CorpusList;
}

/** The corpus' cache directory, as scripts/corpus.mjs chooses it. */
export function corpusDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SCREENSHOT_CORPUS_DIR || path.join(os.homedir(), '.cache', 'screenshot-appliance', 'corpus');
}

/**
 * The unpacked packages' root directory; throws, saying how to fetch it, when the corpus is not
 * there (scripts/setup.sh fetches it, and so .ci/run).
 */
export function corpusRoot(env: NodeJS.ProcessEnv = process.env): string {
  const root = path.join(corpusDir(env), 'root');
  if (!fs.existsSync(path.join(root, '.corpus-stamp'))) {
    throw new Error(`The real-page corpus is not in ${root}: run \`node scripts/corpus.mjs\` (scripts/setup.sh does) to fetch it`);
  }
  return root;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.eot': 'application/vnd.ms-fontobject',
  '.txt': 'text/plain; charset=utf-8',
};

export interface CorpusServer {
  /** e.g. "http://127.0.0.1:41234" */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the unpacked corpus read-only on 127.0.0.1, as a web server would serve
 * /usr/share/doc: files by extension, a directory by its index.html, symlinks followed only
 * while they stay inside `root`.
 */
export async function startCorpusServer(root: string = corpusRoot()): Promise<CorpusServer> {
  const realRoot = fs.realpathSync(root);
  const server = http.createServer((req, res) => {
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed');
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://corpus').pathname);
    } catch {
      return send(400, 'bad path');
    }
    let file: string;
    try {
      file = fs.realpathSync(path.join(realRoot, pathname));
      if (file !== realRoot && !file.startsWith(realRoot + path.sep)) return send(404, 'not found');
      if (fs.statSync(file).isDirectory()) file = fs.realpathSync(path.join(file, 'index.html'));
    } catch {
      return send(404, 'not found');
    }
    const type = CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    res.writeHead(200, { 'content-type': type, 'content-length': fs.statSync(file).size, 'cache-control': 'no-cache' });
    if (req.method === 'HEAD') return res.end();
    fs.createReadStream(file).on('error', () => res.destroy()).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
