import { type ChildProcess,spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export const CLI = path.resolve('dist/server/cli.js');

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  firstLine: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs `screenshot-appliance serve` from the build and waits for its first line; `env` is added to the test's environment. */
export async function serve(args: string[], timeoutMs = 30_000, env: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = readline.createInterface({ input: child.stdout! });
  const firstLine = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no output after ${timeoutMs} ms: ${err}`)), timeoutMs);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(line);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${err}`));
    });
  });
  const match = /listening on (http:\/\/[^\s]+)/.exec(firstLine);
  if (!match) throw new Error(`unexpected first line: ${firstLine}`);
  return { child, url: match[1], firstLine, stderr: () => err, exited };
}

/** Runs the CLI to completion. */
export function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
