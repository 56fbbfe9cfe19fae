/** How the capture command shows its jobs while they run. */
export interface ProgressView {
  update(device: string, status: string, progress: number, note?: string): void;
  /** Leaves the display as it is, the cursor below it. */
  finish(): void;
}

const BAR_WIDTH = 24;

/**
 * On a terminal: one line per device with a bar, redrawn in place. Elsewhere (a pipe, a log
 * file, CI): a plain line whenever a device's state or progress changes, never a control code.
 */
export function progressView(out: NodeJS.WritableStream & { isTTY?: boolean }, devices: readonly string[]): ProgressView {
  const width = Math.max(...devices.map((d) => d.length));
  const states = new Map(devices.map((d) => [d, { status: 'pending', progress: 0, note: '' }]));
  if (!out.isTTY) {
    return {
      update(device, status, progress, note = '') {
        const last = states.get(device)!;
        if (last.status === status && last.progress === progress && last.note === note) return;
        states.set(device, { status, progress, note });
        out.write(`${device}: ${status} ${progress}%${note ? ` ${note}` : ''}\n`);
      },
      finish() {},
    };
  }
  let drawn = false;
  const draw = () => {
    if (drawn) out.write(`\x1b[${devices.length}A`);
    drawn = true;
    for (const device of devices) {
      const { status, progress, note } = states.get(device)!;
      const filled = Math.round((progress / 100) * BAR_WIDTH);
      const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
      out.write(`\x1b[2K${device.padEnd(width)} ${bar} ${String(progress).padStart(3)}% ${status}${note ? ` ${note}` : ''}\n`);
    }
  };
  draw();
  return {
    update(device, status, progress, note = '') {
      states.set(device, { status, progress, note });
      draw();
    },
    finish() {},
  };
}
