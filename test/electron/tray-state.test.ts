import { describe, expect, it, vi } from 'vitest';

import { apiAddressFor, type TrayActions, trayMenuTemplate } from '../../main/tray-menu.js';
import { trayStateFor } from '../../main/tray-state.js';

const actions = (): TrayActions => ({
  openPanel: vi.fn(),
  pause: vi.fn(),
  resume: vi.fn(),
  copyApiAddress: vi.fn(),
  quit: vi.fn(),
});

const labels = (items: ReturnType<typeof trayMenuTemplate>) => items.map((item) => item.label ?? `--${item.type}--`);

describe('tray state', () => {
  it('shows idle when nothing is queued or running', () => {
    expect(trayStateFor({ pending: 0, running: 0, paused: false })).toEqual({
      icon: 'idle',
      label: 'Idle',
      tooltip: 'Screenshot Appliance — Idle',
      paused: false,
    });
  });

  it('shows how many captures run and how many wait', () => {
    const state = trayStateFor({ pending: 5, running: 2, paused: false });
    expect(state.icon).toBe('capturing');
    expect(state.label).toBe('Capturing 2 · 5 waiting');
  });

  it('shows paused even while running jobs finish', () => {
    expect(trayStateFor({ pending: 3, running: 1, paused: true })).toMatchObject({
      icon: 'paused',
      label: 'Paused (finishing 1) · 3 waiting',
      paused: true,
    });
    expect(trayStateFor({ pending: 0, running: 0, paused: true }).label).toBe('Paused');
  });
});

describe('tray menu', () => {
  it('offers to pause a running queue and to resume a paused one', () => {
    const running = trayMenuTemplate(trayStateFor({ pending: 0, running: 1, paused: false }), actions());
    expect(labels(running)).toEqual([
      'Capturing 1',
      '--separator--',
      'Open Control Panel',
      'Pause Queue',
      'Copy API Address',
      '--separator--',
      'Quit Screenshot Appliance',
    ]);
    const paused = trayMenuTemplate(trayStateFor({ pending: 0, running: 0, paused: true }), actions());
    expect(labels(paused)).toContain('Resume Queue');
    expect(labels(paused)).not.toContain('Pause Queue');
  });

  it('calls the matching action for each item and keeps the status line inert', () => {
    const spies = actions();
    const items = trayMenuTemplate(trayStateFor({ pending: 0, running: 0, paused: true }), spies);
    const click = (label: string) => {
      const item = items.find((i) => i.label === label);
      (item?.click as () => void)();
    };
    click('Open Control Panel');
    click('Resume Queue');
    click('Copy API Address');
    click('Quit Screenshot Appliance');
    expect(spies.openPanel).toHaveBeenCalledOnce();
    expect(spies.resume).toHaveBeenCalledOnce();
    expect(spies.pause).not.toHaveBeenCalled();
    expect(spies.copyApiAddress).toHaveBeenCalledOnce();
    expect(spies.quit).toHaveBeenCalledOnce();
    expect(items[0]).toMatchObject({ enabled: false });
  });

  it('copies the public base URL when one is set, the server address otherwise, with /v1', () => {
    expect(apiAddressFor(null, 'http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/v1');
    expect(apiAddressFor('https://shots.example.test/', 'http://127.0.0.1:8080')).toBe('https://shots.example.test/v1');
    expect(apiAddressFor('', 'http://127.0.0.1:9000')).toBe('http://127.0.0.1:9000/v1');
  });
});
