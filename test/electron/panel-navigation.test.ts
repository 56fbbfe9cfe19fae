import { describe, expect, it } from 'vitest';

import { isPanelNavigation, isPanelOrigin, panelOrigin, popupDecision } from '../../main/panel-navigation.js';

const adminUrl = 'http://127.0.0.1:8080/admin/#token=abc';
const origin = panelOrigin(adminUrl);

describe('panel window navigation', () => {
  it('takes the origin from the admin address without the token', () => {
    expect(origin).toBe('http://127.0.0.1:8080');
  });

  it('allows pages of the panel on the server origin', () => {
    expect(isPanelNavigation(adminUrl, origin)).toBe(true);
    expect(isPanelNavigation('http://127.0.0.1:8080/admin/jobs?status=failed', origin)).toBe(true);
    expect(isPanelNavigation('http://127.0.0.1:8080/admin', origin)).toBe(true);
  });

  it('refuses other sites, other ports, other schemes and other paths of the server', () => {
    for (const target of [
      'https://example.test/admin/',
      'http://127.0.0.1:8081/admin/',
      'http://localhost:8080/admin/',
      'https://127.0.0.1:8080/admin/',
      'http://127.0.0.1:8080/v1/screenshot',
      'http://127.0.0.1:8080/administrator/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'not a url',
    ]) {
      expect(isPanelNavigation(target, origin), target).toBe(false);
    }
  });

  it('recognises the panel origin however Chromium writes it', () => {
    expect(isPanelOrigin('http://127.0.0.1:8080/', origin)).toBe(true);
    expect(isPanelOrigin('http://127.0.0.1:8080', origin)).toBe(true);
    expect(isPanelOrigin('http://127.0.0.1:8081/', origin)).toBe(false);
    expect(isPanelOrigin('', origin)).toBe(false);
  });

  it('opens same-origin pop-ups in the app, web links in the system browser, nothing else', () => {
    expect(popupDecision('http://127.0.0.1:8080/files/abc.png', origin)).toBe('child-window');
    expect(popupDecision('https://example.test/page', origin)).toBe('system-browser');
    expect(popupDecision('file:///etc/passwd', origin)).toBe('deny');
    expect(popupDecision('javascript:alert(1)', origin)).toBe('deny');
    expect(popupDecision('about:blank', origin)).toBe('deny');
  });
});
