import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { DEVTOOLS_MESSAGE_MAX_BYTES, OVERSIZED_ANSWER } from '../pipeline/answer-bounds.js';

/**
 * A wrapper between playwright and Chromium's DevTools pipe that bounds every message the
 * browser sends before playwright sees it. playwright starts the wrapper as if it were Chromium;
 * the wrapper starts Chromium, passes playwright's commands through as they come, and holds each
 * of the browser's messages until its end: a message up to `maxBytes` goes on whole, a longer one
 * never does. An answer to a command is replaced by an error answer to the same command (the
 * command fails, the browser goes on); an event is dropped (a console call, a title no one is
 * waiting for). A message the wrapper cannot tell apart kills the browser: playwright sees it
 * go, as after a crash, never the process.
 */
export class PipeGuard {
  private constructor(
    /** The executable to hand playwright in place of Chromium's. */
    readonly executablePath: string,
    private readonly dir: string,
  ) {}

  /** Writes the wrapper for `chromiumPath` into a private temporary directory. */
  static async create(chromiumPath: string, maxBytes = DEVTOOLS_MESSAGE_MAX_BYTES): Promise<PipeGuard> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'screenshot-pipe-guard-'));
    const script = path.join(dir, 'pipe-guard.cjs');
    const executable = path.join(dir, 'chromium');
    await fs.writeFile(script, `'use strict';\n(${guardPipe.toString()})(${JSON.stringify(maxBytes)}, ${JSON.stringify(OVERSIZED_ANSWER)});\n`, { mode: 0o600 });
    // ELECTRON_RUN_AS_NODE: in the desktop app process.execPath is Electron's binary.
    const shell = `#!/bin/sh\nELECTRON_RUN_AS_NODE=1 exec ${quote(process.execPath)} ${quote(script)} ${quote(chromiumPath)} "$@"\n`;
    await fs.writeFile(executable, shell, { mode: 0o700 });
    return new PipeGuard(executable, dir);
  }

  async dispose(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The wrapper's program, run by node as it is (so it is written in plain JavaScript that needs
 * nothing but node's own modules): `node pipe-guard.cjs CHROMIUM ARGS…`. fd 3 carries the
 * controller's commands to the browser, fd 4 the browser's messages back, each ended by a NUL,
 * as Chromium's --remote-debugging-pipe speaks.
 */
export function guardPipe(maxBytes: number, oversizedAnswer: string): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  const net = require('node:net') as typeof import('node:net');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const [chromium, ...args] = process.argv.slice(2);
  // Chromium leads a process group of its own, as when playwright starts it, so killing that
  // group (BrowserSlot.kill) ends the browser and all its children; this process then exits with
  // it. Killed itself, this process closes the pipe, on which Chromium exits.
  const child = spawn(chromium, args, { stdio: ['inherit', 'inherit', 'inherit', 'pipe', 'pipe'], detached: true });
  const fromController = new net.Socket({ fd: 3, readable: true, writable: false });
  const toController = new net.Socket({ fd: 4, readable: false, writable: true });
  const toBrowser = child.stdio[3] as import('node:net').Socket;
  const fromBrowser = child.stdio[4] as import('node:net').Socket;
  fromController.pipe(toBrowser);
  for (const stream of [fromController, toController, toBrowser, fromBrowser]) stream.on('error', () => undefined);
  child.on('exit', (code, signal) => {
    toController.end(() => process.exit(code ?? (signal ? 1 : 0)));
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
  const KEEP = 256;

  // The message being read: its pieces while it is within the bound, else its first and last bytes.
  let held: Buffer[] = [];
  let heldBytes = 0;
  let over = false;
  let head = Buffer.alloc(0);
  let tail = Buffer.alloc(0);

  const oversized = () => {
    const start = head.toString('latin1');
    const end = tail.toString('latin1');
    const id = /^\{"id":(\d+),/.exec(start)?.[1];
    const sessionId = /,"sessionId":"([0-9A-Za-z._-]{1,128})"\}$/.exec(end)?.[1];
    const method = /^\{"method":"([A-Za-z]+\.[A-Za-z]+)"/.exec(start)?.[1];
    if (id !== undefined) {
      const answer: Record<string, unknown> = {
        id: Number(id),
        error: { code: -32000, message: `${oversizedAnswer} (${heldBytes} bytes, more than ${maxBytes})` },
      };
      if (sessionId) answer.sessionId = sessionId;
      toController.write(JSON.stringify(answer) + '\0');
      process.stderr.write(`pipe guard: an answer of ${heldBytes} bytes was replaced by an error\n`);
    } else if (method) {
      process.stderr.write(`pipe guard: a ${method} event of ${heldBytes} bytes was dropped\n`);
    } else {
      process.stderr.write(`pipe guard: a message of ${heldBytes} bytes could not be read; stopping the browser\n`);
      child.kill('SIGKILL');
    }
  };

  fromBrowser.on('data', (chunk: Buffer) => {
    toController.cork();
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(0, start);
      const piece = end === -1 ? chunk.subarray(start) : chunk.subarray(start, end);
      if (!over && heldBytes + piece.length > maxBytes) {
        over = true;
        head = Buffer.concat([...held, piece.subarray(0, KEEP)]).subarray(0, KEEP);
        held = [];
      }
      heldBytes += piece.length;
      if (over) {
        const joined = Buffer.concat([tail, piece.subarray(Math.max(0, piece.length - KEEP))]);
        tail = joined.subarray(Math.max(0, joined.length - KEEP));
      } else {
        held.push(piece);
      }
      if (end === -1) break;
      if (over) oversized();
      else {
        for (const part of held) toController.write(part);
        toController.write('\0');
      }
      held = [];
      heldBytes = 0;
      over = false;
      head = Buffer.alloc(0);
      tail = Buffer.alloc(0);
      start = end + 1;
    }
    toController.uncork();
  });
}
